#!/usr/bin/env bash
# Run 46: the zero-copy link with 2-byte outputs on real GPUs, and the tests on real devices.
# `bash docs/results/run46/call.sh PART` after `. .gpu/prelude.sh`, on a four-GPU kind:
#   topo   the bus (nvidia-smi topo, NUMA), t3 info, the GPU tests (2-byte outputs, devices, host
#          link, collectives), calibration on all four and on pairs 0,1 and 0,2
#   tp4    TP-4 presets on all four GPUs (f16 with f16 outputs, f32), host mode at the defaults, the
#          reduce-scatter alone in sequential for NCCL's comparison, NCCL through host memory
#   tp2    the same on GPUs 0,1 (TP-2), and every collective across 2, 3 and 4 GPUs checked
# Test binaries ship as .gpu/bin/test-NAME (cargo test --release --no-run). Results: $OUT/r.tgz, $OUT/summary.txt.
set -uo pipefail
part=${1:?part}
out=$(mktemp -d); trap 'tar -C "$out" -czf "$OUT/r.tgz" .; cp "$out/summary.txt" "$OUT/" 2>/dev/null' EXIT
s="$out/summary.txt"
nvidia-smi --query-gpu=index,name,pci.bus_id,pcie.link.gen.max,pcie.link.width.max --format=csv,noheader >> "$s"
presets() { # $1 = TP, $2 = devices
  n=$1; devs=$2
  for d in f16 f32; do for p in tnlg-op-tp$n gpt3-op-tp$n tnlg-fc2-tp$n; do
    name=$p-$d
    timeout 90 t3 run --preset $p --dtype $d --out-dtype $d --devices $devs --collective all-reduce --mode sequential,host --reps 3 --warmup 1 --json "$out/$name.json" > "$out/$name.txt" 2>&1
    echo "== $name all-reduce rc=$?" >> "$s"
    grep -E "^workload|link|T_gemm|T_comm|^sequential|^host " "$out/$name.txt" | head -14 >> "$s"
    timeout 60 t3 run --preset $p --dtype $d --out-dtype $d --devices $devs --collective reduce-scatter --mode sequential --reps 3 --warmup 1 --json "$out/$name-rs.json" > "$out/$name-rs.txt" 2>&1
    echo "== $name reduce-scatter rc=$?" >> "$s"
    grep -E "T_gemm|T_comm" "$out/$name-rs.txt" | head -4 >> "$s"
  done; done
  for d in f16 f32; do
    NCCL_P2P_DISABLE=1 timeout 90 python3 .gpu/tp_baselines.py --ranks $n --shapes 8192x4256x$((4256/n)),8192x12288x$((12288/n)),8192x4256x$((17024/n)) --dtype $d --json "$out/nccl-shm-$n-$d.json" > "$out/nccl-shm-$n-$d.txt" 2>&1
    echo "== nccl shm $n $d rc=$?" >> "$s"; tail -12 "$out/nccl-shm-$n-$d.txt" >> "$s"
  done
}
case $part in
topo)
  nvidia-smi topo -m >> "$s" 2>&1
  lscpu | grep -iE "model name|numa|socket" >> "$s"
  t3 info > "$out/info.txt" 2>&1; grep -iE "H200|H100|vulkan|zero-copy|import" "$out/info.txt" | head -12 >> "$s"
  for t in outputs devices hostlink; do
    T3_REQUIRE_GPU=1 timeout 150 .gpu/bin/test-$t > "$out/test-$t.txt" 2>&1
    echo "== test $t rc=$?" >> "$s"; grep -E "^test result|FAILED|panicked" "$out/test-$t.txt" | head -8 >> "$s"
  done
  for devs in all 0,1 0,2; do
    timeout 120 t3 calibrate --devices $devs --reps 3 --out "$out/cal-$devs.json" > "$out/cal-$devs.txt" 2>&1
    echo "== calibrate $devs rc=$?" >> "$s"; grep -E "zero-copy|streamed|ring|at once" "$out/cal-$devs.txt" | head -30 >> "$s"
  done ;;
tp4) presets 4 all ;;
tp2)
  presets 2 0,1
  for devs in 0,1 0,1,2 all; do for c in reduce-scatter direct-reduce-scatter all-gather all-reduce; do for d in f32 f16; do
    r=$(( $(echo $devs | tr -cd , | wc -c) + 1 )); [ $devs = all ] && r=4
    timeout 60 t3 run --shape 1000x333x257 --ranks $r --chunks 3 --dtype $d --out-dtype $d --devices $devs --collective $c --mode sequential,host --reps 1 --warmup 0 > "$out/check-$devs-$c-$d.txt" 2>&1
    echo "check $devs $c $d rc=$?" >> "$s"
  done; done; done ;;
esac
