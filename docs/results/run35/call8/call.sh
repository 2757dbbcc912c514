# Run 35 call 8: more pieces, fewer spares, coherent; spares of their own with as many lanes per transfer as a step gets (64 pieces of 64 invocations), 264 spares (two per SM beside the GEMM).
set -u
o=$OUT/r; mkdir -p $o
run() { # name modes extra-args env...
  n=$1; m=$2; x=$3; shift 3
  env "$@" timeout 40 t3 run --collective reduce-scatter --reduce update --link-gbps 150 --mode $m --reps 3 --dtype ${DT:-f16} $x --json $o/$n.json > $o/$n.txt 2>&1
  echo "== $n rc=$? $x $*" >> $OUT/summary.txt
  grep -E "^(sequential|encoded|fused|error|Error)" $o/$n.txt | cut -c1-150 >> $OUT/summary.txt
  tar czf $OUT/r.tgz -C $OUT r
}
t3 calibrate > $o/calibrate.txt 2>&1; echo "calibrate rc=$?" >> $OUT/summary.txt
p=tnlg-op-tp8
E="T3_FUSED_SPARE_DISPATCH=own T3_FUSED_HELP=idle T3_FUSED_PUT=coherent"
run p128-g132-s264 sequential,fused "--preset $p --chunks 1" $E T3_FUSED_GRID=132 T3_FUSED_PIECES=128 T3_FUSED_SPARES=264
run p256-g132-s264 sequential,fused "--preset $p --chunks 1" $E T3_FUSED_GRID=132 T3_FUSED_PIECES=256 T3_FUSED_SPARES=264
run p64-g132-s132 sequential,fused "--preset $p --chunks 1" $E T3_FUSED_GRID=132 T3_FUSED_PIECES=64 T3_FUSED_SPARES=132
run p64-g264-s264 sequential,fused "--preset $p --chunks 1" $E T3_FUSED_GRID=264 T3_FUSED_PIECES=64 T3_FUSED_SPARES=264
