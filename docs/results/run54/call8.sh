#!/usr/bin/env bash
# Run 54, call 8 (kind nvidia-h200-x2, after `. .gpu/prelude.sh`): the link on two H200s at the
# send and landing kernels' budgets 16 and 128 (each device's both-ways ceiling beside the streamed
# rates), the TP-2 output projections' reduce-scatter at both budgets beside NCCL through host
# memory, host mode at both budgets, then `t3 tune` of sequential and host mode on two GPUs.
set -uo pipefail
out=$(mktemp -d); trap 'tar -C "$out" -czf "$OUT/r.tgz" .; cp "$out/summary.txt" "$OUT/" 2>/dev/null' EXIT
s="$out/summary.txt"; t0=$SECONDS
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >> "$s"
for w in 16 128; do
  timeout 90 t3 calibrate --devices all --reps 3 --link-workgroups $w --out "$out/cal-$w.json" > "$out/cal-$w.txt" 2>&1
  echo "== calibrate --link-workgroups $w rc=$? ($((SECONDS - t0)) s)" >> "$s"
  grep -E "sending|streamed|zero-copy\)" "$out/cal-$w.txt" | sed 's/(zero-copy, [0-9]* MiB each)//' >> "$s"
done
for p in tnlg-op-tp2 gpt3-op-tp2 tnlg-fc2-tp2; do for w in 16 128; do
  timeout 60 t3 run --preset $p --dtype f16 --devices all --collective reduce-scatter --mode sequential --reps 3 --warmup 1 --link-workgroups $w --tune off --json "$out/$p-rs-$w.json" > "$out/$p-rs-$w.txt" 2>&1
  echo "== $p f16 reduce-scatter --link-workgroups $w rc=$?" >> "$s"; grep -E "T_comm|chunks" "$out/$p-rs-$w.txt" >> "$s"
done; done
echo "== NCCL through host memory (NCCL_P2P_DISABLE=1) ($((SECONDS - t0)) s)" >> "$s"
NCCL_P2P_DISABLE=1 timeout 90 python3 .gpu/tp_baselines.py --ranks 2 --shapes 8192x4256x2128,8192x12288x6144,8192x4256x8512 --dtype f16 --json "$out/nccl-shm-f16.json" > "$out/nccl-shm-f16.txt" 2>&1
echo "nccl rc=$?" >> "$s"; tail -12 "$out/nccl-shm-f16.txt" >> "$s"
for p in tnlg-op-tp2 gpt3-op-tp2 tnlg-fc2-tp2; do for w in 16 128; do
  [ $((SECONDS - t0)) -gt 330 ] && { echo "skipped host $p $w (time)" >> "$s"; continue; }
  timeout 60 t3 run --preset $p --dtype f16 --devices all --collective all-reduce --mode sequential,host --reps 3 --warmup 1 --link-workgroups $w --tune off --json "$out/$p-ar-$w.json" > "$out/$p-ar-$w.txt" 2>&1
  echo "== $p f16 all-reduce --link-workgroups $w rc=$?" >> "$s"; grep -E "T_gemm|T_comm|^sequential|^host |chunks" "$out/$p-ar-$w.txt" >> "$s"
done; done
for p in tnlg-op-tp2 tnlg-fc2-tp2; do
  [ $((SECONDS - t0)) -gt 450 ] && { echo "skipped tune $p (time)" >> "$s"; continue; }
  timeout 80 t3 tune --presets $p --dtype f16 --devices all --mode sequential,host --budget-s 40 --out "$out/tune.json" > "$out/tune-$p.txt" 2>&1
  echo "== tune $p f16 rc=$? ($((SECONDS - t0)) s)" >> "$s"; sed -n '/ ranks, /,$p' "$out/tune-$p.txt" >> "$s"
  timeout 40 t3 run --preset $p --dtype f16 --devices all --mode sequential,host --reps 3 --tune "$out/tune.json" > "$out/run-$p.txt" 2>&1
  echo "== run $p f16 with the table rc=$?" >> "$s"; grep -E "^sequential|^host |fell back|tune" "$out/run-$p.txt" >> "$s"
done
echo "done ($((SECONDS - t0)) s)" >> "$s"
