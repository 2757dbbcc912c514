# Run 34: where a K slice's time goes in the cooperative GEMM (ablations), cuBLAS beside.
set -u
o=$OUT/r; mkdir -p $o
python3 .gpu/cuda_baselines.py --sizes 4096,8192 --json $o/cuda.json > $o/cuda.txt 2>&1
for pass in 1 2; do for v in committed abl-nofrag abl-noglobal abl-nobar abl-inner; do
  if [ $v = committed ]; then env=""; else env="T3_COOP_WGSL=.gpu/abl/$v.wgsl T3_BENCH_VERIFY=0"; fi
  env $env T3_BENCH_KERNEL=coop T3_BENCH_DTYPES=f16 T3_BENCH_SIZES=4096,8192,8192x4256x532 T3_BENCH_REPS=9 T3_BENCH_JSON=$o/bench-$v-$pass.jsonl timeout 100 bench-gemm > $o/bench-$v-$pass.txt 2>&1
  echo "$pass $v rc=$?" >> $o/rc.txt
done; done
tar czf $OUT/r.tgz -C $OUT r; rm -rf $o
