# Run 36 call 3: spares as the trigger: more spares on the f16 output projections; the f32 SIMT GEMM (two workgroups per SM) per tile or on a grid of 264.
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
W="T3_FUSED_TRIGGER=spares T3_FUSED_SPARE_DISPATCH=own T3_FUSED_PUT=coherent T3_FUSED_PIECES=64"
P="--preset tnlg-op-tp8 --chunks 1"
run f16-enc sequential,encoded "$P --gemm-grid 128"
for s in 396 528 660; do
  run f16-g132-s$s fused "$P" $W T3_FUSED_GRID=132 T3_FUSED_SPARES=$s
done
run f16-g132-p128-s528 fused "$P" $W T3_FUSED_GRID=132 T3_FUSED_SPARES=528 T3_FUSED_PIECES=128
run f16-gpt3-s528 sequential,encoded,fused "--preset gpt3-op-tp8 --chunks 1 --gemm-grid 128" $W T3_FUSED_GRID=132 T3_FUSED_SPARES=528
export DT=f32
run f32-enc sequential,encoded,fused "$P"
run f32-tile-s264 fused "$P" $W T3_FUSED_SPARES=264
run f32-tile-s528 fused "$P" $W T3_FUSED_SPARES=528
run f32-g264-s264 fused "$P" $W T3_FUSED_GRID=264 T3_FUSED_SPARES=264
run f32-g264-s528 fused "$P" $W T3_FUSED_GRID=264 T3_FUSED_SPARES=528
run f32-g256-s528 fused "$P" $W T3_FUSED_GRID=256 T3_FUSED_SPARES=528
run f32-g264-s528-store fused "$P" T3_FUSED_TRIGGER=spares T3_FUSED_SPARE_DISPATCH=own T3_FUSED_PIECES=64 T3_FUSED_GRID=264 T3_FUSED_SPARES=528
