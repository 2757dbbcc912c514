"""Replays the choice of b2a306e's rule on the figures a run's tune tables recorded.

For host mode at each point of each CALL/tune.json (run from a run's folder: `python3
docs/results/run65/replay.py call1 call2`): each figure read on warm clocks (its median scaled by its
layout's fastest sequential over the sequential beside it) and its ratio to the sequential beside it,
for the choice and for the configuration as given (its confirmation where it had one, else its search
figure, each like the other); the given stands unless the choice leads by more than 3% on warm clocks,
or on both readings, or the given is slower than the point's sequential.
"""
import json,sys
def lay(k): return (k['chunks'],k['reduce'],k['link_workgroups'],k['gemm_grid'],k['collective'])
for call in sys.argv[1:]:
    t=json.load(open(call+'/tune.json'))
    for p in t['points']:
        for m in p['modes']:
            if m['mode']!='host': continue
            seqs={}
            for a in m['alternatives']+m['confirmed']:
                if a['sequential_ms']: seqs.setdefault(lay(a['knobs']),[]).append(a['sequential_ms'])
            warm=lambda a: a['median_ms']*min(seqs[lay(a['knobs'])])/a['sequential_ms']
            r=lambda a:a['sequential_ms']/a['median_ms']
            gk=[a for a in m['alternatives'] if a['median_ms'] and abs(a['median_ms']-m['given_ms'])<1e-9][0]['knobs']
            best=m['knobs']
            if gk==best: print(p['workload'],'the choice is the configuration as given'); continue
            conf=[c for c in m['confirmed'] if c['median_ms']]
            # Like figures: both confirmations, else both first (search) figures.
            gc=[c for c in conf if c['knobs']==gk]
            pool=conf if gc else [a for a in m['alternatives'] if a['median_ms']]
            b=([c for c in conf if c['knobs']==best] if gc else [a for a in pool if a['knobs']==best])[0]
            g=[a for a in pool if a['knobs']==gk][0]
            stands = warm(g) <= p['sequential_ms'] and not ((warm(b)<warm(g) and r(b)>r(g)) or warm(b)<warm(g)*0.97)
            print('%-20s choice warm %.3f ratio %.3f | given (chunks %d, %s) warm %.3f ratio %.3f gain %.1f%% -> %s'%(p['workload'],warm(b),r(b),gk['chunks'],'confirmed' if g in conf else 'search',warm(g),r(g),100*(1-warm(b)/warm(g)),'GIVEN STANDS' if stands else 'choice'))
