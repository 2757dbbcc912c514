# Run 39 call 3 (uncommitted build: the watched GEMM is the tracked GEMM's own module where the packed output and B fit one binding each; T3_FUSED_SPARES_AT=before puts the spares' dispatch before the GEMM's, so a GEMM of a workgroup per tile runs beside them).
set -u
o=$OUT/r; mkdir -p $o
run() { # name modes extra-args env...
  n=$1; m=$2; x=$3; shift 3
  s0=$(date +%s)
  env "$@" timeout ${TO:-120} t3 run --collective reduce-scatter --reduce update --link-gbps 150 --mode $m --reps 3 --dtype ${DT:-f32} $x --json $o/$n.json > $o/$n.txt 2>&1
  echo "== $n rc=$? $(( $(date +%s) - s0 )) s ${DT:-f32} $x $*" >> $OUT/summary.txt
  grep -E "^(fused      |baselines|fused own|           seq|sequential|encoded|fused  |error|Error|  T_|warning)" $o/$n.txt | cut -c1-170 >> $OUT/summary.txt
  tar czf $OUT/r.tgz -C $OUT r
}
t3 calibrate > $o/calibrate.txt 2>&1; echo "calibrate rc=$?" >> $OUT/summary.txt
B="T3_FUSED_SPARES_AT=before T3_FUSED_GRID=0"
run r2-default sequential,fused "--shape 8192x12288x1536 --ranks 2 --chunks 1" X=1
run r2-before sequential,fused "--shape 8192x12288x1536 --ranks 2 --chunks 1" $B
run tnlg-op-default sequential,encoded,fused "--preset tnlg-op-tp8 --chunks 1" X=1
run tnlg-op-before sequential,encoded,fused "--preset tnlg-op-tp8 --chunks 1" $B
run tnlg-fc2-before sequential,encoded,fused "--preset tnlg-fc2-tp8 --chunks 1" $B
run gpt3-op-before sequential,encoded,fused "--preset gpt3-op-tp8 --chunks 1" $B
DT=f16 run f16-tnlg-op-default sequential,encoded,fused "--preset tnlg-op-tp8 --chunks 1 --gemm-grid 128" X=1
DT=f16 run f16-tnlg-op-before sequential,encoded,fused "--preset tnlg-op-tp8 --chunks 1 --gemm-grid 128" $B
tar czf $OUT/r.tgz -C $OUT r
