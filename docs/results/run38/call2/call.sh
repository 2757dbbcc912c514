# Run 38 call 2: the SIMT GEMM with unguarded operand loads (as the cooperative kernel's) against the guarded one (.gpu/simt-guarded.wgsl, the kernel before): registers of every SIMT composition and the spares, bench-gemm f32, and fused mode in f32 (tnlg-op, gpt3-op) beside sequential and encoded.
set -u
o=$OUT/r; mkdir -p $o
old="T3_SIMT_WGSL=.gpu/simt-guarded.wgsl"
run() { # name modes extra-args env...
  n=$1; m=$2; x=$3; shift 3
  s0=$(date +%s)
  env "$@" timeout ${TO:-90} t3 run --collective reduce-scatter --reduce update --link-gbps 150 --mode $m --reps 3 --dtype ${DT:-f16} $x --json $o/$n.json > $o/$n.txt 2>&1
  echo "== $n rc=$? $(( $(date +%s) - s0 )) s ${DT:-f16} $x $*" >> $OUT/summary.txt
  grep -E "^(fused      |baselines|fused own|           seq|sequential|encoded|fused  |error|Error|  T_)" $o/$n.txt | cut -c1-170 >> $OUT/summary.txt
  tar czf $OUT/r.tgz -C $OUT r
}
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv > $o/gpu.txt 2>&1; cat $o/gpu.txt >> $OUT/summary.txt
t3 calibrate > $o/calibrate.txt 2>&1; echo "calibrate rc=$?" >> $OUT/summary.txt
for v in new old; do
  if [ $v = new ]; then env=""; else env=$old; fi
  env $env T3_PIPELINES="gemm f32,gemm f16,spares" timeout 200 bench-pipelines > $o/pipelines-$v.txt 2>&1; echo "pipelines $v rc=$?" >> $OUT/summary.txt
  grep -E "Register Count" $o/pipelines-$v.txt | sed 's/Binary Size=[0-9]*, Local Memory Size=[0-9]*, //' | grep -v "f16 " >> $OUT/summary.txt
done
for pass in 1 2; do for v in new old; do
  if [ $v = new ]; then env=""; else env=$old; fi
  env $env T3_BENCH_KERNEL=simt T3_BENCH_DTYPES=f32 T3_BENCH_SIZES=4096,8192x4256x532,8192x12288x1536 T3_BENCH_REPS=9 T3_BENCH_JSON=$o/bench-$v-$pass.jsonl timeout 120 bench-gemm > $o/bench-$v-$pass.txt 2>&1
  echo "== bench $pass $v rc=$?" >> $OUT/summary.txt
  grep -E "^gemm |rror" $o/bench-$v-$pass.txt | sed -E 's/; warm-up [0-9]+ runs, settled at [0-9.]+ s//g' | cut -c1-260 >> $OUT/summary.txt
done; done
DT=f32 run f32-tnlg-op-new sequential,encoded,fused "--preset tnlg-op-tp8 --chunks 1"
DT=f32 run f32-tnlg-op-old sequential,encoded,fused "--preset tnlg-op-tp8 --chunks 1" $old
DT=f32 run f32-gpt3-op-new sequential,encoded,fused "--preset gpt3-op-tp8 --chunks 1"
DT=f32 run f32-gpt3-op-old sequential,encoded,fused "--preset gpt3-op-tp8 --chunks 1" $old
tar czf $OUT/r.tgz -C $OUT r
