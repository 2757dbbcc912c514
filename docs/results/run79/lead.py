#!/usr/bin/env python3
"""Issue 39, the least lead (05f23e8): every tuned choice that ran with its table in runs 74-79
(one H200; run 74's binary the first with both slowest-figure rules, 88b6660 and 206adee), the
tuner's speedup (as tuned.txt rounds it to three places: a choice read 1.0046x counts as read
1.005x) against the run's (each run's tuned.txt, run 75's
tuned.py), split at a lead of 0.5%. run 78's palm-ipbwd-tp2 f16 is left out: a point without room to overlap,
searched under rules f074ab8 and cd4b5ed replaced (it is unsearched since, run 79 call 1).
    python3 docs/results/run79/lead.py     (from the repository's root)"""
import re

pairs = []
for run in ["run74", "run75", "run76", "run77", "run78", "run79"]:
    for line in open(f"docs/results/{run}/tuned.txt"):
        if not line.startswith("|"):
            continue
        cells = [c.strip() for c in line.split("|")]
        preset, dtype = cells[2], cells[3]
        if run == "run78" and preset == "palm-ipbwd-tp2":
            continue
        for m in re.finditer(r"([0-9]\.[0-9]+) -> ([0-9]\.[0-9]+)", line):
            pairs.append((run, preset, dtype, float(m.group(1)), float(m.group(2))))

print(f"{len(pairs)} tuned choices run")
for name, part in [
    ("read under 1.005", [p for p in pairs if p[3] < 1.005]),
    ("read 1.005 or more", [p for p in pairs if p[3] >= 1.005]),
]:
    runs = sorted(p[4] for p in part)
    below = [p for p in part if p[4] < 1.0]
    print(f"{name}: {len(part)}, ran {runs[0]:.4f}-{runs[-1]:.4f}, {len(below)} below 1.0")
    for p in below:
        print(f"  {p[0]} {p[1]} {p[2]}: read {p[3]:.3f}, ran {p[4]:.4f}")
d = sorted(p[4] - p[3] for p in pairs)
print(f"run minus tuner: {d[0]:+.4f} to {d[-1]:+.4f}, median {d[len(d) // 2]:+.4f}")
