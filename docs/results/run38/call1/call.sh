# Run 38 call 1: the cooperative GEMM with every fragment loaded straight from the operand buffers (direct, direct-pp: no workgroup stage, no barrier in the K loop) against the committed kernel, cuBLAS beside; their registers.
set -u
o=$OUT/r; mkdir -p $o
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv > $o/gpu.txt 2>&1; cat $o/gpu.txt >> $OUT/summary.txt
# bench-pipelines reads the variants from its build's tree.
mkdir -p /work/main/scripts 2>/dev/null; [ -e /work/main/scripts/coop-variants ] || ln -s $PWD/scripts/coop-variants /work/main/scripts/coop-variants
T3_PIPELINES="coop-variant direct,gemm_coop f16 store track" timeout 200 bench-pipelines > $o/pipelines.txt 2>&1; echo "pipelines rc=$?" >> $OUT/summary.txt
grep -E "Register Count" $o/pipelines.txt | sed 's/Binary Size=[0-9]*, Local Memory Size=[0-9]*, //' >> $OUT/summary.txt
python3 .gpu/cuda_baselines.py --sizes 4096,8192 --json $o/cuda.json > $o/cuda.txt 2>&1; grep fp16 $o/cuda.txt >> $OUT/summary.txt
for pass in 1 2; do for v in committed direct direct-pp; do
  if [ $v = committed ]; then env=""; else env="T3_COOP_WGSL=scripts/coop-variants/$v.wgsl"; fi
  env $env T3_BENCH_KERNEL=coop T3_BENCH_DTYPES=f16 T3_BENCH_SIZES=4096,8192,8192x4256x532,8192x12288x1536 T3_BENCH_REPS=9 T3_BENCH_JSON=$o/bench-$v-$pass.jsonl timeout 120 bench-gemm > $o/bench-$v-$pass.txt 2>&1
  echo "== $pass $v rc=$?" >> $OUT/summary.txt
  grep -E "^gemm |rror" $o/bench-$v-$pass.txt | sed -E 's/; warm-up [0-9]+ runs, settled at [0-9.]+ s//g' | cut -c1-260 >> $OUT/summary.txt
  tar czf $OUT/r.tgz -C $OUT r
done; done
tar czf $OUT/r.tgz -C $OUT r
