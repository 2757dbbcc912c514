#!/usr/bin/env bash
# Run 69 (one H200): every mode at the defaults (no table, `--tune off`) on the presets named
# (default: every TP-8, then TP-4, then TP-2 preset), each dtype of DTYPES (f16 f32), with cac265b's
# sequential (every GEMM op in one pass), as time leaves (STOP_AT seconds). A line per point.
#   OUT=... bash docs/results/run69/one.sh [PRESET ...]
set -u
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
presets=("$@")
[ ${#presets[@]} -eq 0 ] && presets=($(for n in 8 4 2; do t3 presets | awk -v n=$n '$1 ~ "-tp"n"$" {print $1}'; done))
for d in ${DTYPES:-f16 f32}; do for p in "${presets[@]}"; do
  [ $((SECONDS - t0)) -gt ${STOP_AT:-450} ] && { echo "skipped $p $d (time)"; continue; }
  f="$out/$p-$d.txt"
  timeout ${TO:-90} t3 run --preset $p --dtype $d --mode sequential,host,encoded,fused --reps 3 --tune off --verbose --json "$out/$p-$d.json" > "$f" 2>&1
  echo "$p $d rc=$? ($((SECONDS - t0)) s): $(grep -E '^(sequential|host|encoded|fused) ' "$f" | tr -s ' ' | cut -d' ' -f1,3,5,6 | tr '\n' '|')"
done; done
echo "done ($((SECONDS - t0)) s)"
