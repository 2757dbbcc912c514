#!/usr/bin/env bash
# Run 56 on one H200 (kind nvidia-h200, after `. .gpu/prelude.sh`): the quick start's main job (`t3`,
# no flag, no table); every mode at the defaults (no table: the model's choices) on the four TP-8
# presets in f16 and f32, to set beside the grids of runs 51-53; host mode over two and four Vulkan
# devices on the one GPU at each grain (every result checked; their times say nothing of two GPUs).
set -uo pipefail
out=$(mktemp -d); trap 'tar -C "$out" -czf "$OUT/r.tgz" .; cp "$out/summary.txt" "$OUT/" 2>/dev/null' EXIT
s="$out/summary.txt"; t0=$SECONDS
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >> "$s"
timeout 120 t3 > "$out/demo.txt" 2>&1
echo "== t3 (the demo) rc=$? ($((SECONDS - t0)) s)" >> "$s"; cat "$out/demo.txt" >> "$s"
for pd in tnlg-op-tp8:f16 tnlg-op-tp8:f32 tnlg-fc2-tp8:f16 tnlg-fc2-tp8:f32 megagpt2-op-tp8:f16 megagpt2-op-tp8:f32 megagpt2-fc2-tp8:f16 megagpt2-fc2-tp8:f32; do
  p=${pd%%:*}; d=${pd##*:}
  [ $((SECONDS - t0)) -gt ${STOP_AT:-240} ] && { echo "skipped $p $d (time)" >> "$s"; continue; }
  timeout 90 t3 run --preset $p --dtype $d --tune off --reps 5 --json "$out/$p-$d.json" > "$out/$p-$d.txt" 2>&1
  echo "== $p $d rc=$? ($((SECONDS - t0)) s)" >> "$s"; grep -E "^(sequential|host|encoded|fused) |config|^ +(host|encoded|fused):" "$out/$p-$d.txt" >> "$s"
done
for dev in 2 4; do for g in stage 2 chunk; do
  timeout 90 t3 run --preset tnlg-op-tp4 --dtype f16 --scale 0.5 --devices $dev --chunks 4 --collective all-reduce --mode sequential,host --host-loop grain=$g --reps 3 --warmup 1 --tune off > "$out/dev$dev-$g.txt" 2>&1
  echo "== tnlg-op-tp4 f16 --scale 0.5 --devices $dev --chunks 4 grain=$g rc=$? ($((SECONDS - t0)) s)" >> "$s"; grep -E "^(sequential|host) " "$out/dev$dev-$g.txt" >> "$s"
done; done
echo "done ($((SECONDS - t0)) s)" >> "$s"
