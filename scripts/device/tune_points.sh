#!/usr/bin/env bash
# Issue 39, one point at a time (as run 51 ran it): per PRESET:DTYPE, `t3 tune` (the search) then the
# exhaustive grid of the same space (`--exhaustive`), then scripts/device/tune_compare.py --within 3,
# its table appended to $OUT/summary.txt. A point that would start after STOP_AT seconds is skipped
# and said (a device call runs at most 10 minutes). Everything else in $OUT/tune-points.tgz (a device
# call brings back a few files only).
#   bash scripts/device/tune_points.sh tnlg-fc2-tp8:f32 tnlg-op-tp4:f16 ...
# SEARCH_S (40), GRID_S (120): budgets per point (GRID_S=0: the search alone, its verdicts appended to
# the summary); TUNE_ARGS: flags for every `t3 tune` (`--devices 2 --mode sequential,host` across two
# GPUs, `--mode host` for one mode's grid).
set -u
out=${OUT:-out}; mkdir -p "$out"; s=$out/summary.txt
read -ra extra <<< "${TUNE_ARGS:-}"
work=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >> "$s" 2>/dev/null
stamp() { while IFS= read -r l; do printf '%s %s\n' "$(date +%s.%N | cut -c1-14)" "$l"; done; }
for pd in "$@"; do
  p=${pd%%:*}; d=${pd##*:}
  if [ $SECONDS -gt "${STOP_AT:-450}" ]; then echo "skipped $p $d (time)" >> "$s"; continue; fi
  t0=$SECONDS
  timeout 150 t3 tune --presets "$p" --dtype "$d" --budget-s "${SEARCH_S:-40}" "${extra[@]}" \
    --out "$work/$p-$d-search.json" 2>&1 | stamp > "$work/$p-$d-search.log"
  echo "$p $d search rc=${PIPESTATUS[0]} $((SECONDS - t0)) s" >> "$s"
  if [ "${GRID_S:-120}" = 0 ]; then
    sed -n '/ ranks, /,$p' "$work/$p-$d-search.log" | cut -d' ' -f2- >> "$s"; continue
  fi
  t1=$SECONDS
  timeout 240 t3 tune --presets "$p" --dtype "$d" --exhaustive --budget-s "${GRID_S:-120}" "${extra[@]}" \
    --out "$work/$p-$d-grid.json" 2>&1 | stamp > "$work/$p-$d-grid.log"
  echo "$p $d grid rc=${PIPESTATUS[0]} $((SECONDS - t1)) s" >> "$s"
  python3 "$(dirname "$0")/tune_compare.py" "$work/$p-$d-search.json" "$work/$p-$d-grid.json" \
    --within 3 >> "$s" 2>&1
done
gzip -9 "$work"/*.log 2>/dev/null
tar czf "$out/tune-points.tgz" -C "$work" .
