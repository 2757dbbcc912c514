#!/usr/bin/env bash
# Run 62 call 7 (one GPU): the search (15 s) and the exhaustive grid (55 s) of four f16 points whose
# search fell back in run 54 (BENCHMARKS.md, "More presets, f16, the search alone") and whose grids
# had not run, each for the modes that fell back there: megagpt2-op-tp2 host, encoded and fused,
# megagpt2-fc2-tp2, megagpt2-op-tp4 and megagpt2-fc2-tp4 host.
set -u
out=${OUT:-out}
for part in "a:--mode host,encoded,fused:megagpt2-op-tp2:f16" "b:--mode host:megagpt2-fc2-tp2:f16" "c:--mode host:megagpt2-op-tp4:f16" "d:--mode host:megagpt2-fc2-tp4:f16"; do
  IFS=: read -r name args p d <<< "$part"
  mkdir -p "$out/$name"
  OUT=$out/$name TUNE_ARGS="$args" SEARCH_S=${SEARCH_S:-15} GRID_S=${GRID_S:-55} \
    STOP_AT=$(( ${STOP_AT:-270} - SECONDS )) bash scripts/device/tune_points.sh "$p:$d"
done
