# Run 39 call 2: call 1 found fused mode's f32 GEMM 5% slower than T_gemm at ONE rank too (not the packing, not the windows). Is it the aliased allocation its output lives in (src/alias.rs: the first DEVICE_LOCAL memory type, no dedicated allocation)? T3_ALIAS=0 binds wgpu's own buffer instead. Also the grid (bench-gemm T3_BENCH_GRID=264, the tracked GEMM on the grid).
set -u
o=$OUT/r; mkdir -p $o
run() { # name modes extra-args env...
  n=$1; m=$2; x=$3; shift 3
  s0=$(date +%s)
  env "$@" timeout ${TO:-120} t3 run --collective reduce-scatter --reduce update --link-gbps 150 --mode $m --reps 3 --dtype ${DT:-f32} $x --json $o/$n.json > $o/$n.txt 2>&1
  echo "== $n rc=$? $(( $(date +%s) - s0 )) s ${DT:-f32} $x $*" >> $OUT/summary.txt
  grep -E "^(fused      |baselines|fused own|           seq|sequential|encoded|fused  |error|Error|  T_|warning)" $o/$n.txt | cut -c1-170 >> $OUT/summary.txt
  tar czf $OUT/r.tgz -C $OUT r
}
t3 calibrate > $o/calibrate.txt 2>&1; echo "calibrate rc=$?" >> $OUT/summary.txt
run gpt3op-r2-alias sequential,fused "--shape 8192x12288x1536 --ranks 2 --chunks 1" X=1
run gpt3op-r2-noalias sequential,fused "--shape 8192x12288x1536 --ranks 2 --chunks 1" T3_ALIAS=0
run gpt3op-r2-pertile sequential,fused "--shape 8192x12288x1536 --ranks 2 --chunks 1" T3_FUSED_GRID=0
run gpt3op-r8-noalias sequential,fused "--shape 8192x12288x1536 --ranks 8 --chunks 1" T3_ALIAS=0
for g in 0 264; do
  T3_BENCH_GRID=$g T3_BENCH_SIZES=8192x12288x1536 T3_BENCH_DTYPES=f32 timeout 120 bench-gemm > $o/bgemm-g$g.txt 2>&1; echo "== bench-gemm grid $g rc=$?" >> $OUT/summary.txt; grep -v "^adapter" $o/bgemm-g$g.txt | cut -c1-200 >> $OUT/summary.txt
done
tar czf $OUT/r.tgz -C $OUT r
