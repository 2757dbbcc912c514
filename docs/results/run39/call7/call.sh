# Run 39 call 7 (3914f0e + idle spares' pause, T3_FUSED_BACKOFF): does polling less beside the GEMM shorten fused mode's exposed time? f32 gpt3-op at 0, 1000 and 10000 steps, tnlg-op at 0 and 10000, gpt3-fc2 at 0 and 10000 (sequential and fused only).
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
for b in 0 1000 10000; do run gpt3-op-b$b sequential,fused "--preset gpt3-op-tp8 --chunks 1" T3_FUSED_BACKOFF=$b; done
for b in 0 10000; do run tnlg-op-b$b sequential,fused "--preset tnlg-op-tp8 --chunks 1" T3_FUSED_BACKOFF=$b; done
for b in 10000 0; do TO=200 run gpt3-fc2-b$b sequential,fused "--preset gpt3-fc2-tp8 --chunks 1" T3_FUSED_BACKOFF=$b; done
tar czf $OUT/r.tgz -C $OUT r
