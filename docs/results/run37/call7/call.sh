# Run 37 call 7: is fused mode's slower f32 GEMM its two output windows? (Its GEMM alone was 3.9% / 7.2% slower than T_gemm on gpt3-op / gpt3-fc2, whose packed outputs pass 2 GiB and are bound as two windows, and 0.8-1.5% on tnlg-op / tnlg-fc2, bound as one.) tnlg-op f32, fused alone, its output split at 512 MiB on purpose against one window; a persistent grid of 264 (every slot) and a workgroup per tile.
set -u
o=$OUT/r; mkdir -p $o
run() { # name modes extra-args env...
  n=$1; m=$2; x=$3; shift 3
  s0=$(date +%s)
  env "$@" timeout ${TO:-90} t3 run --collective reduce-scatter --reduce update --link-gbps 150 --mode $m --reps 3 --dtype ${DT:-f32} $x --json $o/$n.json > $o/$n.txt 2>&1
  echo "== $n rc=$? $(( $(date +%s) - s0 )) s ${DT:-f32} $x $*" >> $OUT/summary.txt
  grep -E "^(baselines|fused own|fused  |error|Error|  T_)" $o/$n.txt | cut -c1-160 >> $OUT/summary.txt
  tar czf $OUT/r.tgz -C $OUT r
}
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv > $o/gpu.txt 2>&1
t3 calibrate > $o/calibrate.txt 2>&1; echo "calibrate rc=$?" >> $OUT/summary.txt
W="T3_FUSED_TRIGGER=spares T3_FUSED_SPARE_DISPATCH=own T3_FUSED_PUT=coherent T3_FUSED_PIECES=64 T3_FUSED_SPARES=528"
for g in 264 0; do
  run f32-tnlg-op-g$g fused "--preset tnlg-op-tp8 --chunks 1" $W T3_FUSED_GRID=$g
  run f32-tnlg-op-g$g-split fused "--preset tnlg-op-tp8 --chunks 1" $W T3_FUSED_GRID=$g T3_FUSED_WINDOW=536870912
done
