# Run 35 call 3: fused mode's spares of their own (the rest of call 2, which ran out of time after its encoded runs).
set -u
o=$OUT/r; mkdir -p $o


run() { # name preset modes extra-args env...
  n=$1; p=$2; m=$3; x=$4; shift 4
  env "$@" timeout 70 t3 run --preset $p --dtype ${DT:-f16} --collective reduce-scatter --reduce update --chunks 1 --link-gbps 150 --mode $m --reps 3 $x --json $o/$n-$p.json > $o/$n-$p.txt 2>&1
  echo "== $n $p rc=$? $*" >> $OUT/summary.txt
  grep -E "^(baselines|           T_|sequential|encoded|fused|error|Error)" $o/$n-$p.txt | cut -c1-150 >> $OUT/summary.txt
  tar czf $OUT/r.tgz -C $OUT r
}
t3 calibrate > $o/calibrate.txt 2>&1; echo "calibrate rc=$?" >> $OUT/summary.txt
run own132 tnlg-op-tp8 sequential,fused "" T3_FUSED_SPARE_DISPATCH=own T3_FUSED_GRID=132
run own132noalias tnlg-op-tp8 sequential,fused "" T3_FUSED_SPARE_DISPATCH=own T3_FUSED_GRID=132 T3_ALIAS=0
run owntile tnlg-op-tp8 sequential,fused "" T3_FUSED_SPARE_DISPATCH=own
run gemm132 tnlg-op-tp8 sequential,fused "" T3_FUSED_GRID=132
run own132 gpt3-op-tp8 sequential,fused "" T3_FUSED_SPARE_DISPATCH=own T3_FUSED_GRID=132
run own132 tnlg-fc2-tp8 sequential,fused "" T3_FUSED_SPARE_DISPATCH=own T3_FUSED_GRID=132
run owntile gpt3-op-tp8 sequential,fused "" T3_FUSED_SPARE_DISPATCH=own
