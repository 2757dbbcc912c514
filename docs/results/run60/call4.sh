#!/usr/bin/env bash
# Run 60 call 4 (one GPU): as call 3, on four more TP-2 points whose search fell back (run 58 call 6):
# host mode on megagpt2-ipbwd f16, tnlg-ipbwd f16 and megagpt2-fc1bwd f32, host and encoded mode on
# tnlg-fc1bwd f16.
set -u
out=${OUT:-out}
for part in "a:--mode host:megagpt2-ipbwd-tp2:f16" "b:--mode host,encoded:tnlg-fc1bwd-tp2:f16" "c:--mode host:tnlg-ipbwd-tp2:f16" "d:--mode host:megagpt2-fc1bwd-tp2:f32"; do
  IFS=: read -r name args p d <<< "$part"
  mkdir -p "$out/$name"
  OUT=$out/$name TUNE_ARGS="$args" SEARCH_S=${SEARCH_S:-15} GRID_S=${GRID_S:-75} \
    STOP_AT=$(( ${STOP_AT:-360} - SECONDS )) bash scripts/device/tune_points.sh "$p:$d"
done
