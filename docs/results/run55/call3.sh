#!/usr/bin/env bash
# Run 55, call 3 (one H200, after `. .gpu/prelude.sh`): the streamed calibration before (t3-base,
# 2 slots, writes of a poll as many as slots are free) and after (t3: 4 slots, a write and a landing
# per direction and poll, two submissions queued per device), alternating; then the GEMM beside the
# link again with the SM clock sampled every 100 ms (nvidia-smi), for the GEMM times that came out
# 4-6x slow in call 1.
set -uo pipefail
out=$(mktemp -d); trap 'tar -C "$out" -czf "$OUT/r.tgz" .; cp "$out/summary.txt" "$OUT/" 2>/dev/null' EXIT
s="$out/summary.txt"; t0=$SECONDS
for i in 1 2; do for b in t3-base t3; do
  timeout 90 $b calibrate --devices 2 --reps 3 --mib 64 --out "$out/cal-$b-$i.json" > "$out/cal-$b-$i.txt" 2>&1
  echo "== $b calibrate --devices 2 ($i) rc=$? ($((SECONDS - t0)) s)" >> "$s"; grep -E "streamed|sending" "$out/cal-$b-$i.txt" | sed 's/(zero-copy, [0-9]* MiB each)//' >> "$s"
done; done
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,utilization.gpu,clocks_throttle_reasons.active --format=csv -lms 100 > "$out/clocks.csv" 2>&1 &
smi=$!
for w in 16 32; do
  timeout 90 t3 calibrate --devices 2 --reps 3 --mib 64 --link-workgroups $w --beside-gemm 4096x4256x2128 --out "$out/b-$w.json" > "$out/b-$w.txt" 2>&1
  echo "== beside f32 4096x4256x2128, $w wg rc=$? ($((SECONDS - t0)) s, $(date +%T.%N))" >> "$s"; grep -E "beside" "$out/b-$w.txt" >> "$s"
done
kill $smi
echo "done ($((SECONDS - t0)) s)" >> "$s"
