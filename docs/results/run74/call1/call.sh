set -u
o=$OUT
DTYPE=f16 PER_S=35 TO=90 OUT=$o/a bash scripts/device/tuned_runs.sh megagpt2-op-tp8 palm-op-tp8 gpt3-ipbwd-tp8
DTYPE=f16 PER_S=55 TO=150 OUT=$o/b bash scripts/device/tuned_runs.sh tnlg-fc1bwd-tp4 gpt3-fc2-tp4 gpt3-fc1bwd-tp4
