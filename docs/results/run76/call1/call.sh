set -u
o=$OUT
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
TABLE=.gpu-side/table-run75.json DTYPE=f32 TO=150 OUT=$o/a bash scripts/device/tuned_runs.sh palm-fc2-tp8 palm-fc1bwd-tp8 palm-ipbwd-tp8
DTYPE=f16 PER_S=55 TO=150 OUT=$o/b bash scripts/device/tuned_runs.sh palm-ipbwd-tp2
DTYPE=f32 PER_S=35 TO=90 OUT=$o/c bash scripts/device/tuned_runs.sh megagpt2-op-tp4 megagpt2-ipbwd-tp4
