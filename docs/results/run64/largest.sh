#!/usr/bin/env bash
# Run 64 call 1 (one GPU): the search (20 s) and the exhaustive grid (180 s) of host and encoded mode
# on two of the largest f16 TP-4 points (a run takes 78-109 ms), whose searches fell back in runs 58
# and 59 (BENCHMARKS.md, "The rest of TP 4 and TP 8", "And at TP 4 in f16, B's windows mended") with
# one configuration a mode measured, and whose grids had not run.
set -u
out=${OUT:-out}
OUT=$out TUNE_ARGS="--mode host,encoded" SEARCH_S=${SEARCH_S:-20} GRID_S=${GRID_S:-180} \
  STOP_AT=${STOP_AT:-330} bash scripts/device/tune_points.sh mtnlg-fc2-tp4:f16 palm-fc2-tp4:f16
