. .gpu/prelude.sh; O=$OUT/z; mkdir -p $O
for r in 1 2; do for v in noloop committed; do f=; [ $v = noloop ] && f=.gpu/noloop.wgsl
  T3_COOP_WGSL=$f T3_BENCH_KERNEL=coop T3_BENCH_SIZES=4096,8192,8192x12288x1536 T3_BENCH_DTYPES=f16 T3_BENCH_REPS=9 T3_BENCH_WARMUP_S=2 bench-gemm 2>&1 | grep "^gemm" | sed "s/^/$r $v: /" >> $O/ab.txt
done; done
T3_BENCH_KERNEL=simt T3_BENCH_SIZES=4096 T3_BENCH_DTYPES=f32 T3_BENCH_REPS=5 bench-gemm 2>&1 | grep "^gemm" >> $O/ab.txt
T3_REQUIRE_GPU=1 .gpu/bin/test-collectives f16 > $O/test-collectives.txt 2>&1; echo "rc=$?" >> $O/test-collectives.txt
t3 calibrate > $O/calibrate.txt 2>&1
t3 run --preset tnlg-op-tp8 --dtype f16 --collective reduce-scatter --reduce forward --chunks 1 --link-gbps 150 --mode sequential,host,encoded --reps 5 --gemm-grid 128 > $O/g128-tnlg-op-tp8.txt 2>&1
tar -C $OUT -czf $OUT/z.tgz z; rm -rf $O
