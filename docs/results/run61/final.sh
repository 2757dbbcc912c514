#!/usr/bin/env bash
# Run 61 call 6 (two GPUs): the committed flag handoff (a landing waits only for a send already
# out) against the fence, all-reduce at 4 chunks per rank, the TP-2 points of call 2, and the
# reduce-scatter alone on tnlg-op f16.
set -u
out=${OUT:-out}; mkdir -p "$out"
for pd in tnlg-op-tp2:f16 tnlg-fc2-tp2:f32 gpt3-op-tp2:f16 megagpt2-op-tp2:f16 tnlg-op-tp2:f32 gpt3-op-tp2:f32 megagpt2-fc2-tp2:f32 tnlg-fc2-tp2:f16; do
  p=${pd%%:*}; d=${pd##*:}
  for h in fence flag; do
    f="$out/$p-$d-$h.txt"
    timeout 90 t3 run --preset "$p" --dtype "$d" --devices all --collective all-reduce \
      --mode sequential,host --chunks 4 --host-loop "handoff=$h" --reps 5 --warmup 1 --tune off \
      --verbose --json "$out/$p-$d-$h.json" > "$f" 2>&1
    echo "$p $d $h rc=$?: $(grep -E '^ *host ' "$f" | head -1 | tr -s ' ') | $(grep -E '^after GEMM' "$f" | grep -o 'host [0-9.]* ms ([0-9.]* of T_comm)') | $(grep -E '^handoff' "$f" | grep -o 'host: [0-9]* of [0-9]*')"
  done
done
for h in fence flag; do
  f="$out/rs-tnlg-op-tp2-f16-$h.txt"
  timeout 60 t3 run --preset tnlg-op-tp2 --dtype f16 --devices all --collective reduce-scatter \
    --mode sequential,host --chunks 4 --host-loop "handoff=$h" --reps 5 --warmup 1 --tune off \
    --verbose > "$f" 2>&1
  echo "rs tnlg-op-tp2 f16 $h rc=$?: $(grep -E '^ *host ' "$f" | head -1 | tr -s ' ')"
done
