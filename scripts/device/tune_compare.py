#!/usr/bin/env python3
"""t3 tune's search against the exhaustive grid of the same space (issue 39), as a Markdown table.

usage: tune_compare.py SEARCH.json GRID.json [--within 3]

For every point and mode of the search's table: its choice and time, the grid's best point and time
(the fastest of every configuration the grid measured, the search's own measurements not counted),
the gap (the search's choice as the grid measured it, where the grid reached it, so that both
figures come from one run; else the search's own figure), how much of the grid was measured (a grid cut short by its budget says so), the speedup over
the point's best sequential run, whether the mode falls back, and what a run without a table gets
(the configuration as given: the defaults, with the model's chunk count across devices) against
the grid's best. Exits 1 if a mode is more than
--within percent behind the grid's best, or loses to sequential without saying so.
"""
import json
import sys


def key(p):
    k = p["key"]
    return (k["m"], k["n"], k["k"], k["ranks"], k["collective"], k["dtype"], k["devices"])


def knobs(k, mode):
    parts = [f"chunks {k['chunks']}", k["reduce"]]
    if mode != "fused":
        parts += [f"grid {k.get('gemm_grid') or 'off'}", f"lead {k.get('step_lead') if k.get('step_lead') is not None else 'auto'}"]
    if k.get("link_workgroups"):
        parts.append(f"link {k['link_workgroups']}")
    if mode == "host":
        parts += [f"grain {k.get('host_grain') or 'default'}", f"depth {k.get('host_depth') or 'default'}"]
    if mode == "fused":
        parts += [f"spares {k.get('fused_spares') or 'auto'}", f"pieces {k.get('fused_pieces') if k.get('fused_pieces') is not None else 'auto'}", f"pause {k.get('fused_pause') if k.get('fused_pause') is not None else 'auto'}"]
    return ", ".join(str(p) for p in parts)


def untuned(gm, best):
    """The grid's own time of the configuration as given, against its best."""
    given = gm.get("given_ms") if gm else None
    if not (given and best):
        return "-"
    return f"{(given / best['median_ms'] - 1) * 100:+.1f}%"


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    within = float(argv[argv.index("--within") + 1]) if "--within" in argv else 3.0
    search = json.load(open(argv[1]))
    grid = json.load(open(argv[2]))
    if search["adapter"] != grid["adapter"]:
        print(f"the tables are of two adapters: {search['adapter']} / {grid['adapter']}", file=sys.stderr)
        return 2
    gridpoints = {key(p): p for p in grid["points"]}
    print(f"adapter: {search['adapter']}; search {search['date']}, grid {grid['date']}\n")
    print("| point | dtype | mode | search ms | search choice | grid best ms | grid best | gap | grid measured | x seq | fallback | no table: gap |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    bad = 0
    for p in search["points"]:
        g = gridpoints.get(key(p))
        for c in p["modes"]:
            gm = next((m for m in g["modes"] if m["mode"] == c["mode"]), None) if g else None
            alts = [a for a in (gm["alternatives"] if gm else []) if a.get("median_ms")]
            best = min(alts, key=lambda a: a["median_ms"]) if alts else None
            # The search's choice as the grid timed it, where the grid reached it: one run's figures.
            same = next((a["median_ms"] for a in alts if a["knobs"] == c["knobs"]), None)
            ours = same if same else c["median_ms"]
            gap = (ours / best["median_ms"] - 1) * 100 if best else float("nan")
            verdict = "" if not best or gap <= within else " **over**"
            if best and gap > within:
                bad += 1
            if c["speedup"] < 1.0 and not c["fallback"]:
                bad += 1
            print(
                f"| {p['workload']} | {p['key']['dtype']} | {c['mode']} | {c['median_ms']:.3f} | {knobs(c['knobs'], c['mode'])} "
                f"| {best['median_ms'] if best else float('nan'):.3f} | {knobs(best['knobs'], c['mode']) if best else '-'} "
                f"| {gap:+.1f}%{'' if same else ' (search run)'}{verdict} | {len(alts)} | {c['speedup']:.3f} | {'yes' if c['fallback'] else 'no'} "
                f"| {untuned(gm, best)} |"
            )
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
