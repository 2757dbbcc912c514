# Run 35 call 4: fused mode with the coherent put (16-byte plain stores) in f16, in the GEMM's dispatch and with spares of their own.
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
run coh tnlg-op-tp8 sequential,fused "" T3_FUSED_PUT=coherent
run cohown tnlg-op-tp8 sequential,fused "" T3_FUSED_PUT=coherent T3_FUSED_SPARE_DISPATCH=own
run coh gpt3-op-tp8 sequential,fused "" T3_FUSED_PUT=coherent
run cohown gpt3-op-tp8 sequential,fused "" T3_FUSED_PUT=coherent T3_FUSED_SPARE_DISPATCH=own
run coh tnlg-fc2-tp8 sequential,fused "" T3_FUSED_PUT=coherent
run cohown tnlg-fc2-tp8 sequential,fused "" T3_FUSED_PUT=coherent T3_FUSED_SPARE_DISPATCH=own
run owntile tnlg-fc2-tp8 sequential,fused "" T3_FUSED_SPARE_DISPATCH=own
