# Run 40 call 2 (d09cb02): longer pauses (T3_FUSED_PAUSE=N dependent reads of an idle spare between polls), and gpt3-fc2 f32 with a pause against encoded.
set -u
o=$OUT/r; mkdir -p $o
run() { # name modes extra-args env...
  n=$1; m=$2; x=$3; shift 3
  s0=$(date +%s)
  env "$@" timeout ${TO:-150} t3 run --collective reduce-scatter --reduce update --link-gbps 150 --mode $m --reps 3 --dtype ${DT:-f32} $x --json $o/$n.json > $o/$n.txt 2>&1
  echo "== $n rc=$? $(( $(date +%s) - s0 )) s ${DT:-f32} $x $*" >> $OUT/summary.txt
  grep -E "^(fused      |baselines|fused own|           seq|sequential|encoded|host  |fused  |error|Error|  T_|warning)" $o/$n.txt | cut -c1-170 >> $OUT/summary.txt
  tar czf $OUT/r.tgz -C $OUT r
}
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv >> $OUT/summary.txt
t3 calibrate > $o/calibrate.txt 2>&1; echo "calibrate rc=$?" >> $OUT/summary.txt
for p in 512 128 2048; do run gpt3-op-p$p fused "--preset gpt3-op-tp8 --chunks 1" T3_FUSED_PAUSE=$p; done
for p in 512 2048; do run tnlg-op-p$p fused "--preset tnlg-op-tp8 --chunks 1" T3_FUSED_PAUSE=$p; done
for p in 128 512; do DT=f16 run f16-gpt3-op-p$p encoded,fused "--preset gpt3-op-tp8 --chunks 1" T3_FUSED_PAUSE=$p; done
for p in 128 512; do DT=f16 run f16-tnlg-op-p$p encoded,fused "--preset tnlg-op-tp8 --chunks 1 --gemm-grid 128" T3_FUSED_PAUSE=$p; done
TO=250 run gpt3-fc2-p512 encoded,fused "--preset gpt3-fc2-tp8 --chunks 1" T3_FUSED_PAUSE=512
tar czf $OUT/r.tgz -C $OUT r
