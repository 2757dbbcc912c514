#!/usr/bin/env bash
# Run 69 (one H200): the demo as the quick start runs it (`t3`, no flag), then `t3 tune` of every
# mode on three TP-8 f16 presets against cac265b's sequential (every GEMM op in one pass), and `t3
# run` of each with that table.
#   BUDGET=200 OUT=... bash docs/results/run69/tune8.sh
set -u
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
(cd "$out" && timeout 90 t3 > demo.txt 2>&1); echo "== demo rc=$? ($((SECONDS - t0)) s)"
grep -E "^workload|^config|^(sequential|host|encoded|fused) " "$out/demo.txt" | cut -c1-150
ps="${PRESETS:-tnlg-op-tp8,gpt3-op-tp8,tnlg-fc2-tp8}"
timeout $((${BUDGET:-200} + 90)) t3 tune --presets "$ps" --dtype f16 --budget-s "${BUDGET:-200}" --out "$out/tune.json" > "$out/tune.txt" 2>&1
echo "== tune rc=$? ($((SECONDS - t0)) s)"; grep -v '^tune: ' "$out/tune.txt" | cut -c1-200
for p in ${ps//,/ }; do
  timeout 90 t3 run --preset $p --dtype f16 --mode sequential,host,encoded,fused --reps 3 --tune "$out/tune.json" --verbose > "$out/$p-table.txt" 2>&1
  echo "== $p f16 table rc=$? ($((SECONDS - t0)) s)"
  grep -E "^config|^ +\[|^(sequential|host|encoded|fused) |fallback|sequential instead" "$out/$p-table.txt" | cut -c1-170
done
echo "done ($((SECONDS - t0)) s)"
