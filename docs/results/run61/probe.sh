#!/usr/bin/env bash
# Run 61 call 1 (two GPUs): the polled link at a chunk's grain (slices of 1-8 MiB, a slot per slice:
# none reused within a kernel), flags in the BAR of the device that polls them relayed by a host
# thread; each direction alone and both at once, alone and with a GEMM after the link's kernels in
# each device's pass (`bench-polled --beside-gemm`): whether a receiver waiting beside GEMM work
# keeps the link's rate and the GEMM its own. Then the zero-copy link's calibration for reference.
set -u
out=${OUT:-out}; mkdir -p "$out"
common="--devices all --memory bar --flag-load atomic --reps 3 --timeout-s 4"
run() {
  name=$1; shift
  echo "== $name: bench-polled $common $*"
  timeout 150 bench-polled $common "$@" --json "$out/$name.jsonl" > "$out/$name.txt" 2>&1
  echo "rc=$?"; grep -v '^device' "$out/$name.txt"
}
run chunk2m --lanes 16 --slots 8 --slice-kib 2048 --mib 256 --only "0 -> 1,1 -> 0,<->" --beside-gemm 16384x16384x8192:f16
run chunk8m --lanes 16 --slots 2 --slice-kib 8192 --mib 256 --only "<->" --beside-gemm 16384x16384x8192:f16
run lanes32 --lanes 32 --slots 8 --slice-kib 1024 --mib 256 --only "<->" --beside-gemm 16384x16384x8192:f16
run lanes8 --lanes 8 --slots 8 --slice-kib 4096 --mib 256 --only "<->" --beside-gemm 16384x16384x8192:f16
run small --lanes 16 --slots 4 --slice-kib 1024 --mib 64 --only "<->" --beside-gemm 8192x8192x8192:f16
run slice128 --lanes 16 --slots 128 --slice-kib 128 --mib 256 --only "<->" --beside-gemm 16384x16384x8192:f16
echo "== t3 calibrate --devices all --reps 3 --mib 64"
(cd "$out" && timeout 200 t3 calibrate --devices all --reps 3 --mib 64 > calibrate.txt 2>&1; echo "rc=$?"; grep -iE "both|alone|stream" calibrate.txt | head -20)
