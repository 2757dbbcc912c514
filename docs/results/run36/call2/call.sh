# Run 36 call 2: fused mode with the spares as the trigger in call 1's best configuration beside encoded and sequential, f16 and f32, the four TP-8 presets of issue 13.
set -u
o=$OUT/r; mkdir -p $o
run() { # name modes extra-args env...
  n=$1; m=$2; x=$3; shift 3
  env "$@" timeout ${TO:-70} t3 run --collective reduce-scatter --reduce update --link-gbps 150 --mode $m --reps 3 --dtype ${DT:-f16} $x --json $o/$n.json > $o/$n.txt 2>&1
  echo "== $n rc=$? ${DT:-f16} $x $*" >> $OUT/summary.txt
  grep -E "^(baselines|           T_|sequential|encoded|fused|error|Error)" $o/$n.txt | cut -c1-150 >> $OUT/summary.txt
  tar czf $OUT/r.tgz -C $OUT r
}
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv > $o/gpu.txt 2>&1
t3 calibrate > $o/calibrate.txt 2>&1; echo "calibrate rc=$?" >> $OUT/summary.txt
. docs/results/run36/call2/sweep.sh
W="T3_FUSED_TRIGGER=spares T3_FUSED_SPARE_DISPATCH=own ${BEST:-T3_FUSED_GRID=132 T3_FUSED_PIECES=64 T3_FUSED_SPARES=264 T3_FUSED_PUT=coherent}"
# Encoded on the persistent grid in f16 (run 29: it pays there; fused takes its own knobs, not --gemm-grid).
for p in tnlg-op-tp8 gpt3-op-tp8 tnlg-fc2-tp8; do
  run f16-$p sequential,encoded,fused "--preset $p --chunks 1 --gemm-grid 128" $W
done
TO=200 run f16-gpt3-fc2-tp8 sequential,encoded,fused "--preset gpt3-fc2-tp8 --chunks 1" $W
for p in tnlg-op-tp8 gpt3-op-tp8 tnlg-fc2-tp8; do
  DT=f32 run f32-$p sequential,encoded,fused "--preset $p --chunks 1" $W
done
