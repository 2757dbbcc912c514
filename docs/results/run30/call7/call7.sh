. .gpu/prelude.sh; O=$OUT/n; mkdir -p $O
t3-98e6473 calibrate > $O/calibrate.txt 2>&1
for rep in 1 2; do for b in t3-nodeep t3-98e6473; do
  .gpu/bin/$b run --preset tnlg-op-tp8 --dtype f16 --collective reduce-scatter --reduce update --chunks 1 --link-gbps 150 --mode sequential,fused --reps 5 > $O/$b-tnlg-op-tp8-f16-$rep.txt 2>&1; echo "$b-$rep rc=$?" >> $O/rc.txt
done; done
tar -C $OUT -czf $OUT/n.tgz n; rm -rf $O
