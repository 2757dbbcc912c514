set -u
o=$OUT
DTYPE=f16 PER_S=55 TO=150 OUT=$o/a bash scripts/device/tuned_runs.sh palm-fc2-tp4 palm-fc1bwd-tp4 palm-ipbwd-tp4
DTYPE=f16 PER_S=35 TO=90 OUT=$o/b bash scripts/device/tuned_runs.sh megagpt2-op-tp2 megagpt2-fc2-tp2 megagpt2-fc1bwd-tp2 megagpt2-ipbwd-tp2 tnlg-op-tp2 tnlg-fc2-tp2
