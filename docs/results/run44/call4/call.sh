# Run 44 call 4 (the committed kernel: STEP=32 UNROLL=32 built in), a fresh nvidia-h200, 2026-11-27 23:33 UTC.
. .gpu/prelude.sh >/dev/null; export PATH=$PWD/.gpu/cm2/bin:$PATH; date -u
timeout 60 test-coopmat2 --test-threads 1 2>&1 | tail -5 | tee $OUT/test.txt
T3_BENCH_DTYPES=f16 T3_BENCH_REPS=5 T3_BENCH_SETTLE_S=2 T3_BENCH_SIZES=8192 T3_BENCH_KERNEL=coopmat2 \
  T3_BENCH_JSON=$OUT/gemm.jsonl timeout 40 bench-gemm 2>&1 | tee $OUT/bench.txt
