#!/usr/bin/env bash
# Run 63 call 2 (two GPUs): the direct all-reduce's host mode at finer grains (2 chunks per
# submission and 1) and with the flag handoff, against the ring all-reduce at grain 2, four TP-2 points.
set -u
out=${OUT:-out}; mkdir -p "$out"
line() {
  echo "$1 rc=$2: $(grep -E '^ *sequential ' "$3" | head -1 | tr -s ' ' | cut -d' ' -f1-3) | $(grep -E '^ *host ' "$3" | head -1 | tr -s ' ') | $(grep -E '^after GEMM' "$3" | grep -o 'host [0-9.]* ms ([0-9.]* of T_comm)') | $(grep -E '^handoff' "$3" | cut -c12-90)"
}
run() { # preset dtype collective chunks host-loop
  local f="$out/$1-$2-$3-c$4-${5//[=,]/-}.txt"
  timeout 90 t3 run --preset "$1" --dtype "$2" --devices all --collective "$3" \
    --mode sequential,host --chunks "$4" --host-loop "$5" --reps 5 --warmup 1 --tune off \
    --verbose > "$f" 2>&1
  line "$1 $2 $3 c$4 $5" $? "$f"
}
for pd in tnlg-op-tp2:f16 gpt3-op-tp2:f16 megagpt2-op-tp2:f16 tnlg-fc2-tp2:f32; do
  p=${pd%%:*}; d=${pd##*:}
  run "$p" "$d" all-reduce 4 grain=2
  run "$p" "$d" direct-all-reduce 4 grain=2
  run "$p" "$d" direct-all-reduce 4 grain=chunk
  run "$p" "$d" direct-all-reduce 8 grain=2
  run "$p" "$d" direct-all-reduce 8 grain=4
  run "$p" "$d" direct-all-reduce 4 handoff=flag
  run "$p" "$d" direct-all-reduce 4 grain=2,handoff=flag
done
