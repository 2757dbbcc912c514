#!/usr/bin/env bash
# Run 48, call 5 (two H200s): host mode at the defaults on the TP-2 presets in f32 (binaries of fc80918).
set -uo pipefail
s=$OUT/summary.txt
for p in tnlg-op-tp2 tnlg-fc2-tp2 gpt3-op-tp2; do
  timeout 60 t3 run --preset $p --dtype f32 --devices all --collective all-reduce --mode sequential,host --reps 3 --warmup 1 > $OUT/$p-f32.txt 2>&1
  echo "== $p f32 rc=$?" >> $s; grep -E "T_gemm|^sequential|^host |^workload" $OUT/$p-f32.txt >> $s
done
