"""Replays rules for when a tuned choice replaces the configuration as given, on the figures a run's
tune tables recorded, against what `t3 run` then measured with the table and with `--tune off`.

For host mode at each point of each CALL/tune.json where the choice is not the configuration as
given (run from a run's folder: `python3 ../run66/rules.py call1 call2` in run65/ or run66/, `call2
call4 call5` in run64/): the choice's speed lead over the given on warm clocks (each median scaled by its
layout's fastest sequential over the sequential beside it) and by the ratio to the sequential beside
each, on like figures (both confirmations, else both search figures), and `t3 run`'s host ms with the
table over those without (the PRESET-table.txt and PRESET-off.txt beside). Each rule keeps the given
unless the choice leads as it says; a given slower than the point's sequential never stands. The
change a rule makes is the table's where it chooses, none where the given stands.
"""
import json, os, re, sys


def lay(k):
    return (k['chunks'], k['reduce'], k['link_workgroups'], k['gemm_grid'], k['collective'])


def host_ms(f):
    s = open(f).read()
    m = re.search(r'^host\s+tracked\s+([0-9.]+)', s, re.M)
    return float(m.group(1)) if m else None


rows = []
for call in sys.argv[1:]:
    t = json.load(open(call + '/tune.json'))
    for p in t['points']:
        for m in p['modes']:
            if m['mode'] != 'host':
                continue
            # A layout's fastest sequential beside any mode's measurement at the point, as the tuner
            # reads it.
            seqs = {}
            for mm in p['modes']:
                for a in mm['alternatives'] + mm['confirmed']:
                    if a['sequential_ms']:
                        seqs.setdefault(lay(a['knobs']), []).append(a['sequential_ms'])
            warm = lambda a: a['median_ms'] * min(seqs[lay(a['knobs'])]) / a['sequential_ms']
            ratio = lambda a: a['sequential_ms'] / a['median_ms']
            # The configuration as given: the alternative whose figure is the point's as-given time
            # (unique in every table replayed).
            gs = [a for a in m['alternatives']
                  if a['median_ms'] and m.get('given_ms') and abs(a['median_ms'] - m['given_ms']) < 1e-9]
            if not gs or gs[0]['knobs'] == m['knobs']:
                continue
            gk, best = gs[0]['knobs'], m['knobs']
            if any(c['knobs'] == gk and not c['median_ms'] for c in m['confirmed']):
                continue  # the given's confirmation failed: the choice stands whatever the rule
            conf = [c for c in m['confirmed'] if c['median_ms']]
            like = [c for c in conf if c['knobs'] == gk]
            pool = conf if like else [a for a in m['alternatives'] if a['median_ms']]
            bs = [a for a in pool if a['knobs'] == best]
            if not bs:
                continue
            b, g = bs[0], [a for a in pool if a['knobs'] == gk][0]
            name = p['workload'].split(':')[0].split()[0]
            files = [f'{call}/{name}-{w}.txt' for w in ('table', 'off')]
            if not all(os.path.exists(f) for f in files):
                continue
            tab, off = (host_ms(f) for f in files)
            if not tab or not off:
                continue
            rows.append(dict(call=call, point=name, warm=warm(g) / warm(b) - 1, ratio=ratio(b) / ratio(g) - 1,
                             change=tab / off - 1, given_ok=warm(g) <= p['sequential_ms']))

RULES = [
    ('b2a306e: warm > 3%, or both ahead', lambda w, r: (w > 0 and r > 0) or w > 0.03),
    ('both ahead by > 3%', lambda w, r: w > 0.03 and r > 0.03),
    ('always the choice', lambda w, r: True),
]
for x in rows:
    print('%-6s %-20s warm %+6.1f%% ratio %+6.1f%%  t3 run: the table %+5.1f%%%s' % (
        x['call'], x['point'], 100 * x['warm'], 100 * x['ratio'], 100 * x['change'],
        '' if x['given_ok'] else '  (the given slower than sequential)'))
for name, rule in RULES:
    chosen = [x for x in rows if rule(x['warm'], x['ratio']) or not x['given_ok']]
    total = sum(x['change'] for x in chosen)
    losses = [x['point'] for x in chosen if x['change'] > 0.015]
    print('%-36s mean change %+5.2f%% over %d points; losing > 1.5%%: %s' % (
        name, 100 * total / max(len(rows), 1), len(rows), ', '.join(losses) or 'none'))
