#!/usr/bin/env bash
# Run 62 call 6 (two GPUs): the device's trigger with the chain (the last stage's puts and the
# all-gather's sends waiting in the kernel beside its GEMM) against the host's trigger, all-reduce
# at 4 chunks per rank on eight TP-2 points and the reduce-scatter alone on two; each run bounded.
set -u
out=${OUT:-out}; mkdir -p "$out"
for pd in tnlg-op-tp2:f16 tnlg-fc2-tp2:f32 gpt3-op-tp2:f16 megagpt2-op-tp2:f16 tnlg-op-tp2:f32 gpt3-op-tp2:f32 megagpt2-fc2-tp2:f32 tnlg-fc2-tp2:f16; do
  p=${pd%%:*}; d=${pd##*:}
  for h in host device; do
    f="$out/$p-$d-$h.txt"
    timeout 40 t3 run --preset "$p" --dtype "$d" --devices all --collective all-reduce \
      --mode sequential,host --chunks 4 --host-loop "trigger=$h" --reps 5 --warmup 1 --tune off \
      --verbose --json "$out/$p-$d-$h.json" > "$f" 2>&1
    echo "$p $d $h rc=$?: $(grep -E '^ *host ' "$f" | head -1 | tr -s ' ' | cut -d' ' -f3,5,6) | $(grep -E '^after GEMM' "$f" | grep -o 'host [0-9.]* ms ([0-9.]* of T_comm)') | $(grep -E '^handoff' "$f" | cut -c12-90)"
  done
done
for p in tnlg-op-tp2 megagpt2-op-tp2; do
  for h in host device; do
    f="$out/rs-$p-f16-$h.txt"
    timeout 30 t3 run --preset "$p" --dtype f16 --devices all --collective reduce-scatter \
      --mode sequential,host --chunks 4 --host-loop "trigger=$h" --reps 5 --warmup 1 --tune off \
      --verbose > "$f" 2>&1
    echo "rs $p f16 $h rc=$?: $(grep -E '^ *host ' "$f" | head -1 | tr -s ' ' | cut -d' ' -f3,5,6) | $(grep -E '^after GEMM' "$f" | grep -o 'host [0-9.]* ms ([0-9.]* of T_comm)')"
  done
done
