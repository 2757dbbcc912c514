# Run 41 call 1 (9e504bf; t3-exp = 9e504bf + last.patch: T3_EXP_LAST=drop leaves out the ring's last stage of transfers, =ungated lets it add into the destination's own chunk without waiting for its tiles; both leave wrong results on purpose and are timings only). What bounds f16 fused mode's efficiency: the GEMM beside the transfers, or the last step after it?
set -u
o=$OUT/r; mkdir -p $o
run() { # name bin modes extra-args env...
  n=$1; b=$2; m=$3; x=$4; shift 4
  s0=$(date +%s)
  env "$@" timeout ${TO:-150} $b run --collective reduce-scatter --reduce update --link-gbps 150 --mode $m --reps 3 --dtype ${DT:-f16} $x --json $o/$n.json > $o/$n.txt 2>&1
  echo "== $n rc=$? $(( $(date +%s) - s0 )) s ${DT:-f16} $b $x $*" >> $OUT/summary.txt
  grep -E "^(fused      |baselines|fused own|           seq|sequential|encoded|host  |fused  |error|Error|  T_|warning)" $o/$n.txt | cut -c1-170 >> $OUT/summary.txt
  tar czf $OUT/r.tgz -C $OUT r
}
nvidia-smi --query-gpu=name --format=csv >> $OUT/summary.txt
cat .gpu/commit.txt >> $OUT/summary.txt
t3 calibrate > $o/calibrate.txt 2>&1; echo "calibrate rc=$?" >> $OUT/summary.txt
for p in tnlg-op tnlg-fc2 gpt3-op; do
  run $p t3 sequential,fused "--preset $p-tp8 --chunks 1 --gemm-grid 128" X=1
  run $p-drop t3-exp fused "--preset $p-tp8 --chunks 1 --gemm-grid 128" T3_EXP_LAST=drop
  run $p-ungated t3-exp fused "--preset $p-tp8 --chunks 1 --gemm-grid 128" T3_EXP_LAST=ungated
done
DT=f32 run f32-tnlg-op t3 sequential,fused "--preset tnlg-op-tp8 --chunks 1" X=1
DT=f32 run f32-tnlg-op-drop t3-exp fused "--preset tnlg-op-tp8 --chunks 1" T3_EXP_LAST=drop
DT=f32 run f32-tnlg-op-ungated t3-exp fused "--preset tnlg-op-tp8 --chunks 1" T3_EXP_LAST=ungated
tar czf $OUT/r.tgz -C $OUT r
