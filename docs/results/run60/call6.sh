#!/usr/bin/env bash
# Run 60 call 6 (two GPUs): as call 5 at stage grain with the reduce-scatter's landings into a
# landing buffer (`--reduce land`) instead of added into the destination's own chunk (update).
set -u
out=${OUT:-out}; mkdir -p "$out/trace"
for pd in tnlg-fc2-tp2:f32 tnlg-op-tp2:f16; do
  p=${pd%%:*}; d=${pd##*:}
  for r in land update; do
    timeout 60 t3 run --preset "$p" --dtype "$d" --devices all --collective all-reduce \
      --mode sequential,host --chunks 4 --reduce "$r" --reps 3 --warmup 1 --tune off \
      --verbose --trace "$out/trace/$p-$d-$r.json" > "$out/trace/$p-$d-$r.txt" 2>&1
    echo "$p $d reduce $r rc=$?: $(grep -E '^ *host ' "$out/trace/$p-$d-$r.txt" | head -1 | tr -s ' ') | $(grep '^after' "$out/trace/$p-$d-$r.txt" | cut -c1-60)"
  done
done
