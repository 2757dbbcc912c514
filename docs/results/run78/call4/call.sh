set -u
o=$OUT
DTYPE=f16 PER_S=60 TO=150 OUT=$o/a bash scripts/device/tuned_runs.sh palm-ipbwd-tp2
DTYPE=f32 PER_S=60 TO=150 OUT=$o/b bash scripts/device/tuned_runs.sh gpt3-fc2-tp4
DTYPE=f32 PER_S=60 TO=150 OUT=$o/c bash scripts/device/tuned_runs.sh mtnlg-ipbwd-tp8
DTYPE=f32 PER_S=60 TO=150 OUT=$o/d bash scripts/device/tuned_runs.sh tnlg-fc2-tp2
