#!/usr/bin/env bash
# Run 48, call 3 (two H200s): after the host link's calibration moved into the executor (the merge of
# exec-hostlink): tests/hostlink.rs on the GPUs, `t3 calibrate --devices all`, and tnlg-op-tp2 f16.
set -uo pipefail
s=$OUT/summary.txt
T3_REQUIRE_GPU=1 timeout 60 .gpu/tests/hostlink > $OUT/test-hostlink.txt 2>&1
echo "== test hostlink rc=$?" >> $s; grep -E "test result|FAILED|panicked" $OUT/test-hostlink.txt >> $s
timeout 100 t3 calibrate --devices all --reps 3 --out $OUT/zc.json > $OUT/cal.txt 2>&1
echo "== calibrate rc=$?" >> $s; grep -E "reads|streamed" $OUT/cal.txt >> $s
timeout 60 t3 run --preset tnlg-op-tp2 --dtype f16 --devices all --collective all-reduce --mode sequential,host --reps 3 --warmup 1 > $OUT/run.txt 2>&1
echo "== tnlg-op-tp2 f16 rc=$?" >> $s; grep -E "T_gemm|^sequential|^host " $OUT/run.txt >> $s
