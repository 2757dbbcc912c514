#!/usr/bin/env bash
# Run 54, call 9 (kind nvidia-h200-x2, the machine of call 8, after `. .gpu/prelude.sh`): the link at
# 256 workgroups, the reduce-scatters at 256 beside NCCL again, host mode in f32 at the kernels'
# budgets 16 and 128, then `t3 tune` of sequential and host mode on the other TP-2 points.
set -uo pipefail
out=$(mktemp -d); trap 'tar -C "$out" -czf "$OUT/r.tgz" .; cp "$out/summary.txt" "$OUT/" 2>/dev/null' EXIT
s="$out/summary.txt"; t0=$SECONDS
timeout 90 t3 calibrate --devices all --reps 3 --link-workgroups 256 --out "$out/cal-256.json" > "$out/cal-256.txt" 2>&1
echo "== calibrate --link-workgroups 256 rc=$? ($((SECONDS - t0)) s)" >> "$s"
grep -E "sending|streamed|zero-copy\)" "$out/cal-256.txt" | sed 's/(zero-copy, [0-9]* MiB each)//' >> "$s"
for p in tnlg-op-tp2 gpt3-op-tp2 tnlg-fc2-tp2; do
  timeout 60 t3 run --preset $p --dtype f16 --devices all --collective reduce-scatter --mode sequential --reps 3 --warmup 1 --link-workgroups 256 --tune off > "$out/$p-rs-256.txt" 2>&1
  echo "== $p f16 reduce-scatter --link-workgroups 256 rc=$?" >> "$s"; grep -E "T_comm" "$out/$p-rs-256.txt" >> "$s"
done
NCCL_P2P_DISABLE=1 timeout 90 python3 .gpu/tp_baselines.py --ranks 2 --shapes 8192x4256x2128,8192x12288x6144,8192x4256x8512 --dtype f16 --json "$out/nccl-shm-f16.json" > "$out/nccl-shm-f16.txt" 2>&1
echo "== NCCL through host memory rc=$? ($((SECONDS - t0)) s)" >> "$s"; tail -4 "$out/nccl-shm-f16.txt" >> "$s"
for p in tnlg-op-tp2 tnlg-fc2-tp2 gpt3-op-tp2; do for w in 16 128; do
  [ $((SECONDS - t0)) -gt 250 ] && { echo "skipped host f32 $p $w (time)" >> "$s"; continue; }
  timeout 90 t3 run --preset $p --dtype f32 --devices all --collective all-reduce --mode sequential,host --reps 3 --warmup 1 --link-workgroups $w --tune off > "$out/$p-f32-ar-$w.txt" 2>&1
  echo "== $p f32 all-reduce --link-workgroups $w rc=$?" >> "$s"; grep -E "T_comm|^sequential|^host " "$out/$p-f32-ar-$w.txt" >> "$s"
done; done
for pd in gpt3-op-tp2:f16 tnlg-op-tp2:f32 tnlg-fc2-tp2:f32; do
  p=${pd%%:*}; d=${pd##*:}
  [ $((SECONDS - t0)) -gt 440 ] && { echo "skipped tune $p $d (time)" >> "$s"; continue; }
  timeout 90 t3 tune --presets $p --dtype $d --devices all --mode sequential,host --budget-s 35 --out "$out/tune.json" > "$out/tune-$p-$d.txt" 2>&1
  echo "== tune $p $d rc=$? ($((SECONDS - t0)) s)" >> "$s"; sed -n '/ ranks, /,$p' "$out/tune-$p-$d.txt" >> "$s"
done
echo "done ($((SECONDS - t0)) s)" >> "$s"
