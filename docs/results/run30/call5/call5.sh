. .gpu/prelude.sh; O=$OUT/g; mkdir -p $O
for r in 1 2; do for g in 0 128 132; do
  T3_BENCH_GRID=$g T3_BENCH_KERNEL=coop T3_BENCH_DTYPES=f16 T3_BENCH_SIZES=8192x4256x532,8192x12288x1536,8192x4256x2128 T3_BENCH_REPS=9 T3_BENCH_WARMUP_S=1 bench-gemm 2>&1 | grep -E "^gemm|rror" | sed "s/^/$r g$g: /" >> $O/grid.txt
done
for g in 0 16; do
  T3_BENCH_GRID=$g T3_BENCH_KERNEL=coop T3_BENCH_DTYPES=f16 T3_BENCH_SIZES=1024x4256x532,1024x12288x1536 T3_BENCH_REPS=9 T3_BENCH_WARMUP_S=1 bench-gemm 2>&1 | grep -E "^gemm|rror" | sed "s/^/$r g$g: /" >> $O/grid.txt
done; done
tar -C $OUT -czf $OUT/g.tgz g; rm -rf $O
