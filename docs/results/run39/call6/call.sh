# Run 39 call 6 (3914f0e, the new defaults): does the spares' polling slow the GEMM beside it? Fused mode's exposed time grew with the GEMM's length in calls 4-5 (0.30 ms on tnlg-op to 4.15 ms on gpt3-fc2, 1.2-1.4% of its GEMM): fewer spares poll less. f32 gpt3-op and tnlg-op at 264 (the default: two per SM), 132, 66 and 33 spares.
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
for s in 264 132 66 33; do run gpt3-op-s$s sequential,fused "--preset gpt3-op-tp8 --chunks 1" T3_FUSED_SPARES=$s; done
for s in 264 132 66; do run tnlg-op-s$s sequential,fused "--preset tnlg-op-tp8 --chunks 1" T3_FUSED_SPARES=$s; done
tar czf $OUT/r.tgz -C $OUT r
