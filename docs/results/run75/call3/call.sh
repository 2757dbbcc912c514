set -u
o=$OUT
mkdir -p $o/a
for p in mtnlg-fc2-tp8 mtnlg-fc1bwd-tp8; do
  timeout 150 t3 run --preset $p --dtype f32 --mode sequential,host,encoded,fused --reps 3 --tune .gpu-side/table-call2.json --verbose > $o/a/$p-f32.txt 2>&1
  echo "$p f32 rc=$?: $(grep -E '^(sequential|host|encoded|fused) +[a-z]+ +[0-9]' $o/a/$p-f32.txt | tr -s ' ' | cut -d' ' -f1,3,5 | tr '\n' '|')$(grep -E '^fallback ' $o/a/$p-f32.txt | sed -E 's/^fallback +([a-z]+): fell back.* ran ([0-9.]+x).*/\1 fell back (\2)/' | tr '\n' '|')"
done
DTYPE=f32 PER_S=55 TO=150 OUT=$o/b bash scripts/device/tuned_runs.sh mtnlg-ipbwd-tp8 palm-op-tp8 palm-fc2-tp8 palm-fc1bwd-tp8 palm-ipbwd-tp8
