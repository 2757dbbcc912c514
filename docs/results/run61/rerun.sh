#!/usr/bin/env bash
# Run 61 call 8 (one GPU): mtnlg-op-tp2 f16 encoded again (call 7's one miss: the search fell back at
# 16 chunks per rank where the grid's 1 tied sequential), the search twice and the grid, every log kept.
set -u
out=${OUT:-out}; mkdir -p "$out"
for k in 1 2; do
  timeout 60 t3 tune --presets mtnlg-op-tp2 --dtype f16 --mode encoded --budget-s 15 --out "$out/search$k.json" > "$out/search$k.log" 2>&1
  echo "search $k rc=$?"; tail -4 "$out/search$k.log"
done
timeout 150 t3 tune --presets mtnlg-op-tp2 --dtype f16 --mode encoded --exhaustive --budget-s 90 --out "$out/grid.json" > "$out/grid.log" 2>&1
echo "grid rc=$?"; tail -4 "$out/grid.log"
python3 scripts/device/tune_compare.py "$out/search1.json" "$out/grid.json" --within 3
python3 scripts/device/tune_compare.py "$out/search2.json" "$out/grid.json" --within 3
