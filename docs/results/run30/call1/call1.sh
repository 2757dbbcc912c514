. .gpu/prelude.sh; O=$OUT/f; mkdir -p $O
git log -1 --format=%h > $O/commit.txt 2>&1
t3 calibrate > $O/calibrate.txt 2>&1
run() { # name preset dtype reduce modes [extra...]
  n=$1; p=$2; d=$3; r=$4; m=$5; shift 5
  t3 run --preset $p --dtype $d --collective reduce-scatter --reduce $r --chunks 1 --link-gbps 150 --mode $m --reps 5 "$@" > $O/$n-$p-$d.txt 2>&1; echo "$n-$p-$d rc=$?" >> $O/rc.txt
}
for p in tnlg-op-tp8 gpt3-op-tp8; do
  run enc $p f16 forward sequential,encoded --gemm-grid 128
  run base $p f16 update sequential,encoded,fused
  for v in "d8-first-orph:8:first:orphans" "d4-first-orph:4:first:orphans" "d1-first-orph:1:first:orphans" "d8-first-always:8:first:always" "d8-last-always:8:last:always" "d16sp-d8-first-orph:8:first:orphans:32"; do
    IFS=: read name dep at help sp <<< "$v"
    T3_FUSED_DEPTH=$dep T3_FUSED_SPARES_AT=$at T3_FUSED_HELP=$help T3_FUSED_SPARES=${sp:-auto} run $name $p f16 update sequential,fused
  done
done
T3_REQUIRE_GPU=1 T3_SOAK=1 T3_SOAK_CASES=40 .gpu/bin/test-fused > $O/test-fused.txt 2>&1; echo "test-fused rc=$?" >> $O/rc.txt
tar -C $OUT -czf $OUT/f.tgz f; rm -rf $O
