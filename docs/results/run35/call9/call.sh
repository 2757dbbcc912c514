# Run 35 call 9: spares moving PIECE_DEPTH vec4s per round (T3_FUSED_SPARE_DEPTH), their registers; the best beside encoded on three presets.
set -u
o=$OUT/r; mkdir -p $o
T3_PIPELINES=spares T3_BENCH_JSON=$o/stats.jsonl timeout 60 bench-pipelines > $o/stats.txt 2>&1; grep -E "Register" $o/stats.txt | cut -c1-140 >> $OUT/summary.txt
run() { # name modes extra-args env...
  n=$1; m=$2; x=$3; shift 3
  env "$@" timeout 60 t3 run --collective reduce-scatter --reduce update --link-gbps 150 --mode $m --reps 3 --dtype ${DT:-f16} $x --json $o/$n.json > $o/$n.txt 2>&1
  echo "== $n rc=$? $x $*" >> $OUT/summary.txt
  grep -E "^(sequential|encoded|fused|error|Error)" $o/$n.txt | cut -c1-150 >> $OUT/summary.txt
  tar czf $OUT/r.tgz -C $OUT r
}
t3 calibrate > $o/calibrate.txt 2>&1; echo "calibrate rc=$?" >> $OUT/summary.txt
E="T3_FUSED_SPARE_DISPATCH=own T3_FUSED_HELP=idle T3_FUSED_PUT=coherent T3_FUSED_GRID=132 T3_FUSED_PIECES=128"
p=tnlg-op-tp8
run d1s264-$p sequential,fused "--preset $p --chunks 1" $E T3_FUSED_SPARES=264 T3_FUSED_SPARE_DEPTH=1
run d2s264-$p sequential,fused "--preset $p --chunks 1" $E T3_FUSED_SPARES=264 T3_FUSED_SPARE_DEPTH=2
run d4s132-$p sequential,fused "--preset $p --chunks 1" $E T3_FUSED_SPARES=132 T3_FUSED_SPARE_DEPTH=4
run d4s264-$p sequential,fused "--preset $p --chunks 1" $E T3_FUSED_SPARES=264 T3_FUSED_SPARE_DEPTH=4
run d8s132-$p sequential,fused "--preset $p --chunks 1" $E T3_FUSED_SPARES=132 T3_FUSED_SPARE_DEPTH=8
for p in gpt3-op-tp8 tnlg-fc2-tp8; do
  run enc-$p sequential,encoded "--preset $p --chunks 1 --gemm-grid 128"
  run d1s264-$p sequential,fused "--preset $p --chunks 1" $E T3_FUSED_SPARES=264 T3_FUSED_SPARE_DEPTH=1
  run d4s132-$p sequential,fused "--preset $p --chunks 1" $E T3_FUSED_SPARES=132 T3_FUSED_SPARE_DEPTH=4
done
