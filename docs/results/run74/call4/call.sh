set -u
o=$OUT
DTYPE=f16 PER_S=35 TO=90 OUT=$o/a bash scripts/device/tuned_runs.sh tnlg-fc1bwd-tp2 tnlg-ipbwd-tp2 gpt3-op-tp2 palm-op-tp2 mtnlg-op-tp2
DTYPE=f16 PER_S=55 TO=150 OUT=$o/b bash scripts/device/tuned_runs.sh gpt3-fc2-tp2 gpt3-ipbwd-tp2
