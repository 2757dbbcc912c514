# Run 40 call 6 (452f33b, no knob set): issue 14's f16 overlap efficiency >= 0.8: fused and encoded at 2 and 4 chunks per rank on the four TP-8 presets (the stagger's last step, exposed after the GEMM, shrinks with the chunk).
set -u
o=$OUT/r; mkdir -p $o
run() { # name modes extra-args env...
  n=$1; m=$2; x=$3; shift 3
  s0=$(date +%s)
  env "$@" timeout ${TO:-150} t3 run --collective reduce-scatter --reduce update --link-gbps 150 --mode $m --reps 3 --dtype ${DT:-f32} $x --json $o/$n.json > $o/$n.txt 2>&1
  echo "== $n rc=$? $(( $(date +%s) - s0 )) s ${DT:-f32} $x $*" >> $OUT/summary.txt
  grep -E "^(fused      |baselines|fused own|           seq|sequential|encoded|host  |fused  |error|Error|  T_|warning|checks)" $o/$n.txt | cut -c1-170 >> $OUT/summary.txt
  tar czf $OUT/r.tgz -C $OUT r
}
nvidia-smi --query-gpu=name --format=csv >> $OUT/summary.txt
cat .gpu/commit.txt >> $OUT/summary.txt
t3 calibrate > $o/calibrate.txt 2>&1; echo "calibrate rc=$?" >> $OUT/summary.txt
for c in 2 4; do for p in tnlg-op tnlg-fc2 gpt3-op; do DT=f16 run f16-$p-c$c encoded,fused "--preset $p-tp8 --chunks $c --gemm-grid 128" X=1; done; done
for c in 2 4; do DT=f16 TO=200 run f16-gpt3-fc2-c$c encoded,fused "--preset gpt3-fc2-tp8 --chunks $c --gemm-grid 128" X=1; done
tar czf $OUT/r.tgz -C $OUT r
