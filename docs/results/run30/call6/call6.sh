. .gpu/prelude.sh; O=$OUT/v; mkdir -p $O
t3 calibrate > $O/calibrate.txt 2>&1
for rep in 1 2; do for p in tnlg-op-tp8 gpt3-op-tp8 tnlg-fc2-tp8; do for b in t3 t3-98e6473; do
  .gpu/bin/$b run --preset $p --dtype f16 --collective reduce-scatter --reduce update --chunks 1 --link-gbps 150 --mode sequential,fused --reps 5 > $O/$b-$p-f16-$rep.txt 2>&1; echo "$b-$p-f16-$rep rc=$?" >> $O/rc.txt
done; done; done
for b in t3 t3-98e6473; do
  .gpu/bin/$b run --preset tnlg-op-tp8 --dtype f32 --collective reduce-scatter --reduce update --chunks 1 --link-gbps 150 --mode sequential,encoded,fused --reps 5 > $O/$b-tnlg-op-tp8-f32.txt 2>&1; echo "$b-tnlg-op-f32 rc=$?" >> $O/rc.txt
done
tar -C $OUT -czf $OUT/v.tgz v; rm -rf $O
