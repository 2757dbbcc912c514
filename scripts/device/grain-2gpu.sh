#!/usr/bin/env bash
# Issue 38's efficiency bar on two GPUs: host mode's all-reduce at each grain of the host loop
# (`--host-loop grain=stage|2|chunk`) and 4 or 8 chunks per rank, beside sequential, on the presets
# named (default: four TP-2 points of run 57's table), f16 then f32, with --verbose (the report's
# after-GEMM tail and efficiency). At stage grain a chunk lands only in a submission after its
# sender's completes, so the reduce-scatter's landings and the all-gather follow the last stage;
# finer grains let them start while it computes. A point that would start after STOP_AT seconds is
# skipped and said. Results: $OUT/summary.txt (one line per run), $OUT/grain.tgz (every report).
# DEVICES (all) is --devices; RUN_ARGS adds flags to every run (`--scale 0.03` for a smoke test on
# lavapipe with DEVICES=2).
#   bash scripts/device/grain-2gpu.sh [PRESET ...]
set -u
out=${OUT:-out}; mkdir -p "$out"; s=$out/summary.txt
read -ra extra <<< "${RUN_ARGS:-}"
work=$(mktemp -d)
presets=("$@")
[ ${#presets[@]} -eq 0 ] && presets=(tnlg-op-tp2 tnlg-fc2-tp2 gpt3-op-tp2 megagpt2-op-tp2)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >> "$s" 2>/dev/null
for d in f16 f32; do
  for p in "${presets[@]}"; do
    for c in 4 8; do
      for g in stage 2 chunk; do
        if [ $SECONDS -gt "${STOP_AT:-500}" ]; then echo "skipped $p $d chunks $c grain $g (time)" >> "$s"; continue; fi
        f=$work/$p-$d-c$c-$g.txt
        timeout 120 t3 run --preset "$p" --dtype "$d" --devices "${DEVICES:-all}" --collective all-reduce \
          --mode sequential,host --chunks "$c" --host-loop "grain=$g" --reps 3 --warmup 1 \
          --tune off --verbose "${extra[@]}" > "$f" 2>&1
        rc=$?
        echo "$p $d chunks $c grain $g rc=$rc: $(grep -E '^ *host ' "$f" | head -1 | tr -s ' ')" >> "$s"
      done
    done
  done
done
tar czf "$out/grain.tgz" -C "$work" .
