. .gpu/prelude.sh; O=$OUT/l; mkdir -p $O
t3-98e6473 calibrate > $O/calibrate.txt 2>&1
for g in 0 128; do for l in 75 150 300 600; do gf=; [ $g != 0 ] && gf="--gemm-grid $g"
  t3-98e6473 run --preset tnlg-op-tp8 --dtype f16 --collective reduce-scatter --reduce forward --chunks 1 --link-gbps $l --mode sequential,encoded --reps 5 $gf --trace $O/trace-g$g-l$l.json > $O/g$g-l$l.txt 2>&1; echo "g$g-l$l rc=$?" >> $O/rc.txt
done; done
tar -C $OUT -czf $OUT/l.tgz l; rm -rf $O
