# Run 36 call 13: the least warm-up on a fresh machine: call 12's first run (the first GEMM pipelines of the machine) twice, then once more with the least warm-up off (--warmup-s 0.5 bounds it).
set -u
o=$OUT/r; mkdir -p $o
t3 calibrate > $o/calibrate.txt 2>&1
W="T3_FUSED_TRIGGER=spares T3_FUSED_SPARE_DISPATCH=own T3_FUSED_PUT=coherent T3_FUSED_PIECES=64"
for n in first second; do
  env $W timeout 60 t3 run --shape 8192x4256x532 --ranks 1 --chunks 1 --collective reduce-scatter --reduce update --link-gbps 150 --mode sequential,fused --reps 5 --dtype f16 --json $o/$n.json > $o/$n.txt 2>&1
  echo "== $n rc=$?" >> $OUT/summary.txt
  grep -E "^(baselines|           fused gemm|fused|warm-up)" $o/$n.txt | cut -c1-160 >> $OUT/summary.txt
done
env $W timeout 60 t3 run --shape 8192x4096x512 --ranks 1 --chunks 1 --collective reduce-scatter --reduce update --link-gbps 150 --mode sequential --reps 5 --dtype f16 --warmup-s 0.2 --json $o/short.json > $o/short.txt 2>&1
echo "== short (new shape, --warmup-s 0.2) rc=$?" >> $OUT/summary.txt
grep -E "^(baselines|warm-up)" $o/short.txt | cut -c1-160 >> $OUT/summary.txt
tar czf $OUT/r.tgz -C $OUT r
