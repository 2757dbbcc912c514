set -u
o=$OUT
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
s=$(date +%s%N); t3 run --preset tnlg-op-tp2 --dtype f16 --reps 3 --tune off > $o/warmup.txt 2>&1; echo "t3 run tnlg-op-tp2 f16 (warm-up process) rc=$? $(ms $s) ms"
for pd in mtnlg-ipbwd-tp8:f16 mtnlg-ipbwd-tp8:f32 palm-ipbwd-tp2:f16 mtnlg-fc2-tp4:f16 palm-ipbwd-tp4:f16; do
  p=${pd%%:*}; d=${pd##*:}
  [ $SECONDS -gt 420 ] && { echo "skipped $p $d ($SECONDS s)"; continue; }
  s=$(date +%s%N)
  timeout 100 t3 tune --preset $p --dtype $d --out $o/$p-$d.json > $o/$p-$d-tune.txt 2>&1
  echo "t3 tune --preset $p --dtype $d (default budget) rc=$? $(ms $s) ms: $(grep 'tuned in' $o/$p-$d-tune.txt)"
  TABLE=$o/$p-$d.json DTYPE=$d TO=60 OUT=$o/$p-$d bash scripts/device/tuned_runs.sh $p
done
echo "done ($SECONDS s)"
