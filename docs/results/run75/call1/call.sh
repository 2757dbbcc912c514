set -u
o=$OUT
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
DTYPE=f16 PER_S=55 TO=150 OUT=$o/a bash scripts/device/tuned_runs.sh palm-ipbwd-tp2
DTYPE=f32 PER_S=35 TO=90 OUT=$o/b bash scripts/device/tuned_runs.sh megagpt2-op-tp8 megagpt2-fc2-tp8 megagpt2-fc1bwd-tp8 megagpt2-ipbwd-tp8 tnlg-op-tp8 tnlg-fc2-tp8 tnlg-fc1bwd-tp8 tnlg-ipbwd-tp8
