set -u
o=$OUT
DTYPE=f32 PER_S=55 TO=150 OUT=$o/a bash scripts/device/tuned_runs.sh palm-fc2-tp4 palm-fc1bwd-tp4 palm-ipbwd-tp4
