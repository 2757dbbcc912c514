set -u
o=$OUT
DTYPE=f32 PER_S=55 TO=150 OUT=$o/a bash scripts/device/tuned_runs.sh gpt3-fc2-tp4 gpt3-fc1bwd-tp4 gpt3-ipbwd-tp4
DTYPE=f32 PER_S=55 TO=150 OUT=$o/b bash scripts/device/tuned_runs.sh mtnlg-op-tp2
DTYPE=f32 PER_S=55 TO=150 OUT=$o/c bash scripts/device/tuned_runs.sh palm-op-tp4
