#!/usr/bin/env python3
"""Run 75's table: run 72's tuned.py with each run's speedup taken from its medians (sequential's
over the mode's, four places, so a mode a hair below sequential is not rounded up to 1.000), and a
folder of runs whose table was tuned in another folder named as RUNS=TABLEDIR.
  python3 tuned.py DIR[=TABLEDIR]...   (DIR: PRESET-DTYPE.txt; TABLEDIR, else DIR: tune.txt, table.json)"""
import json, re, sys, os

ROW = re.compile(r'^(sequential|host|encoded|fused) +[a-z]+ +([0-9.]+) +\[')
SKIP = re.compile(r'^(host|encoded|fused) +[a-z]+ +skipped: (.*)')
rows, gaps, below, skipped = [], [], [], []
for arg in sys.argv[1:]:
    d, _, td = arg.partition('=')
    td = td or d
    t = json.load(open(os.path.join(td, 'table.json')))
    by = {p['workload']: p for p in t['points']}
    same = dict(re.findall(r'^(\S+): the same point as (\S+), tuned above',
                           open(os.path.join(td, 'tune.txt')).read(), re.M))
    call = d
    for f in sorted(os.listdir(d)):
        m = re.match(r'(.+)-(f16|f32)\.txt$', f)
        if not m:
            continue
        preset, dtype = m.groups()
        ms, skips = {}, {}
        for line in open(os.path.join(d, f)):
            r, s = ROW.match(line), SKIP.match(line)
            if r:
                ms[r.group(1)] = float(r.group(2))
            elif s:
                skips[s.group(1)] = s.group(2)
        if 'sequential' not in ms:
            rows.append(f"| {call} | {preset} | {dtype} | not run (the call's time ran out) | | |")
            continue
        p = by.get(preset) or by.get(same.get(preset))
        cells = []
        for mode in ('host', 'encoded', 'fused'):
            if mode in skips:
                cells.append('cannot run')
                skipped.append(f"{preset} {dtype} {mode}: {skips[mode][:60]}...")
                continue
            c = next((x for x in (p or {}).get('modes', []) if x['mode'] == mode), None)
            if c is None or mode not in ms:
                cells.append('-')
                continue
            got = ms['sequential'] / ms[mode]
            n = len(c['alternatives'])
            if c['fallback']:
                cells.append(f"fb ({c['speedup']:.3f}) {got:.4f} [{n}]")
            else:
                cells.append(f"{c['speedup']:.3f} -> {got:.4f} [{n}]")
                gaps.append(got - c['speedup'])
                if got < 1.0:
                    below.append(f"{call} {preset} {dtype} {mode} {c['speedup']:.3f} -> {got:.4f}")
        rows.append(f"| {call} | {preset} | {dtype} | " + " | ".join(cells) + " |")

print("| call | preset | dtype | host | encoded | fused |")
print("|---|---|---|---|---|---|")
print("\n".join(rows))
print()
print("Each cell: the tuner's speedup -> the run's (sequential's median over the mode's)")
print("[configurations measured]; fb (its best's speedup) where the tuner fell back, then the run's")
print("(sequential, 1.0000 or a hair off it: the same work timed again).")
if gaps:
    print(f"Tuned choices run: {len(gaps)}; run minus tuner: {min(gaps):+.4f} to {max(gaps):+.4f}, "
          f"median {sorted(gaps)[len(gaps) // 2]:+.4f}")
print(f"Run below 1.0000 at a tuned choice: {len(below)}")
for b in below:
    print("  " + b)
print(f"Cannot run on one device: {len(skipped)}")
for s in skipped:
    print("  " + s)
