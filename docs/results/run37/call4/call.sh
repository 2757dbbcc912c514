# Run 37 call 4: the final build (fused mode's efficiency against its own GEMM, then the faster of its transfers and T_comm): calls 1 and 2's tables again in one call, f16 and f32, then f32 fused variants with the GEMM workgroups triggering (spares in the GEMM's dispatch on the grid's free slots).
set -u
o=$OUT/r; mkdir -p $o
run() { # name modes extra-args env...
  n=$1; m=$2; x=$3; shift 3
  s0=$(date +%s)
  env "$@" timeout ${TO:-90} t3 run --collective reduce-scatter --reduce update --link-gbps 150 --mode $m --reps 3 --dtype ${DT:-f16} $x --json $o/$n.json > $o/$n.txt 2>&1
  echo "== $n rc=$? $(( $(date +%s) - s0 )) s ${DT:-f16} $x $*" >> $OUT/summary.txt
  grep -E "^(baselines|           [a-zT]|fused own|sequential|encoded|fused|error|Error|  T_)" $o/$n.txt | cut -c1-160 >> $OUT/summary.txt
  tar czf $OUT/r.tgz -C $OUT r
}
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv > $o/gpu.txt 2>&1
t3 calibrate > $o/calibrate.txt 2>&1; echo "calibrate rc=$?" >> $OUT/summary.txt
W="T3_FUSED_TRIGGER=spares T3_FUSED_SPARE_DISPATCH=own T3_FUSED_PUT=coherent T3_FUSED_PIECES=64"
for p in tnlg-op-tp8 gpt3-op-tp8 tnlg-fc2-tp8; do
  run f16-$p sequential,encoded,fused "--preset $p --chunks 1 --gemm-grid 128" $W T3_FUSED_GRID=132 T3_FUSED_SPARES=396
done
TO=270 run f16-gpt3-fc2-tp8 sequential,encoded,fused "--preset gpt3-fc2-tp8 --chunks 1" $W T3_FUSED_GRID=132 T3_FUSED_SPARES=396
for p in tnlg-op-tp8 tnlg-fc2-tp8 gpt3-op-tp8; do
  DT=f32 TO=150 run f32-$p sequential,encoded,fused "--preset $p --chunks 1" $W T3_FUSED_GRID=256 T3_FUSED_SPARES=528
done
E="T3_FUSED_SPARE_DISPATCH=gemm T3_FUSED_PUT=coherent T3_FUSED_PIECES=64 T3_FUSED_GRID=256 T3_FUSED_SPARES=8"
DT=f32 run f32-tnlg-op-tp8-epi-idle fused "--preset tnlg-op-tp8 --chunks 1" $E T3_FUSED_HELP=idle
DT=f32 run f32-tnlg-op-tp8-epi-always fused "--preset tnlg-op-tp8 --chunks 1" $E T3_FUSED_HELP=always
