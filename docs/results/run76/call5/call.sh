set -u
o=$OUT
DTYPE=f32 PER_S=55 TO=90 OUT=$o/a bash scripts/device/tuned_runs.sh palm-ipbwd-tp2
