set -u
o=$OUT
DTYPE=f32 PER_S=55 TO=150 OUT=$o/a bash scripts/device/tuned_runs.sh gpt3-op-tp8 gpt3-fc2-tp8 gpt3-fc1bwd-tp8 gpt3-ipbwd-tp8 mtnlg-op-tp8 mtnlg-fc2-tp8 mtnlg-fc1bwd-tp8
