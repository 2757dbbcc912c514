. .gpu/prelude.sh; O=$OUT/d; mkdir -p $O
t3 calibrate > $O/calibrate.txt 2>&1
for p in tnlg-op-tp8 gpt3-op-tp8; do
  for v in "d1-last-always:1:last:always" "d8-last-always:8:last:always" "d8-first-orph:8:first:orphans"; do
    IFS=: read name dep at help <<< "$v"
    T3_FUSED_DEPTH=$dep T3_FUSED_SPARES_AT=$at T3_FUSED_HELP=$help timeout 100 t3 run --preset $p --dtype f16 --collective reduce-scatter --reduce update --chunks 1 --link-gbps 150 --mode sequential,fused --reps 5 --warmup-s 3 > $O/$name-$p.txt 2>&1; echo "$name-$p rc=$?" >> $O/rc.txt
  done
done
tar -C $OUT -czf $OUT/d.tgz d; rm -rf $O
