# Run 44 call 3: more unroll variants on the machine call 2 left warm (same binaries), 2026-11-27 23:28 UTC.
. .gpu/prelude.sh >/dev/null; export PATH=$PWD/.gpu/cm2/bin:$PATH
B="T3_BENCH_DTYPES=f16 T3_BENCH_REPS=5 T3_BENCH_SETTLE_S=2 T3_BENCH_JSON=$OUT/gemm.jsonl"
for v in s64u32 s32u16 s32u32 s64u64; do
  echo "variant $v"
  env $B T3_BENCH_SIZES=8192 T3_BENCH_COOPMAT2_SPV=.gpu/cm2/spv/${v}t1.spv,.gpu/cm2/spv/${v}t0.spv timeout 50 bench-gemm 2>&1 \
    | grep -v "^adapter" | cut -c1-200 | tee -a $OUT/bench.txt
done
