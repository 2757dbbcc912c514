#!/usr/bin/env bash
# Run 55, call 2 (one H200, after `. .gpu/prelude.sh`): host mode over two Vulkan devices on the one
# GPU (they time-share it, so each device's passes stand for a GPU's own; the overlap a device finds
# within its passes still shows), the binaries before (t3-base, 47ce287) and after (t3) the link's
# kernels went first beside GEMM work on their shared budget and the last GEMM stage waited for the
# sends it feeds, alternating, on the six TP-2 points at the defaults.
set -uo pipefail
out=$(mktemp -d); trap 'tar -C "$out" -czf "$OUT/r.tgz" .; cp "$out/summary.txt" "$OUT/" 2>/dev/null' EXIT
s="$out/summary.txt"; t0=$SECONDS
for pd in tnlg-op-tp2:f16 tnlg-fc2-tp2:f16 gpt3-op-tp2:f16 tnlg-op-tp2:f32 tnlg-fc2-tp2:f32 gpt3-op-tp2:f32; do
  p=${pd%%:*}; d=${pd##*:}
  for b in t3-base t3; do
    [ $((SECONDS - t0)) -gt 520 ] && { echo "skipped $p $d $b (time)" >> "$s"; continue; }
    f="$out/$p-$d-$b"
    timeout 100 $b run --preset $p --dtype $d --devices 2 --collective all-reduce --mode sequential,host --reps 3 --warmup 1 --tune off --trace "$f.trace.json" --json "$f.json" > "$f.txt" 2>&1
    echo "== $p $d $b rc=$? ($((SECONDS - t0)) s)" >> "$s"; grep -E "T_comm|^sequential|^host |^config|^ +(\[[a-z]+\] )?host:" "$f.txt" >> "$s"
  done
done
echo "done ($((SECONDS - t0)) s)" >> "$s"
