#!/usr/bin/env bash
# Run 61 call 5 (two GPUs): the flag handoff's landings on more workgroups beside the GEMM
# (`--arbitrate W`: a pass's sends and landings each share W there; 8 and 32 by default) against
# the fence at the same budget, all-reduce at 4 chunks per rank.
set -u
out=${OUT:-out}; mkdir -p "$out"
for pd in tnlg-op-tp2:f16 tnlg-fc2-tp2:f32 gpt3-op-tp2:f32 megagpt2-fc2-tp2:f32; do
  p=${pd%%:*}; d=${pd##*:}
  for w in 32 128; do
    for h in fence flag; do
      f="$out/$p-$d-w$w-$h.txt"
      timeout 90 t3 run --preset "$p" --dtype "$d" --devices all --collective all-reduce \
        --mode sequential,host --chunks 4 --arbitrate "$w" --host-loop "handoff=$h" --reps 5 \
        --warmup 1 --tune off --verbose > "$f" 2>&1
      echo "$p $d arbitrate $w $h rc=$?: $(grep -E '^ *host ' "$f" | head -1 | tr -s ' ') | $(grep -E '^after GEMM' "$f" | grep -o 'host [0-9.]* ms ([0-9.]* of T_comm)')"
    done
  done
done
