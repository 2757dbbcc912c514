set -u
o=$OUT
TUNE_ARGS="--mode sequential,fused" MODES=sequential,fused DTYPE=f32 PER_S=30 TO=150 OUT=$o/a bash scripts/device/tuned_runs.sh mtnlg-ipbwd-tp8
DTYPE=f16 PER_S=55 TO=150 OUT=$o/b bash scripts/device/tuned_runs.sh palm-ipbwd-tp2
TUNE_ARGS="--mode sequential,fused" MODES=sequential,fused DTYPE=f32 PER_S=30 TO=150 OUT=$o/c bash scripts/device/tuned_runs.sh palm-ipbwd-tp8
