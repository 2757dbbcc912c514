#!/usr/bin/env bash
# Run 65 (one GPU): the search (20 s) and the exhaustive grid (GRID_S) of the modes that fell back on
# the largest f16 points whose grids had not run (runs 58-59: the search measured one configuration a
# mode there and fell back), as run 64 call 1 ran two of them.
#   POINTS="palm-fc1bwd-tp4:f16 ..." MODES=host,encoded bash docs/results/run65/largest.sh
set -u
out=${OUT:-out}
read -ra points <<< "${POINTS:?}"
OUT=$out TUNE_ARGS="--mode ${MODES:-host,encoded}" SEARCH_S=${SEARCH_S:-20} GRID_S=${GRID_S:-150} \
  STOP_AT=${STOP_AT:-420} bash scripts/device/tune_points.sh "${points[@]}"
