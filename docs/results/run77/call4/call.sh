set -u
o=$OUT
TUNE_ARGS="--mode sequential,fused" MODES=sequential,fused DTYPE=f32 PER_S=22 TO=100 OUT=$o/a bash scripts/device/tuned_runs.sh mtnlg-op-tp8 palm-op-tp8 mtnlg-ipbwd-tp8 palm-ipbwd-tp8 mtnlg-fc2-tp8 palm-fc2-tp8 mtnlg-fc1bwd-tp8 palm-fc1bwd-tp8
