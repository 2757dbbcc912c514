# Run 40 call 5 (the commit in .gpu/commit.txt, no knob set): issue 13's table in one device run, every mode: f32 tnlg-fc2, gpt3-op and gpt3-fc2 (call 4: f16 and f32 tnlg-op).
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
for p in tnlg-fc2 gpt3-op; do run f32-$p sequential,host,encoded,fused "--preset $p-tp8 --chunks 1" X=1; done
TO=420 run f32-gpt3-fc2 sequential,host,encoded,fused "--preset gpt3-fc2-tp8 --chunks 1" X=1
tar czf $OUT/r.tgz -C $OUT r
