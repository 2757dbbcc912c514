# Run 36 call 12: where fused mode's packed GEMM gains on T_gemm: one rank with 1 and 8 chunks (one dispatch against one or eight), two and eight ranks.
set -u
o=$OUT/r; mkdir -p $o
t3 calibrate > $o/calibrate.txt 2>&1
W="T3_FUSED_TRIGGER=spares T3_FUSED_SPARE_DISPATCH=own T3_FUSED_PUT=coherent T3_FUSED_PIECES=64"
for rc in "1 1" "1 8" "2 1" "8 1"; do
  set -- $rc
  env $W timeout 60 t3 run --shape 8192x4256x532 --ranks $1 --chunks $2 --collective reduce-scatter --reduce update --link-gbps 150 --mode sequential,fused --reps 5 --dtype f16 --json $o/r$1-c$2.json > $o/r$1-c$2.txt 2>&1
  echo "== ranks $1 chunks $2 rc=$?" >> $OUT/summary.txt
  grep -E "^(baselines|           fused gemm|fused)" $o/r$1-c$2.txt | cut -c1-120 >> $OUT/summary.txt
done
tar czf $OUT/r.tgz -C $OUT r
