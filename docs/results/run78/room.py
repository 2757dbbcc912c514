"""Runs 72-78's run reports (`t3 run --tune table.json --verbose`, one per preset and dtype) that
fail the room check (T_seq - ideal within noise), and any mode that ran faster than sequential on
them. Usage: extract each docs/results/runN/callK/all.tgz to /tmp/scan/runN/callK, then
python3 room.py /tmp/scan"""
import glob
import os
import re
import sys

root = sys.argv[1] if len(sys.argv) > 1 else "/tmp/scan"
files = sorted(glob.glob(f"{root}/run*/call*/w/*/*-f*.txt"))
without = 0
for f in files:
    t = open(f).read()
    if "CHECK FAILED: T_seq - ideal > noise" not in t:
        continue
    without += 1
    speedups = {}
    for m in ["host", "encoded", "fused"]:
        row = re.search(r"^" + m + r"\s+(tracked|planned|none)\s+[\d.]+\s+\[[^\]]*\]\s+([\d.]+)", t, re.M)
        if row:
            speedups[m] = float(row.group(2))
    faster = {m: s for m, s in speedups.items() if s > 1.0}
    if faster:
        print(os.path.relpath(f, root), faster)
print(f"{without} of {len(files)} run reports without room to overlap; any mode faster than sequential on them listed above")
