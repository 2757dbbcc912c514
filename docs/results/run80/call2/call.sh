set -u
o=$OUT
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
s=$SECONDS; t3 run --preset tnlg-op-tp2 --dtype f16 --reps 3 --tune off > $o/warmup.txt 2>&1; echo "warm-up process rc=$? $((SECONDS - s)) s"
s=$SECONDS; SEARCH_S=160 OUT=$o bash scripts/device/tune.sh search > $o/search.txt 2>&1; echo "search rc=$? $((SECONDS - s)) s"
grep -E "^search (f32|f16):|tuned in|wrote" $o/search.txt
echo "done ($SECONDS s)"
