set -u
o=$OUT
DTYPE=f16 PER_S=55 TO=150 OUT=$o/a bash scripts/device/tuned_runs.sh gpt3-ipbwd-tp4 mtnlg-op-tp4 mtnlg-fc2-tp4 mtnlg-fc1bwd-tp4 mtnlg-ipbwd-tp4 palm-op-tp4
