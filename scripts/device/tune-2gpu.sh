#!/usr/bin/env bash
# Issue 39 on two GPUs of one host (kind nvidia-h200-x2): scripts/device/tune.sh's parts (search,
# grid, compare; results in $OUT/tune2-PART.tgz) for sequential and host mode, the modes that span
# devices, on the four TP-8 presets at 2 and 8 ranks over the two devices, f32 and f16.
#   bash scripts/device/tune-2gpu.sh [PART]
TAG=tune2 TUNE_ARGS="--ranks 2,8 --devices 2 --mode sequential,host" \
  RUN_ARGS="--ranks 2 --devices 2 --mode sequential,host" \
  SEARCH_S=${SEARCH_S:-90} GRID_S=${GRID_S:-120} exec bash "$(dirname "$0")/tune.sh" "$@"
