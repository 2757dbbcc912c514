#!/usr/bin/env python3
"""t3 tune's search against the exhaustive grid of the same space (issue 39), as a Markdown table.

usage: tune_compare.py SEARCH.json GRID.json [--within 3]

For every point and mode of the search's table: its choice, the grid's choice (each the fastest of
its three best configurations measured again with three times the reps: the fastest of hundreds of
short measurements reads low by its noise alone), and the gap between them. The two tables come from
two tunings minutes apart, and an H200's clocks drift by a percent or two over that: the gap is of
their speedups, each over the sequential time measured in its own tuning (0 where both chose the same
configuration); the times themselves are shown beside it. Also how much of the grid was measured, the
speedup, whether the mode falls back, and what a run without a table gets (the configuration as given:
the defaults, with the model's chunk count across devices) against the grid's choice, as the grid
measured both. Exits 1 if a mode is more than --within percent behind the grid's choice, or loses to
sequential without saying so.
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


def untuned(gm):
    """The grid's own time of the configuration as given, against its choice."""
    given = gm.get("given_ms") if gm else None
    if not (given and gm.get("median_ms")):
        return "-"
    return f"{(given / gm['median_ms'] - 1) * 100:+.1f}%"


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
    print("| point | dtype | mode | search ms | x seq | search choice | grid ms | x seq | grid choice | gap | grid measured | fallback | no table: gap |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    bad = 0
    for p in search["points"]:
        g = gridpoints.get(key(p))
        for c in p["modes"]:
            gm = next((m for m in g["modes"] if m["mode"] == c["mode"]), None) if g else None
            measured = len([a for a in (gm["alternatives"] if gm else []) if a.get("median_ms")])
            if gm is None:
                gap, note = float("nan"), " (no grid)"
            elif gm["knobs"] == c["knobs"]:
                gap, note = 0.0, " (same)"
            else:
                gap, note = (gm["speedup"] / c["speedup"] - 1) * 100, ""
            over = gap > within
            bad += over
            if c["speedup"] < 1.0 and not c["fallback"]:
                bad += 1
            g_ms = f"{gm['median_ms']:.3f}" if gm else "-"
            g_x = f"{gm['speedup']:.3f}" if gm else "-"
            g_k = knobs(gm["knobs"], c["mode"]) if gm else "-"
            print(
                f"| {p['workload']} | {p['key']['dtype']} | {c['mode']} | {c['median_ms']:.3f} | {c['speedup']:.3f} "
                f"| {knobs(c['knobs'], c['mode'])} | {g_ms} | {g_x} | {g_k} "
                f"| {gap:+.1f}%{note}{' **over**' if over else ''} | {measured} | {'yes' if c['fallback'] else 'no'} "
                f"| {untuned(gm)} |"
            )
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
