# Run 35 call 2: fused mode's spares on a pipeline of their own beside the GEMM (aliased views), against encoded (grid 128) and sequential.
set -u
o=$OUT/r; mkdir -p $o
t3 info > $o/info.txt 2>&1
T3_PIPELINES=spares,coop\ f16\ store_windows T3_BENCH_JSON=$o/stats.jsonl timeout 120 bench-pipelines > $o/stats.txt 2>&1; echo "pipelines rc=$?" >> $o/rc.txt
t3 calibrate > $o/calibrate.txt 2>&1; echo "calibrate rc=$?" >> $o/rc.txt
run() { # name preset modes extra-args env...
  n=$1; p=$2; m=$3; x=$4; shift 4
  env "$@" timeout 100 t3 run --preset $p --dtype ${DT:-f16} --collective reduce-scatter --reduce update --chunks 1 --link-gbps 150 --mode $m --reps 5 $x --json $o/$n-$p.json > $o/$n-$p.txt 2>&1
  echo "$n $p rc=$?" >> $o/rc.txt
}
for p in tnlg-op-tp8 gpt3-op-tp8 tnlg-fc2-tp8 gpt3-fc2-tp8; do
  run enc $p sequential,encoded,fused "--gemm-grid 128"
  run own132 $p sequential,fused "" T3_FUSED_SPARE_DISPATCH=own T3_FUSED_GRID=132
  run own132noalias $p sequential,fused "" T3_FUSED_SPARE_DISPATCH=own T3_FUSED_GRID=132 T3_ALIAS=0
  run owntile $p sequential,fused "" T3_FUSED_SPARE_DISPATCH=own
done
tar czf $OUT/r.tgz -C $OUT r
