# Run 34 call 2: registers of the variants; halves / early against the committed kernel; which barrier.
set -u
o=$OUT/r; mkdir -p $o
T3_PIPELINES=variant,gemm_coop T3_BENCH_JSON=$o/stats.jsonl bench-pipelines > $o/stats.txt 2>&1
python3 .gpu/cuda_baselines.py --sizes 4096,8192 --json $o/cuda.json > $o/cuda.txt 2>&1
for pass in 1 2; do for v in committed halves early abl-nobar1 abl-nobar2; do
  case $v in committed) env="";; abl-*) env="T3_COOP_WGSL=.gpu/abl/$v.wgsl T3_BENCH_VERIFY=0";; *) env="T3_COOP_WGSL=.gpu/abl/$v.wgsl";; esac
  env $env T3_BENCH_KERNEL=coop T3_BENCH_DTYPES=f16 T3_BENCH_SIZES=4096,8192,8192x4256x532,8192x12288x1536 T3_BENCH_REPS=9 T3_BENCH_JSON=$o/bench-$v-$pass.jsonl timeout 100 bench-gemm > $o/bench-$v-$pass.txt 2>&1
  echo "$pass $v rc=$?" >> $o/rc.txt
done; done
tar czf $OUT/r.tgz -C $OUT r; rm -rf $o
