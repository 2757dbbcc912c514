# Run 37 call 5: issue 13's "no mode slower than sequential": every mode (sequential, host, encoded, fused with the spares as the trigger) on the four TP-8 presets in f16, one `t3 run` each.
set -u
o=$OUT/r; mkdir -p $o
run() { # name modes extra-args env...
  n=$1; m=$2; x=$3; shift 3
  s0=$(date +%s)
  env "$@" timeout ${TO:-90} t3 run --collective reduce-scatter --reduce update --link-gbps 150 --mode $m --reps 3 --dtype ${DT:-f16} $x --json $o/$n.json > $o/$n.txt 2>&1
  echo "== $n rc=$? $(( $(date +%s) - s0 )) s ${DT:-f16} $x $*" >> $OUT/summary.txt
  grep -E "^(baselines|           [a-zT]|fused own|sequential|host|encoded|fused|error|Error|  T_)" $o/$n.txt | cut -c1-160 >> $OUT/summary.txt
  tar czf $OUT/r.tgz -C $OUT r
}
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv > $o/gpu.txt 2>&1
t3 calibrate > $o/calibrate.txt 2>&1; echo "calibrate rc=$?" >> $OUT/summary.txt
W="T3_FUSED_TRIGGER=spares T3_FUSED_SPARE_DISPATCH=own T3_FUSED_PUT=coherent T3_FUSED_PIECES=64 T3_FUSED_GRID=132 T3_FUSED_SPARES=396"
for p in tnlg-op-tp8 gpt3-op-tp8 tnlg-fc2-tp8; do
  TO=120 run f16-$p sequential,host,encoded,fused "--preset $p --chunks 1 --gemm-grid 128" $W
done
TO=300 run f16-gpt3-fc2-tp8 sequential,host,encoded,fused "--preset gpt3-fc2-tp8 --chunks 1" $W
