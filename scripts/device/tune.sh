#!/usr/bin/env bash
# Issue 39 on one GPU (kind nvidia-h200): `t3 tune` (the search) on the four TP-8 presets, f32 and
# f16, then the exhaustive grid of the same space (`t3 tune --exhaustive`), then the comparison
# (scripts/device/tune_compare.py: the search within 3% of the grid's best, every mode >= 1.0x of
# sequential or a said fallback). On the GPU machine, as docs/device-runs.md sets it up (t3 on the
# PATH, the Vulkan loader installed), in a copy of the project root:
#   bash scripts/device/tune.sh [PART]     PART: all (default), search, grid, compare
# Each part stays well inside 8 minutes at the default budgets (SEARCH_S, GRID_S seconds per dtype);
# the grid is cut at its budget, and the comparison says how many of its points were measured.
# Results in $OUT (or ./out): TAG-PART.tgz (TAG: tune) with the tables, the logs and compare.md.
# TUNE_ARGS adds flags to every `t3 tune`, RUN_ARGS to the `t3 run`s that check the table (as
# scripts/device/tune-2gpu.sh does). DTYPES (default "f32 f16") names the dtypes a part covers, so
# each dtype's grid can go in a call of its own: a search or grid part whose TAG-PART.tgz is already
# in $OUT goes on from it (its table keeps the points the earlier call tuned).
set -uo pipefail
dest=${OUT:-out}; part=${1:-all}; tag=${TAG:-tune}
read -ra tune_args <<< "${TUNE_ARGS:-}"; read -ra run_args <<< "${RUN_ARGS:-}"
work=$(mktemp -d); mkdir -p "$dest"; trap 'tar -C "$work" -czf "$dest/$tag-$part.tgz" .' EXIT
# A search or grid part goes on from its tarball an earlier call left (compare reads both anew).
[[ $part == search || $part == grid ]] && [[ -f $dest/$tag-$part.tgz ]] &&
  tar -xzf "$dest/$tag-$part.tgz" -C "$work"
presets=tnlg-op-tp8,gpt3-op-tp8,tnlg-fc2-tp8,gpt3-fc2-tp8
SEARCH_S=${SEARCH_S:-60}; GRID_S=${GRID_S:-150}; read -ra dtypes <<< "${DTYPES:-f32 f16}"
# SCALE shrinks the presets (a smoke test on lavapipe: SCALE=0.01 SEARCH_S=5 GRID_S=5).
common=(--presets "$presets" --scale "${SCALE:-1}" --reps 3 --warmup 1 --warmup-s 1 "${tune_args[@]}")
t3 info --json > "$work/info.json" || exit 1
if [[ $part == all || $part == search ]]; then
  for dt in "${dtypes[@]}"; do
    start=$SECONDS
    t3 tune "${common[@]}" --dtype $dt --budget-s "$SEARCH_S" --out "$work/search.json" 2>&1 \
      | tee -a "$work/search.log" || exit 1
    echo "search $dt: $((SECONDS - start)) s" | tee -a "$work/search.log"
  done
fi
if [[ $part == all || $part == grid ]]; then
  for dt in "${dtypes[@]}"; do
    t3 tune "${common[@]}" --dtype $dt --exhaustive --budget-s "$GRID_S" --out "$work/grid.json" \
      2>&1 | tee -a "$work/grid.log" || exit 1
  done
fi
if [[ $part == all || $part == compare ]]; then
  # A part run alone compares the tables an earlier part left in $OUT's tarballs.
  for f in search grid; do
    [[ -f $work/$f.json ]] || tar -xzf "$dest/$tag-$f.tgz" -C "$work" "./$f.json" 2>/dev/null
  done
  python3 scripts/device/tune_compare.py "$work/search.json" "$work/grid.json" --within 3 | tee "$work/compare.md"
  # Its status (1: a mode past the bar) kept beside the table, which says which.
  echo "tune_compare.py exit ${PIPESTATUS[0]}" | tee -a "$work/compare.md"
  # `t3 run` with the tuned table: each mode's row names its configuration, source and fallback.
  for p in tnlg-op-tp8 gpt3-op-tp8; do for dt in "${dtypes[@]}"; do
    t3 run --preset $p --dtype $dt --tune "$work/search.json" --scale "${SCALE:-1}" --reps 3 --no-verify \
      "${run_args[@]}" --csv - >> "$work/run-tuned.csv" || exit 1
  done; done
fi
