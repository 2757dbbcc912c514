set -u
o=$OUT
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
DTYPE=f32 PER_S=55 TO=150 OUT=$o/a bash scripts/device/tuned_runs.sh mtnlg-fc2-tp4 mtnlg-fc1bwd-tp4 mtnlg-ipbwd-tp4
