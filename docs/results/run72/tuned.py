#!/usr/bin/env python3
"""Run 72's table: per preset and mode, what `t3 tune` chose (its speedup over the point's
sequential on warm clocks, or its fallback with its best's) and what `t3 run --tune table.json`
then measured (the report's speedup; a fallback runs sequential, 1.000 by definition).
  python3 tuned.py CALLDIR...   (each holding tune.txt, table.json and PRESET-DTYPE.txt)"""
import json, re, sys, os

ROW = re.compile(r'^(host|encoded|fused) +[a-z]+ +([0-9.]+) +\[[0-9.]+\.\.[0-9.]+\] +([0-9.]+)')
rows, gaps, below = [], [], []
for d in sys.argv[1:]:
    t = json.load(open(os.path.join(d, 'table.json')))
    by = {p['workload']: p for p in t['points']}
    same = dict(re.findall(r'^(\S+): the same point as (\S+), tuned above',
                           open(os.path.join(d, 'tune.txt')).read(), re.M))
    call = os.path.basename(os.path.dirname(os.path.abspath(d)))
    for f in sorted(os.listdir(d)):
        m = re.match(r'(.+)-(f16|f32)\.txt$', f)
        if not m:
            continue
        preset, dtype = m.groups()
        ran = {}
        for line in open(os.path.join(d, f)):
            r = ROW.match(line)
            if r:
                ran[r.group(1)] = float(r.group(3))
        # Presets that share a point (fc2 and fc1bwd) were tuned once, under the first's name.
        p = by.get(preset) or by.get(same.get(preset))
        cells = []
        for mode in ('host', 'encoded', 'fused'):
            c = next((x for x in (p or {}).get('modes', []) if x['mode'] == mode), None)
            if c is None:
                cells.append('-')
                continue
            got = ran.get(mode)
            n = len(c['alternatives'])
            if c['fallback']:
                cells.append(f"fb ({c['speedup']:.3f}) {got:.3f} [{n}]")
            else:
                cells.append(f"{c['speedup']:.3f} -> {got:.3f} [{n}]")
                gaps.append(got - c['speedup'])
                if got < 1.0:
                    below.append(f"{call} {preset} {dtype} {mode} {c['speedup']:.3f} -> {got:.3f}")
        rows.append(f"| {call} | {preset} | {dtype} | " + " | ".join(cells) + " |")

print("| call | preset | dtype | host | encoded | fused |")
print("|---|---|---|---|---|---|")
print("\n".join(rows))
print()
print("Each cell: the tuner's speedup -> the run's with the table [configurations measured];")
print("fb (its best's speedup) where the tuner fell back, then the run's (sequential, 1.000).")
print(f"Tuned choices run: {len(gaps)}; run minus tuner: {min(gaps):+.3f} to {max(gaps):+.3f}, "
      f"median {sorted(gaps)[len(gaps) // 2]:+.3f}")
print(f"Run below 1.000 at a tuned choice: {len(below)}")
for b in below:
    print("  " + b)
