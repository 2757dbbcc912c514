. .gpu/prelude.sh; O=$OUT/w; mkdir -p $O
t3 calibrate > $O/calibrate.txt 2>&1
for p in tnlg-op-tp8 gpt3-op-tp8; do
  for v in "g128" "g128-lead:--step-lead 100000" "g128-arb64:--arbitrate 64" "g128-arb96:--arbitrate 96"; do
    name=${v%%:*}; extra=""; [ "$name" != "$v" ] && extra=${v#*:}
    t3 run --preset $p --dtype f16 --collective reduce-scatter --reduce forward --chunks 1 --link-gbps 150 --mode sequential,host,encoded --reps 5 --gemm-grid 128 $extra > $O/$name-$p.txt 2>&1
  done
done
tar -C $OUT -czf $OUT/w.tgz w; rm -rf $O
