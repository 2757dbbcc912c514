set -u
o=$OUT
DTYPE=f32 PER_S=35 TO=90 OUT=$o/a bash scripts/device/tuned_runs.sh tnlg-fc2-tp2 tnlg-fc1bwd-tp2
DTYPE=f32 PER_S=55 TO=150 OUT=$o/b bash scripts/device/tuned_runs.sh gpt3-op-tp4 gpt3-op-tp2
DTYPE=f32 PER_S=55 TO=150 OUT=$o/c bash scripts/device/tuned_runs.sh mtnlg-op-tp4
