# Run 32 call 1: step pipelines' registers with and without ACC; update reduces beside the grid, old vs new step pipelines.
set -u
o=$OUT/r; mkdir -p $o
t3 info > $o/info.txt 2>&1
T3_BENCH_JSON=$o/stats.jsonl bench-pipelines > $o/stats.txt 2>&1; echo "pipelines rc=$?" >> $o/rc.txt
t3 calibrate > $o/calibrate.txt 2>&1; echo "calibrate rc=$?" >> $o/rc.txt
mkdir -p old; cp .gpu/bin/t3-old old/t3
for p in tnlg-op-tp8 gpt3-op-tp8; do for g in 128 0; do for b in new old; do
  T3=.gpu/bin/t3; [ $b = old ] && T3=old/t3
  gf=""; [ $g != 0 ] && gf="--gemm-grid $g"
  timeout 120 $T3 run --preset $p --dtype f16 --collective reduce-scatter --reduce update --chunks 1 --link-gbps 150 --mode sequential,host,encoded --reps 5 $gf --json $o/$b-$p-g$g.json > $o/$b-$p-g$g.txt 2>&1
  echo "$b $p g$g rc=$?" >> $o/rc.txt
done; done; done
timeout 120 .gpu/bin/t3 run --preset tnlg-op-tp8 --dtype f16 --collective reduce-scatter --reduce forward --chunks 1 --link-gbps 150 --mode sequential,host,encoded --reps 5 --gemm-grid 128 --json $o/new-fwd-tnlg-op-tp8-g128.json > $o/new-fwd-tnlg-op-tp8-g128.txt 2>&1
echo "new fwd rc=$?" >> $o/rc.txt
tar czf $OUT/r.tgz -C $OUT r
