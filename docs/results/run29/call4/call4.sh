. .gpu/prelude.sh; O=$OUT/x; mkdir -p $O
t3 calibrate > $O/calibrate.txt 2>&1
for r in 1 2; do for v in noloop committed; do f=; [ $v = noloop ] && f=.gpu/noloop.wgsl
  T3_COOP_WGSL=$f T3_BENCH_KERNEL=coop T3_BENCH_SIZES=4096,8192,8192x4256x532,8192x12288x1536 T3_BENCH_DTYPES=f16 T3_BENCH_REPS=9 T3_BENCH_WARMUP_S=2 bench-gemm 2>&1 | grep "^gemm" | sed "s/^/$r $v: /" >> $O/ab.txt
done; done
for g in 0 128; do gf=; [ $g != 0 ] && gf="--gemm-grid $g"
  t3 run --preset tnlg-op-tp8 --dtype f16 --collective reduce-scatter --reduce forward --chunks 1 --link-gbps 150 --mode sequential,host,encoded --reps 5 $gf --trace $O/trace-g$g.json > $O/trace-g$g.txt 2>&1
done
for p in tnlg-op-tp8 gpt3-op-tp8; do for g in 0 128; do gf=; [ $g != 0 ] && gf="--gemm-grid $g"
  T3_FUSED_SPARES=0 t3 run --preset $p --dtype f16 --collective reduce-scatter --reduce update --chunks 1 --link-gbps 150 --mode sequential,encoded,fused --reps 5 $gf > $O/fused0-g$g-$p.txt 2>&1
done; done
tar -C $OUT -czf $OUT/x.tgz x; rm -rf $O
