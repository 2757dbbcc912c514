# Run 35 call 11: the final build (after review): fused as committed and in run 35's best f16 configuration beside encoded, f16, three presets.
set -u
o=$OUT/r; mkdir -p $o
run() { # name modes extra-args env...
  n=$1; m=$2; x=$3; shift 3
  env "$@" timeout 60 t3 run --collective reduce-scatter --reduce update --link-gbps 150 --mode $m --reps 3 --dtype ${DT:-f16} $x --json $o/$n.json > $o/$n.txt 2>&1
  echo "== $n rc=$? ${DT:-f16} $x $*" >> $OUT/summary.txt
  grep -E "^(baselines|           T_|sequential|encoded|fused|error|Error)" $o/$n.txt | cut -c1-150 >> $OUT/summary.txt
  tar czf $OUT/r.tgz -C $OUT r
}
t3 calibrate > $o/calibrate.txt 2>&1; echo "calibrate rc=$?" >> $OUT/summary.txt
B="T3_FUSED_SPARE_DISPATCH=own T3_FUSED_HELP=idle T3_FUSED_PUT=coherent T3_FUSED_GRID=132 T3_FUSED_PIECES=128 T3_FUSED_SPARES=264"
for p in tnlg-op-tp8 gpt3-op-tp8 tnlg-fc2-tp8; do
  run def-$p sequential,encoded,fused "--preset $p --chunks 1 --gemm-grid 128"
  run best-$p sequential,fused "--preset $p --chunks 1" $B
done
