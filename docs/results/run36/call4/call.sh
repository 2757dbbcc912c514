# Run 36 call 4: spares as the trigger in the fair configuration (64 pieces of 64 invocations = the link's 16 step workgroups' lanes per transfer) beside encoded and sequential in the same `t3 run`: tnlg-op f16 at 528 spares; f32 on a grid of 256 with 528 spares; call 3's timed-out f32 run again.
set -u
o=$OUT/r; mkdir -p $o
run() { # name modes extra-args env...
  n=$1; m=$2; x=$3; shift 3
  s0=$(date +%s)
  env "$@" timeout ${TO:-70} t3 run --collective reduce-scatter --reduce update --link-gbps 150 --mode $m --reps 3 --dtype ${DT:-f16} $x --json $o/$n.json > $o/$n.txt 2>&1
  echo "== $n rc=$? $(( $(date +%s) - s0 )) s ${DT:-f16} $x $*" >> $OUT/summary.txt
  grep -E "^(baselines|           T_|sequential|encoded|fused|error|Error)" $o/$n.txt | cut -c1-150 >> $OUT/summary.txt
  tar czf $OUT/r.tgz -C $OUT r
}
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv > $o/gpu.txt 2>&1
t3 calibrate > $o/calibrate.txt 2>&1; echo "calibrate rc=$?" >> $OUT/summary.txt
W="T3_FUSED_TRIGGER=spares T3_FUSED_SPARE_DISPATCH=own T3_FUSED_PUT=coherent T3_FUSED_PIECES=64"
run f16-tnlg-op-s528 sequential,encoded,fused "--preset tnlg-op-tp8 --chunks 1 --gemm-grid 128" $W T3_FUSED_GRID=132 T3_FUSED_SPARES=528
export DT=f32
for p in tnlg-op-tp8 gpt3-op-tp8 tnlg-fc2-tp8; do
  TO=150 run f32-$p sequential,encoded,fused "--preset $p --chunks 1" $W T3_FUSED_GRID=256 T3_FUSED_SPARES=528
done
TO=150 run f32-default-fused sequential,encoded,fused "--preset tnlg-op-tp8 --chunks 1"
