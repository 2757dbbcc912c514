# Run 35 call 1: owed: faithful step registers (bench-pipelines), ahead2 timing against committed, cuBLAS beside.
set -u
o=$OUT/r; mkdir -p $o
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv > $o/smi.txt 2>&1
timeout 200 bench-pipelines > $o/pipelines.txt 2>&1; echo "pipelines rc=$?" >> $o/rc.txt
python3 .gpu/cuda_baselines.py --sizes 4096,8192 --json $o/cuda.json > $o/cuda.txt 2>&1
for pass in 1 2; do for v in committed ahead2; do
  if [ $v = committed ]; then env=""; else env="T3_COOP_WGSL=.gpu/abl/$v.wgsl"; fi
  env $env T3_BENCH_KERNEL=coop T3_BENCH_DTYPES=f16 T3_BENCH_SIZES=4096,8192,8192x4256x532,8192x12288x1536 T3_BENCH_REPS=9 T3_BENCH_JSON=$o/bench-$v-$pass.jsonl timeout 100 bench-gemm > $o/bench-$v-$pass.txt 2>&1
  echo "$pass $v rc=$?" >> $o/rc.txt
done; done
tar czf $OUT/r.tgz -C $OUT r; rm -rf $o
