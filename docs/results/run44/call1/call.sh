# Run 44 call 1 (commit bebd3bb: the first coopmat2 kernel, 64-deep steps, no unroll, no alignment
# hints), kind nvidia-h200, 2026-11-27 23:14 UTC. Binaries in .gpu/cm2/bin (t3, bench-gemm,
# test-coopmat2 = tests/coopmat2.rs).
. .gpu/prelude.sh; export PATH=$PWD/.gpu/cm2/bin:$PATH; date -u
t3 info 2>&1 | tee $OUT/info.txt
timeout 120 test-coopmat2 --test-threads 1 2>&1 | tail -25 | tee $OUT/test.txt
for kern in coop coopmat2; do
  T3_BENCH_SIZES=4096,8192 T3_BENCH_DTYPES=f16 T3_BENCH_KERNEL=$kern T3_BENCH_REPS=7 T3_BENCH_SETTLE_S=4 \
    T3_BENCH_JSON=$OUT/gemm.jsonl timeout 120 bench-gemm 2>&1 | tee $OUT/bench-$kern.txt
done
timeout 150 python3 .gpu/cuda_baselines.py --sizes 4096,8192 --json $OUT/cuda.json 2>&1 | tail -25 | tee $OUT/cuda.txt
