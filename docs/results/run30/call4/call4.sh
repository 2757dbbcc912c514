. .gpu/prelude.sh; O=$OUT/u; mkdir -p $O
for w in 256 1024; do for g in 0 128; do gf=; [ $g != 0 ] && gf="--gemm-grid $g"
  t3-98e6473 run --preset tnlg-op-tp8 --dtype f16 --collective reduce-scatter --reduce forward --chunks 1 --link-workgroups $w --mode sequential,encoded --reps 5 $gf --trace $O/trace-g$g-w$w.json > $O/g$g-w$w.txt 2>&1; echo "g$g-w$w rc=$?" >> $O/rc.txt
done; done
tar -C $OUT -czf $OUT/u.tgz u; rm -rf $O
