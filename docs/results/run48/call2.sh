#!/usr/bin/env bash
# Run 48, call 2: the host's topology, the streamed link (one submission per device and poll) pinned
# to each NUMA node, then host mode at the defaults on the TP-2 presets (f16 outputs) beside NCCL
# through host memory. `bash docs/results/run48/call2.sh` on kind nvidia-h200-x2 after
# `. .gpu/prelude.sh`.
set -uo pipefail
n=2
out=$(mktemp -d); trap 'tar -C "$out" -czf "$OUT/r.tgz" .; cp "$out/summary.txt" "$OUT/" 2>/dev/null' EXIT
s="$out/summary.txt"
{ nvidia-smi topo -m; lscpu | grep -iE "socket|numa|model name"; command -v numactl; } >> "$s" 2>&1
nodes=$(lscpu | awk -F: '/NUMA node\(s\)/{gsub(/ /,"",$2); print $2}')
echo "== calibrate (no pinning)" >> "$s"
timeout 120 t3 calibrate --devices all --reps 3 --out "$out/zc.json" > "$out/cal.txt" 2>&1
echo "rc=$?" >> "$s"; grep -E "MiB|streamed" "$out/cal.txt" >> "$s"
if command -v numactl >/dev/null; then for node in $(seq 0 $(( ${nodes:-1} - 1 ))); do
  echo "== calibrate on node $node" >> "$s"
  timeout 120 numactl --cpunodebind=$node --membind=$node t3 calibrate --devices all --reps 3 --out "$out/zc-$node.json" > "$out/cal-$node.txt" 2>&1
  echo "rc=$?" >> "$s"; grep -E "streamed" "$out/cal-$node.txt" >> "$s"
done; fi
for p in tnlg-op-tp$n gpt3-op-tp$n tnlg-fc2-tp$n; do
  timeout 90 t3 run --preset $p --dtype f16 --devices all --collective all-reduce --mode sequential,host --reps 3 --warmup 1 --json "$out/$p.json" > "$out/$p.txt" 2>&1
  echo "== $p f16 all-reduce rc=$?" >> "$s"
  grep -E "link |T_gemm|T_comm|T_seq|^sequential|^host |chunks" "$out/$p.txt" >> "$s"
  timeout 60 t3 run --preset $p --dtype f16 --devices all --collective reduce-scatter --mode sequential --reps 3 --warmup 1 --json "$out/$p-rs.json" > "$out/$p-rs.txt" 2>&1
  echo "== $p f16 reduce-scatter rc=$?" >> "$s"; grep -E "T_comm" "$out/$p-rs.txt" >> "$s"
done
echo "== NCCL through host memory (NCCL_P2P_DISABLE=1)" >> "$s"
NCCL_P2P_DISABLE=1 timeout 90 python3 .gpu/tp_baselines.py --ranks $n --shapes 8192x4256x$((4256/n)),8192x12288x$((12288/n)),8192x4256x$((17024/n)) --dtype f16 --json "$out/nccl-shm-f16.json" > "$out/nccl-shm-f16.txt" 2>&1
echo "nccl rc=$?" >> "$s"; tail -12 "$out/nccl-shm-f16.txt" >> "$s"
