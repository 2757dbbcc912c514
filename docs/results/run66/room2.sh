#!/usr/bin/env bash
# Run 66 (one GPU): room.sh again on the TP-8 point (mtnlg-fc2-tp8 f16; mtnlg-fc1bwd-tp8 is its shape)
# with twice its budget, so that encoded mode too measures the other way to make room for the steps,
# then `t3 run` with that table and without (`--tune off`), bounded at 150 s each (room.sh's 40 s
# did not cover an 8-rank point's build, inputs and warm-up).
set -u
out=${OUT:-out}; mkdir -p "$out"
timeout 140 t3 tune --presets mtnlg-fc2-tp8 --dtype f16 --mode host,encoded \
  --budget-s "${BUDGET:-80}" --out "$out/room2-tune.json" > "$out/room2-tune.txt" 2>&1
echo "tune rc=$? ${SECONDS} s"; grep -v '^tune: ' "$out/room2-tune.txt"
for t in table off; do
  if [ $SECONDS -gt "${STOP_AT:-250}" ]; then echo "skipped $t (time)"; continue; fi
  arg=$t; [ $t = table ] && arg="$out/room2-tune.json"
  f="$out/room2-$t.txt"
  timeout 150 t3 run --preset mtnlg-fc2-tp8 --dtype f16 --mode sequential,host,encoded --reps 3 \
    --warmup 1 --tune "$arg" > "$f" 2>&1
  echo "$t rc=$? ${SECONDS} s"; grep -E '^ *(sequential|host|encoded) |^config|^ +(\[[a-z]+\] )?(host|encoded): ' "$f" | tr -s ' '
done
echo "done at ${SECONDS} s"
