# Run 39 call 11 (c814692 + the spares' poll budget of 2^24, was 2^20): do the spares run out of polls before gpt3-fc2's f32 GEMM (290 ms) ends? f32 gpt3-fc2, sequential and fused, the new budget and the old one (T3_FUSED_POLLS=1048576) in one call.
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
nvidia-smi --query-gpu=name --format=csv >> $OUT/summary.txt
t3 calibrate > $o/calibrate.txt 2>&1; echo "calibrate rc=$?" >> $OUT/summary.txt
TO=200 run gpt3-fc2-p24 sequential,fused "--preset gpt3-fc2-tp8 --chunks 1" X=1
TO=150 run gpt3-fc2-p20 fused "--preset gpt3-fc2-tp8 --chunks 1" T3_FUSED_POLLS=1048576
tar czf $OUT/r.tgz -C $OUT r
