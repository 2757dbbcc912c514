set -u
o=$OUT
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
cp .gpu-side/tune-search.tgz $o/ || exit 1
s=$SECONDS; t3 run --preset tnlg-op-tp2 --dtype f16 --reps 3 --tune off > $o/warmup.txt 2>&1; echo "warm-up process rc=$? $((SECONDS - s)) s"
s=$SECONDS; GRID_S=130 OUT=$o bash scripts/device/tune.sh grid > $o/grid.txt 2>&1; echo "grid rc=$? $((SECONDS - s)) s"
grep -E "tuned in|wrote" $o/grid.txt
s=$SECONDS; OUT=$o bash scripts/device/tune.sh compare > $o/compare.txt 2>&1; echo "compare rc=$? $((SECONDS - s)) s"
cat $o/compare.txt | grep -v "^$" | head -40
echo "done ($SECONDS s)"
