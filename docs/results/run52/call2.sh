#!/usr/bin/env bash
# Run 52 call 2: tnlg-fc2-tp8 f32's search against its grid (the last of run 51's eight pairs), the
# demo as the README's quick start runs it (no flag, no table), then the exhaustive grid of encoded
# mode on the TP-2/TP-4 points where call 1's search fell back. After `. .gpu/prelude.sh`.
set -u
out=${OUT:-out}; mkdir -p "$out"; s=$out/summary.txt
here=$(cd "$(dirname "$0")" && pwd)
GRID_S=200 SEARCH_S=40 OUT=$out bash scripts/device/tune_points.sh tnlg-fc2-tp8:f32
mv "$out/tune-points.tgz" "$out/fc2-tp8-f32.tgz"
work=$(mktemp -d)
(cd "$work" && timeout 200 t3 > demo.txt 2>&1; echo "demo rc=$? $SECONDS s" >> "$s"; cat demo.txt >> "$s")
for pd in tnlg-op-tp4:f16 tnlg-fc2-tp2:f16 gpt3-op-tp2:f16 tnlg-fc2-tp2:f32; do
  p=${pd%%:*}; d=${pd##*:}
  if [ $SECONDS -gt 520 ]; then echo "skipped $p $d (time)" >> "$s"; continue; fi
  timeout 120 t3 tune --presets "$p" --dtype "$d" --mode encoded --exhaustive --budget-s 60 \
    --out "$work/$p-$d-encoded-grid.json" > "$work/$p-$d-encoded-grid.log" 2>&1
  echo "$p $d encoded grid rc=$?" >> "$s"; sed -n '/ ranks, /,$p' "$work/$p-$d-encoded-grid.log" >> "$s"
done
tar czf "$out/grids.tgz" -C "$work" .
