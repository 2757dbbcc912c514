#!/usr/bin/env bash
# Issue 38 and 39 on two GPUs (kind nvidia-h200-x2, after `. .gpu/prelude.sh`), the committed defaults
# (the link's kernels on 128 workgroups): the calibration, then host mode at the defaults on the TP-2
# output projections and FC-2s, f16 and f32, each checked, with the reduce-scatter alone.
set -uo pipefail
out=$(mktemp -d); trap 'tar -C "$out" -czf "$OUT/r.tgz" .; cp "$out/summary.txt" "$OUT/" 2>/dev/null' EXIT
s="$out/summary.txt"; t0=$SECONDS
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >> "$s"
timeout 90 t3 calibrate --devices all --reps 3 --out "$out/cal.json" > "$out/cal.txt" 2>&1
echo "== calibrate rc=$? ($((SECONDS - t0)) s)" >> "$s"
grep -E "kernels:|sending|streamed|zero-copy\)" "$out/cal.txt" | sed 's/(zero-copy, [0-9]* MiB each)//' >> "$s"
for pd in tnlg-op-tp2:f16 gpt3-op-tp2:f16 tnlg-fc2-tp2:f16 tnlg-op-tp2:f32 tnlg-fc2-tp2:f32 gpt3-op-tp2:f32; do
  p=${pd%%:*}; d=${pd##*:}
  [ $((SECONDS - t0)) -gt 420 ] && { echo "skipped $p $d (time)" >> "$s"; continue; }
  timeout 90 t3 run --preset $p --dtype $d --devices all --collective all-reduce --mode sequential,host --reps 3 --warmup 1 --tune off > "$out/$p-$d.txt" 2>&1
  echo "== $p $d all-reduce rc=$?" >> "$s"; grep -E "T_comm|^sequential|^host |link 0->1" "$out/$p-$d.txt" >> "$s"
done
echo "done ($((SECONDS - t0)) s)" >> "$s"
