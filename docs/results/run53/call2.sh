#!/usr/bin/env bash
# Run 53 call 2: `t3 tune` then `t3 run` with its table on tnlg-op-tp2 f16 (a mode at the table's own
# configuration: its speedup over the T_seq shown, its own sequential in a † note), then the search
# against its grid on three more TP-8 points, the clocks sampled beside.
set -u
out=${OUT:-out}; mkdir -p "$out"; root=$PWD
nvidia-smi --query-gpu=timestamp,memory.used,clocks.sm,power.draw,clocks_throttle_reasons.active,utilization.gpu \
  --format=csv,noheader -lms 200 > "$out/smi.csv" 2>&1 &
smi=$!
fresh=$(mktemp -d); cd "$fresh"
{ timeout 60 t3 tune --presets tnlg-op-tp2 --dtype f16 --budget-s 30 2>&1 | tail -6
  timeout 60 t3 run --preset tnlg-op-tp2 --dtype f16 --json "$out/run-tp2-f16.json" 2>&1; } > "$out/table-run.txt"
cp t3-tune*.json "$out/" 2>/dev/null; cd "$root"
GRID_S=120 SEARCH_S=35 STOP_AT=330 bash scripts/device/tune_points.sh tnlg-op-tp8:f32 megagpt2-op-tp8:f16 megagpt2-op-tp8:f32
kill $smi; gzip -9 "$out/smi.csv"
