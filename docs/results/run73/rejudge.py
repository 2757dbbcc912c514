#!/usr/bin/env python3
"""Run 73's second table: every choice that `t3 tune` did not fall back on, in runs 72 and 73, with
each of its configuration's figures read on warm clocks (its first, then its confirmation's, each
scaled by its layout's fastest sequential over the one timed beside it, as src/tune/search.rs reads
them), the tuner's speedup then (its confirmation's reading), the verdict by the slowest reading
(the rule since this run), and what `t3 run --tune table.json` then measured.
  python3 rejudge.py CALLDIR...   (each holding tune.txt, table.json and PRESET-DTYPE.txt)"""
import glob, json, os, re, sys

ROW = re.compile(r'^(host|encoded|fused) +[a-z]+ +([0-9.]+) +\[[0-9.]+\.\.[0-9.]+\] +([0-9.]+)')


def layout(k):
    return (k['chunks'], k['reduce'], k.get('link_workgroups'), k.get('gemm_grid'),
            k.get('collective'), k.get('order'))


def same(a, b):
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


saves, forfeits, missed, n = [], [], [], 0
print("| call | preset | dtype | mode | readings | tuner | slowest | run | by the slowest |")
print("|---|---|---|---|---|---|---|---|---|")
for d in sys.argv[1:]:
    t = json.load(open(os.path.join(d, 'table.json')))
    by = {p['workload']: p for p in t['points']}
    alias = dict(re.findall(r'^(\S+): the same point as (\S+), tuned above',
                            open(os.path.join(d, 'tune.txt')).read(), re.M))
    call = '/'.join(d.rstrip('/').split('/')[-3:-1])
    for f in sorted(glob.glob(os.path.join(d, '*-f*.txt'))):
        m = re.match(r'(.+)-(f16|f32)\.txt$', os.path.basename(f))
        if not m:
            continue
        preset, dtype = m.groups()
        ran = {r.group(1): float(r.group(3)) for r in map(ROW.match, open(f)) if r}
        p = by.get(preset) or by.get(alias.get(preset))
        if not p:
            continue
        seq = {}
        for c in p['modes']:
            for a in c['alternatives'] + c['confirmed']:
                if a.get('median_ms') and a.get('sequential_ms'):
                    seq.setdefault(layout(a['knobs']), []).append(a['sequential_ms'])
        for c in p['modes']:
            if c['fallback'] or c['mode'] not in ran:
                continue
            figs = [a for a in c['alternatives'] + c['confirmed']
                    if same(a['knobs'], c['knobs']) and a.get('median_ms') and a.get('sequential_ms')]
            reads = [p['sequential_ms'] / (a['median_ms'] * min(seq[layout(a['knobs'])]) / a['sequential_ms'])
                     for a in figs]
            slowest, got = min(reads), ran[c['mode']]
            n += 1
            verdict = 'runs'
            if slowest < 1.0:
                verdict = 'falls back'
                (saves if got < 1.0 else forfeits).append(f"{call} {preset} {dtype} {c['mode']} ran {got:.3f}")
            elif got < 1.0:
                missed.append(f"{call} {preset} {dtype} {c['mode']} ran {got:.3f}")
            print(f"| {call} | {preset} | {dtype} | {c['mode']} | {' '.join(f'{r:.3f}' for r in reads)} "
                  f"| {c['speedup']:.3f} | {slowest:.3f} | {got:.3f} | {verdict} |")
print()
print(f"Choices run: {n}. By the slowest reading {len(saves) + len(forfeits)} fall back:")
print(f"  below 1.000 in the run (a fallback saves them): {len(saves)}")
for s in saves:
    print("    " + s)
print(f"  at or above 1.000 in the run (a gain forfeited): {len(forfeits)}")
for s in forfeits:
    print("    " + s)
print(f"Still run below 1.000 at a choice every reading of which said it pays: {len(missed)}")
for s in missed:
    print("    " + s)
