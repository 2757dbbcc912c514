#!/usr/bin/env bash
# Run 70, call 3 (one H200): the last two of the eight tuner points against their grids, a tuned
# table in use by `t3 run`, then the TP-4 f32 presets at the defaults as the time leaves (the whole
# call within END seconds).
set -u
out=${OUT:-out}; mkdir -p "$out"
SEARCH_S=35 GRID_S=100 STOP_AT=200 OUT=$out bash scripts/device/tune_points.sh tnlg-op-tp2:f32 tnlg-op-tp8:f32
mkdir -p "$out/run"
timeout 90 t3 tune --presets tnlg-op-tp4 --dtype f16 --budget-s 35 --out "$out/run/table.json" > "$out/run/tune.txt" 2>&1
echo "tune tnlg-op-tp4 f16 rc=$?" >> "$out/summary.txt"
timeout 90 t3 run --preset tnlg-op-tp4 --dtype f16 --tune "$out/run/table.json" --reps 3 --verbose > "$out/run/run.txt" 2>&1
echo "run with the table rc=$?" >> "$out/summary.txt"
left=$(( ${END:-540} - SECONDS ))
presets=($(t3 presets | awk '$1 ~ "-tp4$" {print $1}'))
DTYPES=f32 STOP_AT=$((left - 45)) OUT=$out/one bash docs/results/run69/one.sh "${presets[@]}" >> "$out/summary.txt" 2>&1
