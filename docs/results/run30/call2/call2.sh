. .gpu/prelude.sh; O=$OUT/b; mkdir -p $O

t3 calibrate > $O/calibrate.txt 2>&1
for p in tnlg-op-tp8 gpt3-op-tp8; do for rep in 1 2; do
  for b in t3 t3-98e6473 t3-5fb8487; do
    .gpu/bin/$b run --preset $p --dtype f16 --collective reduce-scatter --reduce update --chunks 1 --link-gbps 150 --mode sequential,fused --reps 5 > $O/$b-$p-$rep.txt 2>&1; echo "$b-$p-$rep rc=$?" >> $O/rc.txt
  done
done; done
tar -C $OUT -czf $OUT/b.tgz b; rm -rf $O
