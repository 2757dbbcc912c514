set -u
o=$OUT
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
s=$(date +%s%N); t3 run --preset tnlg-op-tp2 --dtype f16 --reps 3 --tune off > $o/warmup.txt 2>&1; echo "t3 run tnlg-op-tp2 f16 (first process) rc=$? $(ms $s) ms"
for pd in mtnlg-ipbwd-tp8:f16 mtnlg-ipbwd-tp8:f32 palm-ipbwd-tp2:f16; do
  p=${pd%%:*}; d=${pd##*:}
  s=$(date +%s%N)
  timeout 150 t3 tune --preset $p --dtype $d --out $o/$p-$d.json > $o/$p-$d-tune.txt 2>&1
  echo "t3 tune --preset $p --dtype $d (default budget) rc=$? $(ms $s) ms: $(grep 'tuned in' $o/$p-$d-tune.txt)"
done
