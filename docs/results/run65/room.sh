#!/usr/bin/env bash
# Run 65 (one GPU): `t3 tune` of host and encoded mode on the two TP-8 f16 points whose exhaustive grid
# paid where the search fell back (calls 3-4: chunks 1, grid off, lead 0, two knobs from the model's
# grid of 128), with the search that measures that other way to make room for the steps second;
# then `t3 run` of each with that table.
set -u
out=${OUT:-out}; mkdir -p "$out"
timeout 100 t3 tune --presets mtnlg-fc2-tp8,mtnlg-fc1bwd-tp8 --dtype f16 --mode host,encoded \
  --budget-s "${BUDGET:-40}" --out "$out/room-tune.json" > "$out/room-tune.txt" 2>&1
echo "tune rc=$? ${SECONDS} s"; grep -v '^tune: ' "$out/room-tune.txt"
for p in mtnlg-fc2-tp8 mtnlg-fc1bwd-tp8; do
  f="$out/room-$p.txt"
  timeout 40 t3 run --preset "$p" --dtype f16 --mode sequential,host,encoded --reps 3 --warmup 1 \
    --tune "$out/room-tune.json" > "$f" 2>&1
  echo "$p rc=$?"; grep -E '^ *(sequential|host|encoded) ' "$f" | tr -s ' '
done
echo "done at ${SECONDS} s"
