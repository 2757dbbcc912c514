#!/usr/bin/env bash
# Run 65 (one GPU): `t3 tune` of every mode on two TP-2 all-reduce points, where since dadd0d3 the
# search also starts from the direct all-reduce (the same bytes at two ranks) and each collective gets
# half the rounds; then `t3 run` of each point with that table and without (`--tune off`).
set -u
out=${OUT:-out}; mkdir -p "$out"
timeout 200 t3 tune --presets tnlg-op-tp2,gpt3-op-tp2 --dtype f16 --budget-s "${BUDGET:-100}" \
  --out "$out/onegpu-tune.json" > "$out/onegpu-tune.txt" 2>&1
echo "tune rc=$? ${SECONDS} s"; grep -v '^tune: ' "$out/onegpu-tune.txt"
for p in tnlg-op-tp2 gpt3-op-tp2; do
  for t in table off; do
    f="$out/onegpu-$p-$t.txt"; arg=$t; [ $t = table ] && arg="$out/onegpu-tune.json"
    timeout 60 t3 run --preset "$p" --dtype f16 --reps 5 --warmup 1 --tune "$arg" > "$f" 2>&1
    echo "$p $t rc=$?"; grep -E '^ *(sequential|host|encoded|fused) ' "$f" | tr -s ' '
  done
done
echo "done at ${SECONDS} s"
