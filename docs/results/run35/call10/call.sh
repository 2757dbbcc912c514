# Run 35 call 10: the per-mode, per-preset table at TP 8, 150 GB/s, reduce-scatter with update, 1 chunk per rank: sequential, encoded (grid 128) and fused as committed and in run 35's best configuration, f32 and f16.
set -u
o=$OUT/r; mkdir -p $o
run() { # name modes extra-args env...
  n=$1; m=$2; x=$3; shift 3
  env "$@" timeout 100 t3 run --collective reduce-scatter --reduce update --link-gbps 150 --mode $m --reps 3 --dtype ${DT:-f16} $x --json $o/$n.json > $o/$n.txt 2>&1
  echo "== $n rc=$? ${DT:-f16} $x $*" >> $OUT/summary.txt
  grep -E "^(baselines|           T_|sequential|encoded|fused|error|Error)" $o/$n.txt | cut -c1-150 >> $OUT/summary.txt
  tar czf $OUT/r.tgz -C $OUT r
}
t3 calibrate > $o/calibrate.txt 2>&1; echo "calibrate rc=$?" >> $OUT/summary.txt
B="T3_FUSED_SPARE_DISPATCH=own T3_FUSED_HELP=idle T3_FUSED_PUT=coherent T3_FUSED_GRID=132 T3_FUSED_PIECES=128 T3_FUSED_SPARES=264"
DT=f16 run best-gpt3-fc2-f16 sequential,encoded,fused "--preset gpt3-fc2-tp8 --chunks 1 --gemm-grid 128" $B
DT=f16 run def-gpt3-fc2-f16 sequential,fused "--preset gpt3-fc2-tp8 --chunks 1"
for p in tnlg-op-tp8 gpt3-op-tp8 tnlg-fc2-tp8; do
  DT=f32 run def-$p-f32 sequential,encoded,fused "--preset $p --chunks 1"
  DT=f32 run best-$p-f32 sequential,fused "--preset $p --chunks 1" $B
done
DT=f32 run def-gpt3-fc2-f32 sequential,encoded,fused "--preset gpt3-fc2-tp8 --chunks 1"
DT=f32 run best-gpt3-fc2-f32 sequential,fused "--preset gpt3-fc2-tp8 --chunks 1" $B
