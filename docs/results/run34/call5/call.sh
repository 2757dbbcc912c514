# Run 34 call 5: do workgroups share an SM? One wave of tiles (132 = the SMs) against two (264), long K.
set -u
o=$OUT/r; mkdir -p $o
for pass in 1 2; do for v in committed quarters halves; do
  env=""; [ $v != committed ] && env="T3_COOP_WGSL=.gpu/abl/$v.wgsl"
  env $env T3_BENCH_KERNEL=coop T3_BENCH_DTYPES=f16 T3_BENCH_CHUNKS=1 T3_BENCH_SIZES=1536x2816x8192,3072x2816x8192,6144x2816x8192 T3_BENCH_REPS=9 T3_BENCH_JSON=$o/bench-$v-$pass.jsonl timeout 100 bench-gemm > $o/bench-$v-$pass.txt 2>&1
  echo "$pass $v rc=$?" >> $o/rc.txt
done; done
tar czf $OUT/r.tgz -C $OUT r
for f in $o/bench-*.txt; do echo "$(basename $f): $(grep -o 'x[0-9]*x[0-9]*: tracked [0-9.]* ms\|max rel err [0-9.e-]*' $f | tr '\n' ' ')"; done
rm -rf $o
