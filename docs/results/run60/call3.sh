#!/usr/bin/env bash
# Run 60 call 3 (one GPU): the exhaustive grid beside the search on points whose search fell back
# (issue 39: a mode falls back only where no point of its grid reaches sequential): host and fused
# mode on gpt3-ipbwd-tp2 f16 and palm-op-tp2 f32 (run 59 call 1), fused mode on palm-fc2-tp4 f32
# (call 2). Everything lands in $OUT/all.tgz, made by the call after this script.
set -u
out=${OUT:-out}
for part in "a:--mode host,fused:gpt3-ipbwd-tp2:f16" "b:--mode host,fused:palm-op-tp2:f32" "c:--mode fused:palm-fc2-tp4:f32"; do
  IFS=: read -r name args p d <<< "$part"
  mkdir -p "$out/$name"
  OUT=$out/$name TUNE_ARGS="$args" SEARCH_S=${SEARCH_S:-20} GRID_S=${GRID_S:-90} \
    STOP_AT=$(( ${STOP_AT:-400} - SECONDS )) bash scripts/device/tune_points.sh "$p:$d"
done
