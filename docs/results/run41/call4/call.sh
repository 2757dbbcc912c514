# Run 41 call 4 (9e504bf + landing, second form: no register more in the GEMM, the landing code only in the landing spares pipeline (LAND), grouped order beside the cooperative GEMM): landed (default) against T3_FUSED_LAND=off, same build.
set -u
o=$OUT/r; mkdir -p $o
run() { # name modes extra-args env...
  n=$1; m=$2; x=$3; shift 3
  s0=$(date +%s)
  env "$@" timeout ${TO:-150} t3 run --collective reduce-scatter --reduce update --link-gbps 150 --mode $m --reps 3 --dtype ${DT:-f16} $x --json $o/$n.json > $o/$n.txt 2>&1
  echo "== $n rc=$? $(( $(date +%s) - s0 )) s ${DT:-f16} $x $*" >> $OUT/summary.txt
  grep -E "^(fused      |baselines|fused own|           seq|sequential|encoded|host  |fused  |error|Error|  T_|warning)" $o/$n.txt | cut -c1-200 >> $OUT/summary.txt
  tar czf $OUT/r.tgz -C $OUT r
}
nvidia-smi --query-gpu=name --format=csv >> $OUT/summary.txt
cat .gpu/commit.txt >> $OUT/summary.txt
t3 calibrate > $o/calibrate.txt 2>&1; echo "calibrate rc=$?" >> $OUT/summary.txt
DT=f32 run f32-tnlg-op sequential,encoded,fused "--preset tnlg-op-tp8 --chunks 1" X=1
DT=f32 run f32-tnlg-op-off fused "--preset tnlg-op-tp8 --chunks 1" T3_FUSED_LAND=off
for p in tnlg-op tnlg-fc2 gpt3-op; do
  run $p sequential,encoded,fused "--preset $p-tp8 --chunks 1 --gemm-grid 128" X=1
  run $p-off fused "--preset $p-tp8 --chunks 1 --gemm-grid 128" T3_FUSED_LAND=off
done
DT=f32 run f32-gpt3-op sequential,fused "--preset gpt3-op-tp8 --chunks 1" X=1
DT=f32 run f32-gpt3-op-off fused "--preset gpt3-op-tp8 --chunks 1" T3_FUSED_LAND=off
DT=f32 run f32-tnlg-fc2 sequential,fused "--preset tnlg-fc2-tp8 --chunks 1" X=1
DT=f32 run f32-tnlg-fc2-off fused "--preset tnlg-fc2-tp8 --chunks 1" T3_FUSED_LAND=off
tar czf $OUT/r.tgz -C $OUT r
