# Run 36 call 11: the fused-GEMM bound check on the device: fused mode (spares as the trigger) on tnlg-fc2 and tnlg-op f16, where call 10 printed an efficiency of 1.044 on tnlg-fc2.
set -u
o=$OUT/r; mkdir -p $o
t3 calibrate > $o/calibrate.txt 2>&1
W="T3_FUSED_TRIGGER=spares T3_FUSED_SPARE_DISPATCH=own T3_FUSED_PUT=coherent T3_FUSED_PIECES=64 T3_FUSED_GRID=132 T3_FUSED_SPARES=396"
for p in tnlg-fc2-tp8 tnlg-op-tp8; do
  env $W timeout 90 t3 run --preset $p --chunks 1 --collective reduce-scatter --reduce update --link-gbps 150 --mode sequential,encoded,fused --gemm-grid 128 --reps 3 --dtype f16 --json $o/$p.json > $o/$p.txt 2>&1
  echo "== $p rc=$?" >> $OUT/summary.txt
  grep -E "^(baselines|           |sequential|encoded|fused|  T_)" $o/$p.txt | cut -c1-170 >> $OUT/summary.txt
done
tar czf $OUT/r.tgz -C $OUT r
