#!/usr/bin/env bash
# Run 63 call 6 (one GPU): the search (12 s) and the exhaustive grid (60 s) of host mode on the f32
# TP-4 and TP-8 points whose search fell back in run 58 (BENCHMARKS.md, "The rest of TP 4 and TP 8")
# and on megagpt2-ipbwd-tp8 f16 (run 57), whose grids had not run.
set -u
out=${OUT:-out}
OUT=$out TUNE_ARGS="--mode host" SEARCH_S=${SEARCH_S:-12} GRID_S=${GRID_S:-60} \
  STOP_AT=${STOP_AT:-480} bash scripts/device/tune_points.sh megagpt2-ipbwd-tp8:f16 \
  megagpt2-ipbwd-tp8:f32 megagpt2-fc1bwd-tp8:f32 tnlg-fc1bwd-tp8:f32 tnlg-ipbwd-tp4:f32 \
  megagpt2-fc1bwd-tp4:f32 megagpt2-ipbwd-tp4:f32 tnlg-fc1bwd-tp4:f32
