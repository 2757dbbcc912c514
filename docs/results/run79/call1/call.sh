set -u
o=$OUT
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
DTYPE=f16 PER_S=60 TO=150 OUT=$o/a bash scripts/device/tuned_runs.sh palm-ipbwd-tp2
DTYPE=f16 PER_S=60 TO=150 OUT=$o/b bash scripts/device/tuned_runs.sh mtnlg-fc2-tp4
DTYPE=f16 PER_S=60 TO=150 OUT=$o/c bash scripts/device/tuned_runs.sh palm-ipbwd-tp4
DTYPE=f16 PER_S=60 TO=150 OUT=$o/d bash scripts/device/tuned_runs.sh mtnlg-ipbwd-tp8
