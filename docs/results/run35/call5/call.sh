# Run 35 call 5: where fused mode's time goes in f16: one rank (the fused GEMM and its epilogue, no transfers) against the tracked GEMM; fewer spares of their own.
set -u
o=$OUT/r; mkdir -p $o
run() { # name modes extra-args env...
  n=$1; m=$2; x=$3; shift 3
  env "$@" timeout 70 t3 run --collective reduce-scatter --reduce update --link-gbps 150 --mode $m --reps 3 --dtype ${DT:-f16} $x --json $o/$n.json > $o/$n.txt 2>&1
  echo "== $n rc=$? $x $*" >> $OUT/summary.txt
  grep -E "^(baselines|           T_|sequential|encoded|fused|error|Error)" $o/$n.txt | cut -c1-150 >> $OUT/summary.txt
  tar czf $OUT/r.tgz -C $OUT r
}
t3 calibrate > $o/calibrate.txt 2>&1; echo "calibrate rc=$?" >> $OUT/summary.txt
run one-store sequential,fused "--shape 8192x4256x532 --ranks 1 --chunks 8"
run one-coherent sequential,fused "--shape 8192x4256x532 --ranks 1 --chunks 8" T3_FUSED_PUT=coherent
run one-store-gpt3 sequential,fused "--shape 8192x12288x1536 --ranks 1 --chunks 8"
run own8 sequential,fused "--preset tnlg-op-tp8 --chunks 1" T3_FUSED_SPARE_DISPATCH=own T3_FUSED_SPARES=8
run own32 sequential,fused "--preset tnlg-op-tp8 --chunks 1" T3_FUSED_SPARE_DISPATCH=own T3_FUSED_SPARES=32
run gemm8 sequential,fused "--preset tnlg-op-tp8 --chunks 1" T3_FUSED_SPARES=8
run gemm0 sequential,fused "--preset tnlg-op-tp8 --chunks 1" T3_FUSED_SPARES=0
DT=f32 run def-f32 sequential,encoded,fused "--preset tnlg-op-tp8 --chunks 1"
