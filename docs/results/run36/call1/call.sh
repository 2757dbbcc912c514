# Run 36 call 1: fused mode with its spares as the trigger (T3_FUSED_TRIGGER=spares: the GEMM only counts its tiles, the spares watch the counters), f16: one rank (the watched GEMM against the tracked one and the triggering epilogue), then tnlg-op-tp8 variants beside encoded.
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
W="T3_FUSED_TRIGGER=spares T3_FUSED_SPARE_DISPATCH=own"
ONE="--shape 8192x4256x532 --ranks 1 --chunks 8"
run warm sequential,fused "$ONE"
run one-epilogue sequential,fused "$ONE"
run one-epilogue-coherent sequential,fused "$ONE" T3_FUSED_PUT=coherent
run one-watched sequential,fused "$ONE" $W
run one-watched-grid sequential,fused "$ONE" $W T3_FUSED_GRID=132
P="--preset tnlg-op-tp8 --chunks 1"
run enc sequential,encoded "$P --gemm-grid 128"
run w-g132-p128-s264-coh sequential,fused "$P" $W T3_FUSED_GRID=132 T3_FUSED_PIECES=128 T3_FUSED_SPARES=264 T3_FUSED_PUT=coherent
run w-g132-p128-s264 sequential,fused "$P" $W T3_FUSED_GRID=132 T3_FUSED_PIECES=128 T3_FUSED_SPARES=264
run w-g132-p64-s264-coh sequential,fused "$P" $W T3_FUSED_GRID=132 T3_FUSED_PIECES=64 T3_FUSED_SPARES=264 T3_FUSED_PUT=coherent
run w-g128-p128-s264-coh sequential,fused "$P" $W T3_FUSED_GRID=128 T3_FUSED_PIECES=128 T3_FUSED_SPARES=264 T3_FUSED_PUT=coherent
run w-tile-p128-s264-coh sequential,fused "$P" $W T3_FUSED_PIECES=128 T3_FUSED_SPARES=264 T3_FUSED_PUT=coherent
run w-g132-link-s264-coh sequential,fused "$P" $W T3_FUSED_GRID=132 T3_FUSED_SPARES=264 T3_FUSED_PUT=coherent
run best35 sequential,fused "$P" T3_FUSED_SPARE_DISPATCH=own T3_FUSED_HELP=idle T3_FUSED_PUT=coherent T3_FUSED_GRID=132 T3_FUSED_PIECES=128 T3_FUSED_SPARES=264
