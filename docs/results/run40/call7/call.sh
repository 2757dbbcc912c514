# Run 40 call 7 (452f33b, no knob set, an H100): run 40's defaults (idle spares' pause; on tnlg-op f16 the grid that leaves an eighth of the SMs to spares), tuned on an H200, on an H100: sequential, encoded and fused.
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
for p in tnlg-op gpt3-op tnlg-fc2; do DT=f16 run f16-$p sequential,encoded,fused "--preset $p-tp8 --chunks 1 --gemm-grid 128" X=1; done
for p in tnlg-op gpt3-op; do run f32-$p sequential,encoded,fused "--preset $p-tp8 --chunks 1" X=1; done
tar czf $OUT/r.tgz -C $OUT r
