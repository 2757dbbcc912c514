#!/usr/bin/env bash
# The GEMM's order across devices: host mode's all-reduce with the chunks made shard by shard
# (`--order stage`, the default) and chunk index by chunk index (`--order chunk`), at the defaults
# otherwise and at a chunk a submission, beside sequential, on the presets named (default: the TP-n
# presets' output projections and FC-2, n the GPUs present), f16 then f32 (DTYPES), with --verbose
# (the report's after-GEMM tail and efficiency). Orders alternate within each point. A run that would
# start after STOP_AT seconds is skipped and said. Results: $OUT/summary.txt (a line per run) and each
# report beside it. DEVICES (all) is --devices; RUN_ARGS adds flags to every run (`--scale 0.03` for a
# smoke test on lavapipe with DEVICES=2).
#   OUT=... bash scripts/device/order.sh [PRESET ...]
set -u
out=${OUT:-out}; mkdir -p "$out"; s=$out/summary.txt; t0=$SECONDS
read -ra extra <<< "${RUN_ARGS:-}"
n=$(nvidia-smi -L 2>/dev/null | wc -l); [ "$n" -ge 2 ] || n=2
presets=("$@")
[ ${#presets[@]} -eq 0 ] && presets=(gpt3-fc2-tp$n mtnlg-op-tp$n palm-op-tp$n tnlg-op-tp$n mtnlg-fc2-tp$n megagpt2-fc2-tp$n)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >> "$s" 2>/dev/null
for d in ${DTYPES:-f16 f32}; do
  for p in "${presets[@]}"; do
    for g in default chunk; do
      for o in stage chunk; do
        if [ $((SECONDS - t0)) -gt "${STOP_AT:-480}" ]; then echo "skipped $p $d $g $o (time)" >> "$s"; continue; fi
        f="$out/$p-$d-$g-$o.txt"; grain=(); [ $g = chunk ] && grain=(--host-loop grain=chunk)
        timeout 90 t3 run --preset "$p" --dtype $d --devices "${DEVICES:-all}" --collective all-reduce \
          --mode sequential,host --order $o "${grain[@]}" --reps 5 --warmup 1 --tune off --verbose \
          "${extra[@]}" > "$f" 2>&1
        echo "$p $d grain=$g order=$o rc=$? ($((SECONDS - t0)) s): $(grep -E '^sequential ' "$f" | tr -s ' ' | cut -d' ' -f1,3) | $(grep -E '^host ' "$f" | tr -s ' ' | cut -d' ' -f1,3-7) | $(grep -E '^after GEMM' "$f" | cut -c1-90)" >> "$s"
      done
    done
  done
done
echo "done ($((SECONDS - t0)) s)" >> "$s"
