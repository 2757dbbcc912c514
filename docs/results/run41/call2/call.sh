# Run 41 call 2 (as call 1): gpt3-fc2 f16, gpt3-op f32.
set -u
o=$OUT/r; mkdir -p $o
run() { # name bin modes extra-args env...
  n=$1; b=$2; m=$3; x=$4; shift 4
  s0=$(date +%s)
  env "$@" timeout ${TO:-150} $b run --collective reduce-scatter --reduce update --link-gbps 150 --mode $m --reps 3 --dtype ${DT:-f16} $x --json $o/$n.json > $o/$n.txt 2>&1
  echo "== $n rc=$? $(( $(date +%s) - s0 )) s ${DT:-f16} $b $x $*" >> $OUT/summary.txt
  grep -E "^(fused      |baselines|fused own|           seq|sequential|encoded|host  |fused  |error|Error|  T_|warning)" $o/$n.txt | cut -c1-170 >> $OUT/summary.txt
  tar czf $OUT/r.tgz -C $OUT r
}
nvidia-smi --query-gpu=name --format=csv >> $OUT/summary.txt
cat .gpu/commit.txt >> $OUT/summary.txt
t3 calibrate > $o/calibrate.txt 2>&1; echo "calibrate rc=$?" >> $OUT/summary.txt
TO=200 run gpt3-fc2 t3 sequential,fused "--preset gpt3-fc2-tp8 --chunks 1 --gemm-grid 128" X=1
run gpt3-fc2-drop t3-exp fused "--preset gpt3-fc2-tp8 --chunks 1 --gemm-grid 128" T3_EXP_LAST=drop
run gpt3-fc2-ungated t3-exp fused "--preset gpt3-fc2-tp8 --chunks 1 --gemm-grid 128" T3_EXP_LAST=ungated
tar czf $OUT/r.tgz -C $OUT r
DT=f32 run f32-gpt3-op t3 sequential,fused "--preset gpt3-op-tp8 --chunks 1" X=1
DT=f32 run f32-gpt3-op-drop t3-exp fused "--preset gpt3-op-tp8 --chunks 1" T3_EXP_LAST=drop
DT=f32 run f32-gpt3-op-ungated t3-exp fused "--preset gpt3-op-tp8 --chunks 1" T3_EXP_LAST=ungated
tar czf $OUT/r.tgz -C $OUT r
