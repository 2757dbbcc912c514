# Run 42 call 1: the cooperative GEMM with 16-byte operand loads (variants wide, wide2: also 16-byte workgroup stores) against the committed kernel, cuBLAS beside; fused mode landed (default) against T3_FUSED_LAND=off on gpt3-fc2 f32 (not timed in run 41).
set -u
o=$OUT/r; mkdir -p $o
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv > $o/smi.txt 2>&1
cat $o/smi.txt >> $OUT/summary.txt; cat .gpu/commit.txt >> $OUT/summary.txt
python3 .gpu/cuda_baselines.py --sizes 4096,8192 --json $o/cuda.json > $o/cuda.txt 2>&1
grep -i "fp16\|f16" $o/cuda.txt | head -4 >> $OUT/summary.txt
for pass in 1 2; do for v in committed wide wide2; do
  if [ $v = committed ]; then env=""; else env="T3_COOP_WGSL=.gpu/abl/$v.wgsl"; fi
  env $env T3_BENCH_KERNEL=coop T3_BENCH_DTYPES=f16 T3_BENCH_SIZES=4096,8192,8192x4256x532,8192x12288x1536 T3_BENCH_REPS=9 T3_BENCH_JSON=$o/bench-$v-$pass.jsonl timeout 100 bench-gemm > $o/bench-$v-$pass.txt 2>&1
  echo "== $pass $v rc=$?" >> $OUT/summary.txt
  grep -iE "tflop|ms|error|wrong" $o/bench-$v-$pass.txt | cut -c1-160 | head -8 >> $OUT/summary.txt
done; done
tar czf $OUT/r.tgz -C $OUT r
run() { # name modes extra-args env...
  n=$1; m=$2; x=$3; shift 3
  s0=$(date +%s)
  env "$@" timeout ${TO:-150} t3 run --collective reduce-scatter --reduce update --link-gbps 150 --mode $m --reps 3 --dtype ${DT:-f16} $x --json $o/$n.json > $o/$n.txt 2>&1
  echo "== $n rc=$? $(( $(date +%s) - s0 )) s ${DT:-f16} $x $*" >> $OUT/summary.txt
  grep -E "^(fused      |baselines|fused own|           seq|sequential|encoded|host  |fused  |error|Error|  T_|warning)" $o/$n.txt | cut -c1-200 >> $OUT/summary.txt
  tar czf $OUT/r.tgz -C $OUT r
}
t3 calibrate > $o/calibrate.txt 2>&1; echo "calibrate rc=$?" >> $OUT/summary.txt
DT=f32 TO=240 run f32-gpt3-fc2 sequential,fused "--preset gpt3-fc2-tp8 --chunks 1" X=1
DT=f32 TO=200 run f32-gpt3-fc2-off fused "--preset gpt3-fc2-tp8 --chunks 1" T3_FUSED_LAND=off
tar czf $OUT/r.tgz -C $OUT r
