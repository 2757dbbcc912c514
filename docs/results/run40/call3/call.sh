# Run 40 call 3 (d09cb02): beside the cooperative f16 GEMM the spares move transfers at a fraction of the link's rate (2 per SM fit beside a GEMM workgroup's 61440 registers); a persistent grid of fewer than every SM leaves whole SMs to 32 spares each. T3_FUSED_GRID=G with T3_FUSED_SPARES = 2 G + 32 (132 - G), idle pause 32.
set -u
o=$OUT/r; mkdir -p $o
run() { # name modes extra-args env...
  n=$1; m=$2; x=$3; shift 3
  s0=$(date +%s)
  env "$@" timeout ${TO:-150} t3 run --collective reduce-scatter --reduce update --link-gbps 150 --mode $m --reps 3 --dtype ${DT:-f32} $x --json $o/$n.json > $o/$n.txt 2>&1
  echo "== $n rc=$? $(( $(date +%s) - s0 )) s ${DT:-f32} $x $*" >> $OUT/summary.txt
  grep -E "^(fused      |baselines|fused own|           seq|sequential|encoded|host  |fused  |error|Error|  T_|warning)" $o/$n.txt | cut -c1-170 >> $OUT/summary.txt
  tar czf $OUT/r.tgz -C $OUT r
}
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv >> $OUT/summary.txt
t3 calibrate > $o/calibrate.txt 2>&1; echo "calibrate rc=$?" >> $OUT/summary.txt
export DT=f16 T3_FUSED_PAUSE=32
sp() { echo $(( 2 * $1 + 32 * (132 - $1) )); }
for g in 132 116 124 108; do run tnlg-op-g$g encoded,fused "--preset tnlg-op-tp8 --chunks 1 --gemm-grid 128" T3_FUSED_GRID=$g T3_FUSED_SPARES=$(sp $g); done
for g in 132 116 124; do run tnlg-fc2-g$g encoded,fused "--preset tnlg-fc2-tp8 --chunks 1" T3_FUSED_GRID=$g T3_FUSED_SPARES=$(sp $g); done
for g in 116 124; do run gpt3-op-g$g fused "--preset gpt3-op-tp8 --chunks 1" T3_FUSED_GRID=$g T3_FUSED_SPARES=$(sp $g); done
tar czf $OUT/r.tgz -C $OUT r
