#!/usr/bin/env bash
# Run 55, call 9 (two H200s, kind nvidia-h200-x2, after `. .gpu/prelude.sh`): why host mode's pass
# of the last GEMM stage with its four sends took GEMM + sends (call 7's traces): the link beside the
# gpt3-op stage's GEMM in the calibration on these GPUs, then host mode on gpt3-op-tp2 f16 with 1
# chunk (one send a pass) and with 4 at three shared budgets, each traced.
set -uo pipefail
out=$(mktemp -d); trap 'tar -C "$out" -czf "$OUT/r.tgz" .; cp "$out/summary.txt" "$OUT/" 2>/dev/null' EXIT
s="$out/summary.txt"; t0=$SECONDS
timeout 90 t3 calibrate --devices all --reps 3 --mib 96 --link-workgroups 32 --beside-gemm 4096x12288x6144:f16 --out "$out/cal.json" > "$out/cal.txt" 2>&1
echo "== calibrate beside gpt3-op stage, 32 wg rc=$? ($((SECONDS - t0)) s)" >> "$s"; grep -E "beside" "$out/cal.txt" >> "$s"
for v in "--chunks 1" "--chunks 4" "--chunks 4 --arbitrate 8" "--chunks 4 --arbitrate 256" "--chunks 2"; do
  f="$out/run-$(echo $v | tr -d ' -')"
  timeout 60 t3 run --preset gpt3-op-tp2 --dtype f16 --devices all --collective all-reduce --mode sequential,host --reps 3 --warmup 1 --tune off $v --trace "$f.trace.json" > "$f.txt" 2>&1
  echo "== gpt3-op-tp2 f16 $v rc=$? ($((SECONDS - t0)) s)" >> "$s"; grep -E "^sequential|^host |T_comm" "$f.txt" >> "$s"
done
echo "done ($((SECONDS - t0)) s)" >> "$s"
