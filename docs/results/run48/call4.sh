#!/usr/bin/env bash
# Run 48, call 4 (two H200s): the streamed link before the calibration moved into the executor
# (t3prev, 582bd17) against after (t3, fc80918), alternating, twice each.
set -uo pipefail
s=$OUT/summary.txt
for b in t3prev t3 t3prev t3; do
  timeout 100 $b calibrate --devices all --reps 3 --out /tmp/zc-$b.json > /tmp/cal-$b.txt 2>&1
  echo "== $b rc=$?" >> $s; grep -E "streamed" /tmp/cal-$b.txt >> $s
done
