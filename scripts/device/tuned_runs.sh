#!/usr/bin/env bash
# Issue 39's first bar on one GPU (or, with TUNE_ARGS/RUN_ARGS, across several): `t3 tune` of every
# mode on the presets named into one table, then `t3 run` of each with that table (`--tune FILE`),
# a line per preset: each mode's speedup over sequential and what its table row did (its choice, or
# the said fallback). The bar: every mode at or above 1.0 by its own choice or the fallback.
#   DTYPE=f16 PER_S=40 OUT=... bash scripts/device/tuned_runs.sh PRESET ...
# PER_S: `t3 tune`'s budget per preset (its --budget-s is PER_S times their count); SCALE shrinks the
# presets (a smoke test on lavapipe: SCALE=0.03125 PER_S=5). MODES: the modes `t3 run` times (the
# modes that span devices across several: TUNE_ARGS="--devices all --mode sequential,host"
# RUN_ARGS="--devices all" MODES=sequential,host). TABLE: a table tuned before (a call whose time
# ran out before its runs): no tuning, each preset run with it.
set -u
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
read -ra tune_args <<< "${TUNE_ARGS:-}"
read -ra run_args <<< "${RUN_ARGS:-}"
scale=(); [ -n "${SCALE:-}" ] && scale=(--scale "$SCALE")
d=${DTYPE:-f16}; ps=$(IFS=,; echo "$*")
budget=$(( ${PER_S:-40} * $# ))
table=${TABLE:-$out/table.json}
if [ -n "${TABLE:-}" ]; then
  [ -r "$table" ] || { echo "no table $table" >&2; exit 1; }
else
  timeout $((budget + 60 * $#)) t3 tune --presets "$ps" --dtype "$d" --budget-s "$budget" "${scale[@]}" \
    "${tune_args[@]}" --out "$table" > "$out/tune.txt" 2>&1
  echo "tune $d rc=$? ($((SECONDS - t0)) s)"
fi
for p in "$@"; do
  f="$out/$p-$d.txt"
  timeout ${TO:-120} t3 run --preset "$p" --dtype "$d" "${scale[@]}" --mode "${MODES:-sequential,host,encoded,fused}" \
    --reps 3 --tune "$table" "${run_args[@]}" --verbose > "$f" 2>&1
  echo "$p $d rc=$? ($((SECONDS - t0)) s): $(grep -E '^(sequential|host|encoded|fused) +[a-z]+ +[0-9]' "$f" | tr -s ' ' | cut -d' ' -f1,3,5 | tr '\n' '|')$(grep -E '^fallback ' "$f" | sed -E 's/^fallback +([a-z]+): fell back.* ran ([0-9.]+x).*/\1 fell back (\2)/' | tr '\n' '|')"
done
echo "done ($((SECONDS - t0)) s)"
