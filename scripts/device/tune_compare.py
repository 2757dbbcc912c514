#!/usr/bin/env python3
"""t3 tune's search against the exhaustive grid of the same space (issue 39), as a Markdown table.

usage: tune_compare.py SEARCH.json GRID.json [--within 3]

For every point and mode of the search's table: its choice, the grid's choice (each the fastest of
its three best configurations measured again with three times the reps: the fastest of hundreds of
short measurements reads low by its noise alone), and the gap between them. The two tables come from
two tunings minutes apart: the gap is of their speedups, each over the sequential time measured in
its own tuning, every figure read on warm clocks as `t3 tune` reads them ("same" where both chose one
configuration, which passes whatever its two figures say); the times themselves are shown beside it.
Also how much of the grid was measured, the speedup, whether the mode falls back, and what a run
without a table gets (the configuration as given: the defaults, with the model's chunk count across
devices) against the grid's choice, as the grid measured both, each read on warm clocks. Exits 1 if a
mode is more than --within percent behind the grid's choice, loses to sequential without saying so,
or falls back where the grid's choice does not.
"""
import json
import sys


def key(p):
    k = p["key"]
    return (k["m"], k["n"], k["k"], k["ranks"], k["collective"], k["dtype"], k["devices"])


def knobs(k, mode):
    parts = [f"chunks {k['chunks']}", k["reduce"]]
    if k.get("collective"):
        parts.insert(0, k["collective"])
    if k.get("order"):
        parts.append(f"{k['order']} order")
    if mode != "fused":
        parts += [f"grid {k.get('gemm_grid') or 'off'}", f"lead {k.get('step_lead') if k.get('step_lead') is not None else 'auto'}"]
    if k.get("link_workgroups"):
        parts.append(f"link {k['link_workgroups']}")
    if mode == "host":
        parts += [f"grain {k.get('host_grain') or 'default'}", f"depth {k.get('host_depth') or 'default'}"]
    if mode == "fused":
        parts += [f"spares {k.get('fused_spares') or 'auto'}", f"pieces {k.get('fused_pieces') if k.get('fused_pieces') is not None else 'auto'}", f"pause {k.get('fused_pause') if k.get('fused_pause') is not None else 'auto'}"]
    return ", ".join(str(p) for p in parts)


def layout(a):
    k = a["knobs"]
    return (k["chunks"], k["reduce"], k.get("link_workgroups"), k.get("gemm_grid"))


def warm(point):
    """Sequential's fastest figure per layout beside any measurement of the point: its time on warm
    clocks, as `t3 tune` reads every figure."""
    w = {}
    for m in point["modes"]:
        for a in m["alternatives"] + m.get("confirmed", []):
            if a.get("sequential_ms"):
                w[layout(a)] = min(w.get(layout(a), float("inf")), a["sequential_ms"])
    return w


def untuned(gm, gp):
    """The grid's own time of the configuration as given, against its choice, both on warm clocks
    (the figure as given scaled by its layout's fastest sequential over the one beside it; the
    choice's is the point's sequential over its speedup)."""
    given = gm.get("given_ms") if gm else None
    if not (given and gm.get("median_ms")):
        return "-"
    a = next((a for a in gm["alternatives"] if a.get("median_ms") == given), None)
    w = warm(gp)
    if a and a.get("sequential_ms") and layout(a) in w:
        given = given * w[layout(a)] / a["sequential_ms"]
    chosen = gp["sequential_ms"] / gm["speedup"]
    return f"{(given / chosen - 1) * 100:+.1f}%"


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
            else:
                gap = (gm["speedup"] / c["speedup"] - 1) * 100
                note = " (same)" if gm["knobs"] == c["knobs"] else ""
            # The same configuration is the grid's choice whatever its two figures say.
            over = gap > within and not note
            bad += over
            # Slower than sequential, or leading it by less than the least lead (LEAST_LEAD in
            # src/tune/search.rs), yet not falling back: a fault of the tuner's.
            if c["speedup"] < 1.005 and not c["fallback"]:
                bad += 1
            # A fallback where the grid found a configuration that pays.
            lost = bool(c["fallback"] and gm and not gm["fallback"])
            bad += lost
            g_ms = f"{gm['median_ms']:.3f}" if gm else "-"
            g_x = f"{gm['speedup']:.3f}" if gm else "-"
            g_k = knobs(gm["knobs"], c["mode"]) if gm else "-"
            print(
                f"| {p['workload']} | {p['key']['dtype']} | {c['mode']} | {c['median_ms']:.3f} | {c['speedup']:.3f} "
                f"| {knobs(c['knobs'], c['mode'])} | {g_ms} | {g_x} | {g_k} "
                f"| {gap:+.1f}%{note}{' **over**' if over else ''} | {measured} "
                f"| {'yes' if c['fallback'] else 'no'}{' **the grid pays**' if lost else ''} "
                f"| {untuned(gm, g)} |"
            )
        # A mode neither table tuned here, said with its reason (a table before it had none).
        for n in p.get("not_run", []):
            print(f"| {p['workload']} | {p['key']['dtype']} | {n['mode']} | not tuned: {n['why']} |")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
