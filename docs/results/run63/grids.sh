#!/usr/bin/env bash
# Run 63 call 4 (one GPU): the search (15 s) and the exhaustive grid (55 s) of host mode on seven f16
# points whose search fell back in runs 54 and 57 (BENCHMARKS.md, "More presets, f16, the search
# alone", "The other TP-4 and TP-8 presets") and whose grids had not run.
set -u
out=${OUT:-out}
OUT=$out TUNE_ARGS="--mode host" SEARCH_S=${SEARCH_S:-15} GRID_S=${GRID_S:-55} \
  STOP_AT=${STOP_AT:-470} bash scripts/device/tune_points.sh tnlg-ipbwd-tp8:f16 \
  megagpt2-fc1bwd-tp4:f16 megagpt2-ipbwd-tp4:f16 tnlg-fc1bwd-tp4:f16 tnlg-ipbwd-tp4:f16 \
  megagpt2-fc1bwd-tp8:f16 tnlg-fc1bwd-tp8:f16
