#!/usr/bin/env bash
# Run 55 on two or four GPUs (kinds nvidia-h200-x2 / -x4, after `. .gpu/prelude.sh`): host mode at
# the defaults on the TP-n presets (n = the GPUs present), f16 and f32, the binaries before (t3-base,
# 47ce287) and after (t3) the link's kernels went first beside GEMM work on their shared budget and
# the last GEMM stage waited for the sends it feeds, alternating; each device's link beside a GEMM
# stage; the calibration's streamed rows (2 slots before, 4 after).
set -uo pipefail
n=$(nvidia-smi -L | wc -l)
out=$(mktemp -d); trap 'tar -C "$out" -czf "$OUT/r.tgz" .; cp "$out/summary.txt" "$OUT/" 2>/dev/null' EXIT
s="$out/summary.txt"; t0=$SECONDS
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; echo "$n GPUs"; } >> "$s"
for b in t3-base t3; do
  timeout 120 $b calibrate --devices all --reps 3 --out "$out/cal-$b.json" > "$out/cal-$b.txt" 2>&1
  echo "== $b calibrate rc=$? ($((SECONDS - t0)) s)" >> "$s"; grep -E "streamed|sending" "$out/cal-$b.txt" | sed 's/(zero-copy, [0-9]* MiB each)//' >> "$s"
done
for pd in tnlg-op-tp$n:f16 tnlg-fc2-tp$n:f16 gpt3-op-tp$n:f16 tnlg-op-tp$n:f32 tnlg-fc2-tp$n:f32 gpt3-op-tp$n:f32; do
  p=${pd%%:*}; d=${pd##*:}
  for b in t3-base t3; do
    [ $((SECONDS - t0)) -gt ${STOP_AT:-400} ] && { echo "skipped $p $d $b (time)" >> "$s"; continue; }
    f="$out/$p-$d-$b"
    timeout 90 $b run --preset $p --dtype $d --devices all --collective all-reduce --mode sequential,host --reps 3 --warmup 1 --tune off --trace "$f.trace.json" --json "$f.json" > "$f.txt" 2>&1
    echo "== $p $d $b rc=$? ($((SECONDS - t0)) s)" >> "$s"; grep -E "T_comm|^sequential|^host |^ +host:" "$f.txt" >> "$s"
  done
done
m=$((8192 / n))
timeout 120 t3 calibrate --devices all --reps 3 --mib 64 --beside-gemm ${m}x4256x2128:f16 --out "$out/cal.json" > "$out/cal.txt" 2>&1
echo "== calibrate --beside-gemm ${m}x4256x2128:f16 rc=$? ($((SECONDS - t0)) s)" >> "$s"
grep -E "beside|sending|streamed" "$out/cal.txt" | sed 's/(zero-copy, [0-9]* MiB each)//' >> "$s"
echo "done ($((SECONDS - t0)) s)" >> "$s"
