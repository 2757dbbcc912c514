#!/usr/bin/env bash
# One H200: the CLI property soak (8 processes x 250 cases) and the TP-8 presets of the README's table.
set -u
out=${OUT:-out}; mkdir -p $out
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $out/gpu.txt
mkdir -p /work/main/target/release && cp .gpu/bin/t3 /work/main/target/release/t3
start=$SECONDS
for i in 1 2 3 4 5 6 7 8; do
  (cd /tmp && T3_SOAK=1 T3_SOAK_CASES=250 timeout 400 $OLDPWD/.gpu/bin/cli_props > $out/soak$i.txt 2>&1; echo "rc=$?" >> $out/soak$i.txt) &
done
wait
echo "soak: $((SECONDS - start)) s" > $out/soak-time.txt
t3 calibrate > $out/calibrate.txt 2>&1
for p in tnlg-op-tp8 gpt3-op-tp8 tnlg-fc2-tp8 gpt3-fc2-tp8; do
  t3 run --preset $p --dtype f16 --collective reduce-scatter --link-gbps 150 --gemm-grid 128 --reps 5 --tune off --json $out/$p-f16.json > $out/$p-f16.txt 2>&1
  t3 run --preset $p --dtype f32 --collective reduce-scatter --link-gbps 150 --reps 3 --tune off --json $out/$p-f32.json > $out/$p-f32.txt 2>&1
  [ $((SECONDS - start)) -gt 560 ] && break
done
echo "total: $((SECONDS - start)) s" >> $out/soak-time.txt
