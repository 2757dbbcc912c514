#!/usr/bin/env bash
# Run 56 on one H200 (after `. .gpu/prelude.sh`, `t3-base` the binary before the change): a device's
# landings and sends beside no GEMM work one landing per link a submission, each beside the send
# that waited for the one before (t3), against all landings in one pass before any send (t3-base),
# over two and four Vulkan devices on the one GPU (they time-share it: each device's passes add
# up, so a pass moving both directions at once shows in the sum), alternating, twice.
set -uo pipefail
out=$(mktemp -d); trap 'tar -C "$out" -czf "$OUT/r.tgz" .; cp "$out/summary.txt" "$OUT/" 2>/dev/null' EXIT
s="$out/summary.txt"; t0=$SECONDS
for round in 1 2; do
  for pd in tnlg-op-tp2:f16:2 tnlg-fc2-tp2:f16:2 gpt3-op-tp2:f16:2 tnlg-op-tp2:f32:2 tnlg-op-tp4:f16:4; do
    IFS=: read p d n <<< "$pd"
    for b in t3-base t3; do
      [ $((SECONDS - t0)) -gt ${STOP_AT:-420} ] && { echo "skipped $p $d $b (time)" >> "$s"; continue; }
      f="$out/$p-$d-$b-$round"
      timeout 90 $b run --preset $p --dtype $d --scale 0.5 --devices $n --chunks 4 --collective all-reduce --mode sequential,host --reps 5 --warmup 1 --tune off --verbose --json "$f.json" > "$f.txt" 2>&1
      echo "== $p $d --scale 0.5 --devices $n --chunks 4 $b round $round rc=$? ($((SECONDS - t0)) s)" >> "$s"; grep -E "T_comm|^sequential|^host |^after GEMM" "$f.txt" >> "$s"
    done
  done
done
echo "done ($((SECONDS - t0)) s)" >> "$s"
