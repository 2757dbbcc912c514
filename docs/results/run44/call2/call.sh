# Run 44 call 2 (the kernel with 16-byte alignment hints and an unrolled main loop, STEP=64 UNROLL=8 built
# in; variants built by the same glslang with -DSTEP=S -DUNROLL=U -DTRACK=1/0 into .gpu/cm2/spv/sSuUt1.spv
# and ...t0.spv), kind nvidia-h200, 2026-11-27 23:25 UTC. info.txt is cut at 400 characters.
. .gpu/prelude.sh; export PATH=$PWD/.gpu/cm2/bin:$PATH; date -u
t3 info 2>&1 | grep -E "coopmat2" | cut -c1-400 | tee $OUT/info.txt
timeout 90 test-coopmat2 --test-threads 1 2>&1 | tail -6 | tee $OUT/test.txt
B="T3_BENCH_DTYPES=f16 T3_BENCH_REPS=5 T3_BENCH_SETTLE_S=2 T3_BENCH_JSON=$OUT/gemm.jsonl"
for kern in coop coopmat2; do
  env $B T3_BENCH_SIZES=4096,8192 T3_BENCH_KERNEL=$kern timeout 90 bench-gemm 2>&1 | grep -v "^adapter" | tee -a $OUT/bench.txt
done
for v in s64u1 s32u8 s32u1 s64u2 s128u4 s64u16; do
  echo "variant $v"
  env $B T3_BENCH_SIZES=8192 T3_BENCH_COOPMAT2_SPV=.gpu/cm2/spv/${v}t1.spv,.gpu/cm2/spv/${v}t0.spv timeout 60 bench-gemm 2>&1 \
    | grep -v "^adapter" | cut -c1-250 | tee -a $OUT/bench.txt
done
timeout 100 python3 .gpu/cuda_baselines.py --sizes 4096,8192 --json $OUT/cuda.json 2>&1 | grep fp16 | tee $OUT/cuda.txt
