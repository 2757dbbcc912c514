set -u
o=$OUT
DTYPE=f32 PER_S=35 TO=90 OUT=$o/a bash scripts/device/tuned_runs.sh megagpt2-fc2-tp4 megagpt2-fc1bwd-tp4 tnlg-op-tp4 tnlg-fc2-tp4 tnlg-fc1bwd-tp4 tnlg-ipbwd-tp4
DTYPE=f32 PER_S=35 TO=90 OUT=$o/b bash scripts/device/tuned_runs.sh megagpt2-op-tp2 megagpt2-fc2-tp2 megagpt2-fc1bwd-tp2 megagpt2-ipbwd-tp2 tnlg-op-tp2 tnlg-ipbwd-tp2
