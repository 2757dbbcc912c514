# Run 39 call 10 (3914f0e binaries, no knob set): call 9 continued, gpt3-fc2 in f16 (call 9's ran past its 150 s) and f32, every mode.
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
DT=f16 TO=200 run f16-gpt3-fc2 sequential,host,encoded,fused "--preset gpt3-fc2-tp8 --chunks 1 --gemm-grid 128" X=1
TO=380 run f32-gpt3-fc2 sequential,host,encoded,fused "--preset gpt3-fc2-tp8 --chunks 1" X=1
tar czf $OUT/r.tgz -C $OUT r
