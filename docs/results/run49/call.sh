#!/usr/bin/env bash
# Run 49: one H200 after the standalone tracked GEMM and the calibration step moved into the executor
# and fused mode's parts into one field: the GEMM and coopmat2 test binaries on the GPU
# (T3_REQUIRE_GPU=1: no skipping), then three TP-8 presets, every mode, as run 47 ran them.
# `bash docs/results/run49/call.sh` after `. .gpu/prelude.sh`; results in $OUT.
set -u
out=${OUT:-out}; mkdir -p $out
s=$out/summary.txt
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $s
start=$SECONDS
for t in gemm coopmat2; do
  T3_REQUIRE_GPU=1 timeout 120 .gpu/tests/$t > $out/test-$t.txt 2>&1
  echo "== test $t rc=$? ($((SECONDS - start)) s)" >> $s; grep -E "test result|FAILED|panicked" $out/test-$t.txt >> $s
done
t3 calibrate > $out/calibrate.txt 2>&1
for p in tnlg-op-tp8 gpt3-op-tp8 tnlg-fc2-tp8; do
  timeout 150 t3 run --preset $p --dtype f16 --collective reduce-scatter --link-gbps 150 --gemm-grid 128 --reps 5 --tune off --json $out/$p-f16.json > $out/$p-f16.txt 2>&1
  echo "== $p f16 rc=$? ($((SECONDS - start)) s)" >> $s
  grep -E "^(sequential|host|encoded|fused) |T_gemm|^workload" $out/$p-f16.txt >> $s
done
