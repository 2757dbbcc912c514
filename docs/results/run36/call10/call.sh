# Run 36 call 10: call 9 again (the final build), with a longer limit for f16 gpt3-fc2 and without call 9's f32 gpt3-fc2 and committed-fused rows: every TP-8 preset of issue 13, f16 and f32, sequential, encoded and fused (spares as the trigger, the fair 64 pieces) in one `t3 run` each; fused as committed (the triggering epilogue) beside it.
set -u
o=$OUT/r; mkdir -p $o
run() { # name modes extra-args env...
  n=$1; m=$2; x=$3; shift 3
  s0=$(date +%s)
  env "$@" timeout ${TO:-70} t3 run --collective reduce-scatter --reduce update --link-gbps 150 --mode $m --reps 3 --dtype ${DT:-f16} $x --json $o/$n.json > $o/$n.txt 2>&1
  echo "== $n rc=$? $(( $(date +%s) - s0 )) s ${DT:-f16} $x $*" >> $OUT/summary.txt
  grep -E "^(baselines|           T_|sequential|encoded|fused|error|Error|  T_)" $o/$n.txt | cut -c1-150 >> $OUT/summary.txt
  tar czf $OUT/r.tgz -C $OUT r
}
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv > $o/gpu.txt 2>&1
t3 calibrate > $o/calibrate.txt 2>&1; echo "calibrate rc=$?" >> $OUT/summary.txt
W="T3_FUSED_TRIGGER=spares T3_FUSED_SPARE_DISPATCH=own T3_FUSED_PUT=coherent T3_FUSED_PIECES=64"
for p in tnlg-op-tp8 gpt3-op-tp8 tnlg-fc2-tp8; do
  run f16-$p sequential,encoded,fused "--preset $p --chunks 1 --gemm-grid 128" $W T3_FUSED_GRID=132 T3_FUSED_SPARES=396
done
TO=250 run f16-gpt3-fc2-tp8 sequential,encoded,fused "--preset gpt3-fc2-tp8 --chunks 1" $W T3_FUSED_GRID=132 T3_FUSED_SPARES=396
export DT=f32
for p in tnlg-op-tp8 gpt3-op-tp8 tnlg-fc2-tp8; do
  TO=150 run f32-$p sequential,encoded,fused "--preset $p --chunks 1" $W T3_FUSED_GRID=256 T3_FUSED_SPARES=528
done
