#!/usr/bin/env bash
# Run 50: four H200s (kind nvidia-h200-x4), binaries of b429d81: the zero-copy link streamed with one
# submission per device and poll, then host mode at the defaults on the TP-4 presets (f16 outputs
# for f16 layers, f32 for f32), each preset's reduce-scatter alone, and NCCL through host memory.
# `bash docs/results/run50/call.sh` after `. .gpu/prelude.sh`; summary in $OUT/summary.txt.
set -uo pipefail
n=4
out=$(mktemp -d); trap 'tar -C "$out" -czf "$OUT/r.tgz" .; cp "$out/summary.txt" "$OUT/" 2>/dev/null' EXIT
s="$out/summary.txt"
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; lscpu | grep -E "Socket|NUMA node\(s\)"; } >> "$s"
start=$SECONDS
timeout 150 t3 calibrate --devices all --reps 3 --out "$out/zc.json" > "$out/cal.txt" 2>&1
echo "== calibrate rc=$? ($((SECONDS - start)) s)" >> "$s"; grep -E "streamed|reads" "$out/cal.txt" >> "$s"
for d in f16 f32; do for p in tnlg-op-tp$n gpt3-op-tp$n tnlg-fc2-tp$n; do
  timeout 80 t3 run --preset $p --dtype $d --devices all --collective all-reduce --mode sequential,host --reps 3 --warmup 1 --json "$out/$p-$d.json" > "$out/$p-$d.txt" 2>&1
  echo "== $p $d all-reduce rc=$? ($((SECONDS - start)) s)" >> "$s"
  grep -E "T_gemm|^sequential|^host |^workload" "$out/$p-$d.txt" >> "$s"
  if [ $d = f16 ]; then
    timeout 50 t3 run --preset $p --dtype $d --devices all --collective reduce-scatter --mode sequential --reps 3 --warmup 1 --json "$out/$p-$d-rs.json" > "$out/$p-$d-rs.txt" 2>&1
    echo "== $p $d reduce-scatter rc=$?" >> "$s"; grep -E "T_comm" "$out/$p-$d-rs.txt" >> "$s"
  fi
done; done
echo "== NCCL through host memory (NCCL_P2P_DISABLE=1) ($((SECONDS - start)) s)" >> "$s"
NCCL_P2P_DISABLE=1 timeout 90 python3 .gpu/tp_baselines.py --ranks $n --shapes 8192x4256x$((4256/n)),8192x12288x$((12288/n)),8192x4256x$((17024/n)) --dtype f16 --json "$out/nccl-shm-f16.json" > "$out/nccl-shm-f16.txt" 2>&1
echo "nccl rc=$?" >> "$s"; grep -E "^shape|^8192" "$out/nccl-shm-f16.txt" >> "$s"
echo "total $((SECONDS - start)) s" >> "$s"
