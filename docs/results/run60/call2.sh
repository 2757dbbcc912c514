#!/usr/bin/env bash
# Run 60 call 2 (two GPUs, then one of them): host mode across both GPUs with one submission queued
# per device (`--host-loop in-flight=1`) at 4 and 8 chunks per rank on six TP-2 points, against
# call 1's grain sweep (two queued); then, on one GPU, fused mode tuned on the five TP-4 f32 presets
# it lowers on since 0b605f7, and every mode on palm's three TP-8 f32 presets. Everything lands in
# $OUT/all.tgz (made by the call after this script, which it bounds with `timeout`).
set -u
out=${OUT:-out}; mkdir -p "$out/eta"; s=$out/eta/summary.txt
for pd in tnlg-op-tp2:f16 gpt3-op-tp2:f16 tnlg-fc2-tp2:f16 tnlg-fc2-tp2:f32 gpt3-op-tp2:f32 megagpt2-op-tp2:f32; do
  p=${pd%%:*}; d=${pd##*:}
  for c in 4 8; do
    if [ $SECONDS -gt "${ETA_STOP:-100}" ]; then echo "skipped $p $d chunks $c (time)" >> "$s"; continue; fi
    f=$out/eta/$p-$d-c$c-q1.txt
    timeout 60 t3 run --preset "$p" --dtype "$d" --devices all --collective all-reduce \
      --mode sequential,host --chunks "$c" --host-loop in-flight=1 --reps 3 --warmup 1 \
      --tune off --verbose > "$f" 2>&1
    echo "$p $d chunks $c in-flight 1 rc=$?: $(grep -E '^ *host ' "$f" | head -1 | tr -s ' ') | $(grep '^after' "$f")" >> "$s"
  done
done
mkdir -p "$out/fused"
OUT=$out/fused TUNE_ARGS="--mode fused" GRID_S=0 SEARCH_S=25 STOP_AT=$(( ${FUSED_STOP:-300} - SECONDS )) \
  bash scripts/device/tune_points.sh mtnlg-fc2-tp4:f32 mtnlg-fc1bwd-tp4:f32 mtnlg-ipbwd-tp4:f32 \
  palm-fc2-tp4:f32 palm-fc1bwd-tp4:f32
mkdir -p "$out/palm8"
OUT=$out/palm8 GRID_S=0 SEARCH_S=25 STOP_AT=$(( ${STOP_AT:-420} - SECONDS )) \
  bash scripts/device/tune_points.sh palm-fc2-tp8:f32 palm-fc1bwd-tp8:f32 palm-ipbwd-tp8:f32

