#!/usr/bin/env bash
# Run 68 on four GPUs (kind nvidia-h200-x4, after `. .gpu/prelude.sh`), binary of c0e59d5: the link
# calibrated on the zero-copy path and on the engine link (the receiver's copy engine landing), each
# with the ring's four links at once; NCCL through host memory (`NCCL_P2P_DISABLE=1`) beside our
# reduce-scatter on the five output projections (f16, on both paths); then sequential and host mode
# at the defaults (no table) on the TP-4 presets, f16 then f32, as time leaves (STOP_AT seconds).
#   OUT=... bash docs/results/run68/four.sh PART...   (parts: link nccl defaults)
set -u
out=${OUT:-out}; mkdir -p "$out"; n=$(nvidia-smi -L | wc -l); t0=$SECONDS
ops="megagpt2-op-tp$n tnlg-op-tp$n gpt3-op-tp$n mtnlg-op-tp$n palm-op-tp$n"
for part in "$@"; do case $part in
link)
  { nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; lscpu | grep -E "Model name|Socket|NUMA node\(s\)"; } > "$out/machine.txt"
  t3 info --json > "$out/info.json" 2>&1; grep -E "host links" <(t3 info 2>&1)
  for path in zero-copy engine; do
    timeout 150 t3 calibrate --devices all --reps 3 --link-path $path --out "$out/cal-$path.json" > "$out/cal-$path.txt" 2>&1
    echo "== calibrate $path rc=$? ($((SECONDS - t0)) s)"; grep -E "streamed|reads|lands" "$out/cal-$path.txt" | cut -c1-400
  done ;;
nccl)
  shapes=$(for p in $ops; do t3 presets | awk -v p=$p '$1 == p {printf "%sx%sx%s,", $5, $6, $7}'; done)
  NCCL_P2P_DISABLE=1 timeout 120 python3 .gpu/tp_baselines.py --ranks $n --shapes ${shapes%,} --dtype f16 --json "$out/nccl-shm-f16.json" > "$out/nccl-shm-f16.txt" 2>&1
  echo "== NCCL through host memory rc=$? ($((SECONDS - t0)) s)"; grep -E "^shape|^8192" "$out/nccl-shm-f16.txt"
  for p in $ops; do for path in zero-copy engine; do
    timeout 60 t3 run --preset $p --dtype f16 --devices all --collective reduce-scatter --mode sequential --reps 3 --warmup 1 --tune off --link-path $path --verbose > "$out/$p-rs-$path.txt" 2>&1
    echo "== $p f16 reduce-scatter $path rc=$? ($((SECONDS - t0)) s)"; grep -E "T_comm  |^link|mismatch|error" "$out/$p-rs-$path.txt" | cut -c1-160
  done; done ;;
defaults)
  for d in ${DTYPES:-f16 f32}; do for p in ${PRESETS:-$(t3 presets | awk -v n=$n '$1 ~ "-tp"n"$" {print $1}')}; do
    [ $((SECONDS - t0)) -gt ${STOP_AT:-500} ] && { echo "skipped $p $d (time)"; continue; }
    timeout 90 t3 run --preset $p --dtype $d --devices all --collective all-reduce --mode sequential,host --reps 3 --warmup 1 --tune off --verbose --json "$out/$p-$d.json" > "$out/$p-$d.txt" 2>&1
    echo "== $p $d rc=$? ($((SECONDS - t0)) s)"
    grep -E "^(sequential|host) |T_comm  |T_gemm  |after GEMM|^link|mismatch|error|chunks" "$out/$p-$d.txt" | cut -c1-140
  done; done ;;
esac; done
echo "done ($((SECONDS - t0)) s)"
