. .gpu/prelude.sh; O=$OUT/y; mkdir -p $O
for r in 1 2; do for v in noloop committed; do f=; [ $v = noloop ] && f=.gpu/noloop.wgsl
  T3_COOP_WGSL=$f T3_BENCH_KERNEL=coop T3_BENCH_SIZES=4096,8192,8192x12288x1536,8192x4256x2128 T3_BENCH_DTYPES=f16 T3_BENCH_REPS=9 T3_BENCH_WARMUP_S=2 bench-gemm 2>&1 | grep "^gemm" | sed "s/^/$r $v: /" >> $O/ab.txt
done; done
t3 calibrate > $O/calibrate.txt 2>&1
T3_REQUIRE_GPU=1 .gpu/bin/test-collectives f16 > $O/test-collectives.txt 2>&1; echo "rc=$?" >> $O/test-collectives.txt
for p in tnlg-op-tp8 gpt3-op-tp8; do
  t3 run --preset $p --dtype f16 --collective reduce-scatter --reduce forward --chunks 1 --link-gbps 150 --mode sequential,host,encoded --reps 5 --gemm-grid 128 > $O/g128-$p.txt 2>&1
done
tar -C $OUT -czf $OUT/y.tgz y; rm -rf $O
