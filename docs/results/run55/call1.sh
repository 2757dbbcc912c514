#!/usr/bin/env bash
# Run 55, call 1 (one H200, after `. .gpu/prelude.sh`): each device's sending and landing at once
# beside a GEMM on it, in one pass (`t3 calibrate --devices 2 --beside-gemm`), at four link budgets,
# for the GEMM stages host mode runs on the TP-2 presets (half a rank's rows) with the bytes a stage's
# sends move. CLOCKS=1 also samples the SM clock every 200 ms (nvidia-smi) into clocks.csv (calls 4-5,
# the same script on later binaries: `CLOCKS=1 bash docs/results/run55/call1.sh`).
set -uo pipefail
out=$(mktemp -d); trap 'tar -C "$out" -czf "$OUT/r.tgz" .; cp "$out/summary.txt" "$OUT/" 2>/dev/null' EXIT
s="$out/summary.txt"; t0=$SECONDS
if [ "${CLOCKS:-0}" = 1 ]; then
  nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,utilization.gpu,clocks_throttle_reasons.active --format=csv -lms 200 > "$out/clocks.csv" 2>&1 &
  smi=$!
fi
for gm in 4096x4256x2128:f16:32 4096x4256x2128:f32:64 4096x12288x6144:f16:96 4096x4256x8512:f32:64; do
  g=${gm%:*}; m=${gm##*:}
  for w in 16 32 64 128; do
    [ $((SECONDS - t0)) -gt 500 ] && { echo "skipped $g $w (time)" >> "$s"; continue; }
    f="$out/${g//:/-}-w$w"
    timeout 90 t3 calibrate --devices 2 --reps 3 --mib $m --link-workgroups $w --beside-gemm $g --out "$f.json" > "$f.txt" 2>&1
    echo "== $g, $m MiB, $w workgroups rc=$? ($((SECONDS - t0)) s)" >> "$s"
    grep -E "beside|at once \(zero" "$f.txt" | sed 's/(zero-copy, [0-9]* MiB each)//' >> "$s"
  done
done
[ -n "${smi:-}" ] && kill $smi
echo "done ($((SECONDS - t0)) s)" >> "$s"
