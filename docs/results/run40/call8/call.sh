# Run 40 call 8 (b68bfcd, no knob set): the default poll budget now shrinks with the pause (2^20 * 16 / (16 + 128) rounds beside the SIMT GEMM): does it still outlast the longest GEMM (f32 gpt3-fc2, 290 ms)? Fused with the default and with the old budget (T3_FUSED_POLLS=1048576) in one call.
set -u
o=$OUT/r; mkdir -p $o
run() { # name modes extra-args env...
  n=$1; m=$2; x=$3; shift 3
  s0=$(date +%s)
  env "$@" timeout ${TO:-150} t3 run --collective reduce-scatter --reduce update --link-gbps 150 --mode $m --reps 3 --dtype ${DT:-f32} $x --json $o/$n.json > $o/$n.txt 2>&1
  echo "== $n rc=$? $(( $(date +%s) - s0 )) s ${DT:-f32} $x $*" >> $OUT/summary.txt
  grep -E "^(fused      |baselines|fused own|           seq|sequential|encoded|host  |fused  |error|Error|  T_|warning|checks)" $o/$n.txt | cut -c1-170 >> $OUT/summary.txt
  tar czf $OUT/r.tgz -C $OUT r
}
nvidia-smi --query-gpu=name --format=csv >> $OUT/summary.txt
cat .gpu/commit.txt >> $OUT/summary.txt
t3 calibrate > $o/calibrate.txt 2>&1; echo "calibrate rc=$?" >> $OUT/summary.txt
TO=200 run f32-gpt3-fc2 fused "--preset gpt3-fc2-tp8 --chunks 1" X=1
TO=200 run f32-gpt3-fc2-p20 fused "--preset gpt3-fc2-tp8 --chunks 1" T3_FUSED_POLLS=1048576
tar czf $OUT/r.tgz -C $OUT r
