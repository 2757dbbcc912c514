#!/usr/bin/env python3
"""Run 71: fused mode at its own model default (7b484a9) against the old default (the point's
configuration, 1 chunk per rank in the stage order), each point's speedup over its own run's T_seq.
Old: run 69's `one/` (TP-8 and TP-4 f16, TP-8 f32) and run 70's call 3 `one/` (TP-4 f32); new: run 71.
   python3 docs/results/run71/compare.py OLD_DIR... -- NEW_DIR...   (folders of POINT-DTYPE.txt)"""
import pathlib, re, sys

def speedups(dirs):
    out = {}
    for d in dirs:
        for f in pathlib.Path(d).glob("*.txt"):
            rows = {}
            for line in f.read_text().splitlines():
                m = re.match(r"^(sequential|fused)\s+\S+\s+([\d.]+)\s+\[[^\]]*\]\s+([\d.]+)", line)
                if m:
                    rows[m.group(1)] = (float(m.group(2)), float(m.group(3)))
            cfg = re.search(r"\[(\w+)\] fused: chunks (\d+)", f.read_text())
            if "fused" in rows:
                out[f.stem] = (rows["fused"][1], cfg.group(2) if cfg else "1", rows["sequential"][0])
    return out

args = sys.argv[1:]
cut = args.index("--")
old, new = speedups(args[:cut]), speedups(args[cut + 1:])
print("| point | old x seq | new x seq | new chunks | change |")
print("|---|---|---|---|---|")
for k in sorted(new, key=lambda k: (k.split("-")[-1], -int(k.split("-tp")[1].split("-")[0]), k)):
    o = old.get(k)
    n = new[k]
    print(f"| {k} | {o[0]:.3f} | {n[0]:.3f} | {n[1]} | {n[0] - o[0]:+.3f} |" if o else f"| {k} | - | {n[0]:.3f} | {n[1]} | - |")
