# Run 39 call 1: where fused mode's packed f32 GEMM loses against T_gemm. gpt3-op's shape at 1, 2, 4 and 8 ranks (the packing growing from one rank's buffers to 3.2 GB, one window to two), and tnlg-op with its output forced into two windows (T3_FUSED_WINDOW=512 MiB) beside the default (one window).
set -u
o=$OUT/r; mkdir -p $o
run() { # name modes extra-args env...
  n=$1; m=$2; x=$3; shift 3
  s0=$(date +%s)
  env "$@" timeout ${TO:-120} t3 run --collective reduce-scatter --reduce update --link-gbps 150 --mode $m --reps 3 --dtype ${DT:-f32} $x --json $o/$n.json > $o/$n.txt 2>&1
  echo "== $n rc=$? $(( $(date +%s) - s0 )) s ${DT:-f32} $x $*" >> $OUT/summary.txt
  grep -E "^(fused      |baselines|fused own|           seq|sequential|encoded|fused  |error|Error|  T_|warning)" $o/$n.txt | cut -c1-170 >> $OUT/summary.txt
  tar czf $OUT/r.tgz -C $OUT r
}
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv > $o/gpu.txt 2>&1; cat $o/gpu.txt >> $OUT/summary.txt
t3 calibrate > $o/calibrate.txt 2>&1; echo "calibrate rc=$?" >> $OUT/summary.txt
for r in 1 2 4 8; do run gpt3op-r$r sequential,fused "--shape 8192x12288x1536 --ranks $r --chunks 1" X=1; done
run tnlg-op-w1 sequential,fused "--preset tnlg-op-tp8 --chunks 1" X=1
run tnlg-op-w512m sequential,fused "--preset tnlg-op-tp8 --chunks 1" T3_FUSED_WINDOW=536870912
tar czf $OUT/r.tgz -C $OUT r
