#!/usr/bin/env bash
# Run 50, call 2: the streamed link on the same four H200s, the binary before one submission per
# device and poll (t3base, 3158f2f) against b429d81's, twice each, alternating.
set -uo pipefail
s=$OUT/summary.txt
for b in t3base t3 t3base t3; do
  timeout 100 $b calibrate --devices all --reps 3 --out /tmp/zc-$b.json > /tmp/cal-$b.txt 2>&1
  echo "== $b rc=$?" >> $s; grep -E "streamed.*at once" /tmp/cal-$b.txt >> $s
done
