set -u
o=$OUT
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
nvidia-smi --query-gpu=name,driver_version,persistence_mode --format=csv,noheader
ls -d ~/.nv ~/.cache/nvidia 2>&1
for i in 1 2; do
  s=$(date +%s%N); t3 info > $o/info$i.txt 2>&1; echo "t3 info ($i) rc=$? $(ms $s) ms"
done
for i in 1 2; do
  s=$(date +%s%N)
  t3 run --preset tnlg-op-tp2 --dtype f16 --mode sequential,host,encoded,fused --reps 3 --tune off --verbose > $o/run$i.txt 2>&1
  echo "t3 run tnlg-op-tp2 f16 ($i) rc=$? $(ms $s) ms"
done
du -sh ~/.nv ~/.cache/nvidia 2>&1
s=$(date +%s%N)
DTYPE=f16 PER_S=60 TO=150 OUT=$o/a bash scripts/device/tuned_runs.sh mtnlg-ipbwd-tp8
echo "mtnlg-ipbwd-tp8 f16 tuned and run $(ms $s) ms"
