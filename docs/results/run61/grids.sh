#!/usr/bin/env bash
# Run 61 call 7 (one GPU): the search (15 s) and the exhaustive grid (90 s) of four TP-2 f16 points
# whose search fell back in run 59 (BENCHMARKS.md, "The last presets on one H200"), each for the
# modes that fell back there: gpt3-fc2 host and fused, palm-op host and fused, palm-ipbwd host and
# fused, mtnlg-op host, encoded and fused.
set -u
out=${OUT:-out}
for part in "a:--mode host,fused:gpt3-fc2-tp2:f16" "b:--mode host,fused:palm-op-tp2:f16" "c:--mode host,fused:palm-ipbwd-tp2:f16" "d:--mode host,encoded,fused:mtnlg-op-tp2:f16"; do
  IFS=: read -r name args p d <<< "$part"
  mkdir -p "$out/$name"
  OUT=$out/$name TUNE_ARGS="$args" SEARCH_S=${SEARCH_S:-15} GRID_S=${GRID_S:-90} \
    STOP_AT=$(( ${STOP_AT:-440} - SECONDS )) bash scripts/device/tune_points.sh "$p:$d"
done
