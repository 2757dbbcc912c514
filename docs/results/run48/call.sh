#!/usr/bin/env bash
# Run 48: the streamed link with one submission per device and poll (and each direction's own
# landing and counters) against the binary before it (t3base). `bash docs/results/run48/call.sh N`
# on kind nvidia-h200-xN after `. .gpu/prelude.sh`. Results in $OUT/r.tgz, summary in $OUT/summary.txt.
set -uo pipefail
n=${1:-2}
out=$(mktemp -d); trap 'tar -C "$out" -czf "$OUT/r.tgz" .; cp "$out/summary.txt" "$OUT/" 2>/dev/null' EXIT
s="$out/summary.txt"
t3 info > "$out/info.txt" 2>&1
grep -iE "H200|H100|device" "$out/info.txt" | head -8 >> "$s"
for b in t3base t3 t3base t3; do
  echo "== $b calibrate zero-copy" >> "$s"
  timeout 150 $b calibrate --devices all --reps 3 --out "$out/zc-$b.json" > "$out/cal-zc-$b.txt" 2>&1
  echo "rc=$?" >> "$s"; tail -40 "$out/cal-zc-$b.txt" >> "$s"
done
