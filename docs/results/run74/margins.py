#!/usr/bin/env python3
"""Run 74's replay of fallback rules on every choice run in runs 72-74 (rejudge.txt's rows: each
choice's readings, its figures on warm clocks over the point's sequential, and what the run then
measured): per rule, the choices it would fall back on that then ran below 1.000 (saved), those that
ran at or above (forfeited), and those it would still run that ran below.
  python3 margins.py rejudge.txt"""
import sys

RULES = [
    ('the slowest reading pays (since 88b6660)', lambda r: min(r)),
    ('the slowest reading less 0.5%', lambda r: min(r) - 0.005),
    ('the slowest less the readings\' spread', lambda r: 2 * min(r) - max(r)),
    ('the slowest reading less 1%', lambda r: min(r) - 0.01),
]
rows = [line.split('|')[1:-1] for line in open(sys.argv[1]) if line.startswith('| run')]
print(f"{len(rows)} choices run")
for name, rule in RULES:
    saved, forfeited, below = [], [], []
    for c in rows:
        readings = [float(x) for x in c[4].split()]
        ran = float(c[7])
        cell = f"{c[0].strip()} {c[1].strip()} {c[2].strip()} {c[3].strip()} ran {ran:.3f}"
        pays = rule(readings) >= 1.0
        if not pays:
            (saved if ran < 1.0 else forfeited).append(cell)
        elif ran < 1.0:
            below.append(cell)
    print(f"\n{name}: falls back on {len(saved) + len(forfeited)}, saving {len(saved)}, "
          f"forfeiting {len(forfeited)}; still below 1.000: {len(below)}")
    for label, v in (('forfeited', forfeited), ('still below', below)):
        for cell in v:
            print(f"  {label}: {cell}")
