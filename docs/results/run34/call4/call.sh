# Run 34 call 4: quarters (4 strips of 128x64 on 128 invocations) against the committed kernel.
set -u
o=$OUT/r; mkdir -p $o
T3_PIPELINES=quarters,halves,"gemm_coop f16 store track TRACK=1 GRID=0" bench-pipelines 2>&1 | sed 's/Binary Size=[0-9]*, Local Memory Size=[0-9]*, //' > $o/stats.txt
python3 .gpu/cuda_baselines.py --sizes 4096,8192 --json $o/cuda.json > $o/cuda.txt 2>&1
for pass in 1 2; do for v in committed quarters; do
  env=""; [ $v != committed ] && env="T3_COOP_WGSL=.gpu/abl/$v.wgsl"
  env $env T3_BENCH_KERNEL=coop T3_BENCH_DTYPES=f16 T3_BENCH_SIZES=4096,8192,8192x4256x532,8192x12288x1536 T3_BENCH_REPS=9 T3_BENCH_JSON=$o/bench-$v-$pass.jsonl timeout 100 bench-gemm > $o/bench-$v-$pass.txt 2>&1
  echo "$pass $v rc=$?" >> $o/rc.txt
done; done
tar czf $OUT/r.tgz -C $OUT r
cat $o/stats.txt | grep -v lowered; for f in $o/bench-*.txt; do echo "$f: $(grep -o 'x[0-9]*: tracked [0-9.]* ms ([0-9.]* TFLOP/s\|max rel err [0-9.e-]*' $f | tr '\n' ' ')"; done; grep gemm_fp16 $o/cuda.txt
rm -rf $o
