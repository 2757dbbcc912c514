#!/usr/bin/env bash
# Run 52 call 4: the search and its grid after every measurement is a speedup over sequential timed
# beside it (the GPU's clocks fell to 765-1455 MHz whenever the tuner's host work left it idle,
# nvidia-smi in call 3), on tnlg-op-tp4 f16 (call 1's search fell back where the grid found 1.080x)
# and tnlg-op-tp8 f16 (run 51's first pair), with the clocks sampled again.
set -u
out=${OUT:-out}; mkdir -p "$out"
nvidia-smi --query-gpu=timestamp,memory.used,clocks.sm,power.draw,clocks_throttle_reasons.active,utilization.gpu \
  --format=csv,noheader -lms 200 > "$out/smi.csv" 2>&1 &
smi=$!
GRID_S=110 SEARCH_S=35 STOP_AT=280 bash scripts/device/tune_points.sh tnlg-op-tp4:f16 tnlg-op-tp8:f16
kill $smi; gzip -9 "$out/smi.csv"
