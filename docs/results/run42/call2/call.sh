# Run 42 call 2 (diagnostic, 7fe715d + half.patch): f16 with every transfer moving half its chunk's words (T3_EXP_HALF=1), the bytes an f16 output would move; sums wrong on purpose (timings only). tnlg-op unpatched first, as in run 40.
set -u
o=$OUT/r; mkdir -p $o
run() { # name modes extra-args env...
  n=$1; m=$2; x=$3; shift 3
  s0=$(date +%s)
  env "$@" timeout ${TO:-150} t3 run --collective reduce-scatter --reduce update --link-gbps 150 --mode $m --reps 3 --dtype ${DT:-f16} $x --json $o/$n.json > $o/$n.txt 2>&1
  echo "== $n rc=$? $(( $(date +%s) - s0 )) s ${DT:-f16} $x $*" >> $OUT/summary.txt
  grep -E "^(fused      |baselines|fused own|           seq|sequential|encoded|host  |fused  |error|Error|  T_|warning)" $o/$n.txt | cut -c1-200 >> $OUT/summary.txt
  tar czf $OUT/r.tgz -C $OUT r
}
nvidia-smi --query-gpu=name --format=csv >> $OUT/summary.txt
cat .gpu/commit.txt >> $OUT/summary.txt
t3 calibrate > $o/calibrate.txt 2>&1; echo "calibrate rc=$?" >> $OUT/summary.txt
run tnlg-op-full sequential,encoded,fused "--preset tnlg-op-tp8 --chunks 1 --gemm-grid 128" T3_EXP_HALF=0
for p in tnlg-op gpt3-op tnlg-fc2; do
  run $p-half sequential,encoded,fused "--preset $p-tp8 --chunks 1 --gemm-grid 128" T3_EXP_HALF=1
done
TO=240 run gpt3-fc2-half sequential,encoded,fused "--preset gpt3-fc2-tp8 --chunks 1 --gemm-grid 128" T3_EXP_HALF=1
tar czf $OUT/r.tgz -C $OUT r
