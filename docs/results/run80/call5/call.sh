set -u
o=$OUT
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
du -sh ~/.cache/nvidia 2>&1
for i in 1 2; do
  s=$(date +%s%N)
  timeout 100 t3 tune --preset mtnlg-ipbwd-tp8 --dtype f16 --budget-s 1 --out $o/t$i.json > $o/tune$i.txt 2>&1
  echo "t3 tune mtnlg-ipbwd-tp8 f16 --budget-s 1 (process $i) rc=$? $(( ($(date +%s%N) - s) / 1000000 )) ms"
  grep "as given took\|tuned in" $o/tune$i.txt
  du -sh ~/.cache/nvidia 2>&1
done
echo "done ($SECONDS s)"
