#!/usr/bin/env bash
# Run 52 call 3: the search after its confirmations are judged against the sequential beside them,
# on the TP-2/TP-4 points where call 1's fell back, with the GPU's memory, clocks and throttle
# reasons sampled every 200 ms (call 1's encoded search on tnlg-op-tp4 f16 measured 2-3x slower
# than its grid from its seventh configuration on); then host mode's grid on tnlg-op-tp2 f16.
set -u
out=${OUT:-out}; mkdir -p "$out"
nvidia-smi --query-gpu=timestamp,memory.used,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active,utilization.gpu \
  --format=csv,noheader -lms 200 > "$out/smi.csv" 2>&1 &
smi=$!
GRID_S=0 SEARCH_S=35 STOP_AT=330 bash scripts/device/tune_points.sh tnlg-op-tp4:f16 tnlg-op-tp2:f16 \
  tnlg-fc2-tp2:f16 tnlg-fc2-tp4:f16 gpt3-op-tp2:f16 tnlg-op-tp2:f32 tnlg-fc2-tp4:f32 tnlg-fc2-tp2:f32 gpt3-op-tp2:f32
mv "$out/tune-points.tgz" "$out/search.tgz"
work=$(mktemp -d)
if [ $SECONDS -lt 420 ]; then
  timeout 150 t3 tune --presets tnlg-op-tp2 --dtype f16 --mode host --exhaustive --budget-s 100 \
    --out "$work/tnlg-op-tp2-f16-host-grid.json" 2>&1 | while IFS= read -r l; do printf '%s %s\n' "$(date +%s.%N | cut -c1-14)" "$l"; done > "$work/grid.log"
  sed -n '/ ranks, /,$p' "$work/grid.log" >> "$out/summary.txt"
fi
kill $smi
tar czf "$out/grid.tgz" -C "$work" .
gzip -9 "$out/smi.csv"
