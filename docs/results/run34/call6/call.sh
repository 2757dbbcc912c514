# Run 34 call 6: halves16 (two 128x128 halves on 128 invocations, 16-deep slices): registers, occupancy, rate.
set -u
o=$OUT/r; mkdir -p $o
T3_PIPELINES=halves16 bench-pipelines 2>&1 | sed 's/Binary Size=[0-9]*, Local Memory Size=[0-9]*, //' > $o/stats.txt
for pass in 1 2; do for v in committed halves16; do
  env=""; [ $v != committed ] && env="T3_COOP_WGSL=.gpu/abl/$v.wgsl"
  env $env T3_BENCH_KERNEL=coop T3_BENCH_DTYPES=f16 T3_BENCH_CHUNKS=1 T3_BENCH_SIZES=1536x2816x8192,3072x2816x8192,4096,8192x4256x532 T3_BENCH_REPS=9 T3_BENCH_JSON=$o/bench-$v-$pass.jsonl timeout 100 bench-gemm > $o/bench-$v-$pass.txt 2>&1
  echo "$pass $v rc=$?" >> $o/rc.txt
done; done
tar czf $OUT/r.tgz -C $OUT r
grep -v lowered $o/stats.txt; for f in $o/bench-*.txt; do echo "$(basename $f): $(grep -o 'x[0-9]*: tracked [0-9.]* ms ([0-9.]* TFLOP/s\|max rel err [0-9.e-]*' $f | tr '\n' ' ')"; done
rm -rf $o
