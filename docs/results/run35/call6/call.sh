# Run 35 call 6: fused mode with spares of their own that the GEMM's workgroups leave the pieces to while any is alive (T3_FUSED_HELP=idle).
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
for p in tnlg-op-tp8 gpt3-op-tp8 tnlg-fc2-tp8; do
  run enc-$p sequential,encoded,fused "--preset $p --chunks 1 --gemm-grid 128"
  run idle132-$p sequential,fused "--preset $p --chunks 1" T3_FUSED_SPARE_DISPATCH=own T3_FUSED_GRID=132 T3_FUSED_HELP=idle
  run idletile-$p sequential,fused "--preset $p --chunks 1" T3_FUSED_SPARE_DISPATCH=own T3_FUSED_HELP=idle
done
run idle128-tnlg-op-tp8 sequential,fused "--preset tnlg-op-tp8 --chunks 1" T3_FUSED_SPARE_DISPATCH=own T3_FUSED_GRID=128 T3_FUSED_HELP=idle
run idle132s32-tnlg-op-tp8 sequential,fused "--preset tnlg-op-tp8 --chunks 1" T3_FUSED_SPARE_DISPATCH=own T3_FUSED_GRID=132 T3_FUSED_HELP=idle T3_FUSED_SPARES=32
run idle132s264-tnlg-op-tp8 sequential,fused "--preset tnlg-op-tp8 --chunks 1" T3_FUSED_SPARE_DISPATCH=own T3_FUSED_GRID=132 T3_FUSED_HELP=idle T3_FUSED_SPARES=264
