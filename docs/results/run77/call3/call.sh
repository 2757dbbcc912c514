set -u
o=$OUT
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
timeout 120 t3 run --preset mtnlg-op-tp8 --dtype f16 --mode sequential,fused --reps 3 --tune off --verbose > $o/smoke.txt 2>&1
echo "smoke mtnlg-op-tp8 f16 rc=$? ($SECONDS s): $(grep -E '^(sequential|fused) +[a-z]+ +[0-9]|fused.*(skip|four|window)' $o/smoke.txt | tr -s ' ' | tr '\n' '|')"
TUNE_ARGS="--mode sequential,fused" MODES=sequential,fused DTYPE=f16 PER_S=30 TO=120 OUT=$o/a bash scripts/device/tuned_runs.sh mtnlg-op-tp8 palm-op-tp8 mtnlg-ipbwd-tp8 palm-ipbwd-tp8 mtnlg-fc2-tp8 palm-fc2-tp8 mtnlg-fc1bwd-tp8 palm-fc1bwd-tp8
