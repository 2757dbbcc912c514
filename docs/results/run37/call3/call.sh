# Run 37 call 3: where fused mode's f32 GEMM loses to T_gemm (call 2: 1-4% slower, its own gemm): the persistent grid's size against a workgroup per tile, fused mode alone with its own sequential run, on tnlg-op and gpt3-op f32.
set -u
o=$OUT/r; mkdir -p $o
run() { # name modes extra-args env...
  n=$1; m=$2; x=$3; shift 3
  s0=$(date +%s)
  env "$@" timeout ${TO:-90} t3 run --collective reduce-scatter --reduce update --link-gbps 150 --mode $m --reps 3 --dtype ${DT:-f16} $x --json $o/$n.json > $o/$n.txt 2>&1
  echo "== $n rc=$? $(( $(date +%s) - s0 )) s ${DT:-f16} $x $*" >> $OUT/summary.txt
  grep -E "^(baselines|           [a-zT]|fused own|sequential|encoded|fused|error|Error|  T_)" $o/$n.txt | cut -c1-160 >> $OUT/summary.txt
  tar czf $OUT/r.tgz -C $OUT r
}
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv > $o/gpu.txt 2>&1
t3 calibrate > $o/calibrate.txt 2>&1; echo "calibrate rc=$?" >> $OUT/summary.txt
W="T3_FUSED_TRIGGER=spares T3_FUSED_SPARE_DISPATCH=own T3_FUSED_PUT=coherent T3_FUSED_PIECES=64 T3_FUSED_SPARES=528"
export DT=f32
for g in 0 132 264; do
  run f32-tnlg-op-tp8-g$g fused "--preset tnlg-op-tp8 --chunks 1" $W T3_FUSED_GRID=$g
done
for g in 0 264; do
  TO=120 run f32-gpt3-op-tp8-g$g fused "--preset gpt3-op-tp8 --chunks 1" $W T3_FUSED_GRID=$g
done
