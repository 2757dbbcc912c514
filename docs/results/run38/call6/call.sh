# Run 38 call 6 (96c70e2, no knob set; call 5 on an H100): the final defaults (unguarded SIMT loads; in f32 two spares per SM beside a grid of every slot) on the four TP-8 presets in f32, sequential / encoded / fused; f16 tnlg-op beside (the cooperative kernel, unchanged).
set -u
o=$OUT/r; mkdir -p $o
run() { # name modes extra-args env...
  n=$1; m=$2; x=$3; shift 3
  s0=$(date +%s)
  env "$@" timeout ${TO:-90} t3 run --collective reduce-scatter --reduce update --link-gbps 150 --mode $m --reps 3 --dtype ${DT:-f16} $x --json $o/$n.json > $o/$n.txt 2>&1
  echo "== $n rc=$? $(( $(date +%s) - s0 )) s ${DT:-f16} $x $*" >> $OUT/summary.txt
  grep -E "^(fused      |baselines|fused own|           seq|sequential|encoded|fused  |error|Error|  T_|  check|  !)" $o/$n.txt | cut -c1-170 >> $OUT/summary.txt
  tar czf $OUT/r.tgz -C $OUT r
}
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv > $o/gpu.txt 2>&1; cat $o/gpu.txt >> $OUT/summary.txt
t3 info > $o/info.txt 2>&1; grep -E "^[0-9]|multiprocessors" $o/info.txt >> $OUT/summary.txt
t3 calibrate > $o/calibrate.txt 2>&1; echo "calibrate rc=$?" >> $OUT/summary.txt
DT=f32 run f32-tnlg-op-tp8 sequential,encoded,fused "--preset tnlg-op-tp8 --chunks 1"
DT=f32 run f32-tnlg-fc2-tp8 sequential,encoded,fused "--preset tnlg-fc2-tp8 --chunks 1"
DT=f32 run f32-gpt3-op-tp8 sequential,encoded,fused "--preset gpt3-op-tp8 --chunks 1"
run f16-tnlg-op-tp8 sequential,encoded,fused "--preset tnlg-op-tp8 --chunks 1 --gemm-grid 128"
DT=f32 TO=280 run f32-gpt3-fc2-tp8 sequential,encoded,fused "--preset gpt3-fc2-tp8 --chunks 1"
tar czf $OUT/r.tgz -C $OUT r
