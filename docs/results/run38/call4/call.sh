# Run 38 call 4 (unguarded SIMT loads): where fused mode's f32 time goes now that its spares fit beside two GEMM workgroups per SM: its GEMM a workgroup per tile (T3_FUSED_GRID=0) against the grid of 264, and 264 / 132 spares against the default 396 (only two fit per SM).
set -u
o=$OUT/r; mkdir -p $o
run() { # name modes extra-args env...
  n=$1; m=$2; x=$3; shift 3
  s0=$(date +%s)
  env "$@" timeout ${TO:-90} t3 run --collective reduce-scatter --reduce update --link-gbps 150 --mode $m --reps 3 --dtype ${DT:-f16} $x --json $o/$n.json > $o/$n.txt 2>&1
  echo "== $n rc=$? $(( $(date +%s) - s0 )) s ${DT:-f16} $x $*" >> $OUT/summary.txt
  grep -E "^(fused      |baselines|fused own|           seq|sequential|encoded|fused  |error|Error|  T_)" $o/$n.txt | cut -c1-170 >> $OUT/summary.txt
  tar czf $OUT/r.tgz -C $OUT r
}
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv > $o/gpu.txt 2>&1; cat $o/gpu.txt >> $OUT/summary.txt
t3 calibrate > $o/calibrate.txt 2>&1; echo "calibrate rc=$?" >> $OUT/summary.txt
DT=f32 run f32-tnlg-op-s264 sequential,fused "--preset tnlg-op-tp8 --chunks 1" T3_FUSED_SPARES=264
DT=f32 run f32-tnlg-op-s132 sequential,fused "--preset tnlg-op-tp8 --chunks 1" T3_FUSED_SPARES=132
DT=f32 run f32-gpt3-op-pertile sequential,fused "--preset gpt3-op-tp8 --chunks 1" T3_FUSED_GRID=0
DT=f32 run f32-gpt3-op-s264 sequential,fused "--preset gpt3-op-tp8 --chunks 1" T3_FUSED_SPARES=264
DT=f32 run f32-gpt3-op-s132 sequential,fused "--preset gpt3-op-tp8 --chunks 1" T3_FUSED_SPARES=132
DT=f32 run f32-tnlg-fc2-s264 sequential,fused "--preset tnlg-fc2-tp8 --chunks 1" T3_FUSED_SPARES=264
tar czf $OUT/r.tgz -C $OUT r
