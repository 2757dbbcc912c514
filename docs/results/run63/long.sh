#!/usr/bin/env bash
# Run 63 call 7 (two GPUs): the direct all-reduce against the ring at the same grain (8 chunks per
# rank, 2 a submission) and the ring at the defaults, on TP-2 points whose GEMM is long against its
# collective, where call 2 saw the direct one pay (gpt3-op f16).
set -u
out=${OUT:-out}; mkdir -p "$out"
line() {
  echo "$1 rc=$2: $(grep -E '^ *sequential ' "$3" | head -1 | tr -s ' ' | cut -d' ' -f1-3) | $(grep -E '^ *host ' "$3" | head -1 | tr -s ' ') | $(grep -E '^after GEMM' "$3" | grep -o 'host [0-9.]* ms ([0-9.]* of T_comm)')"
}
run() { # preset dtype collective chunks host-loop
  local f="$out/$1-$2-$3-c$4-${5//[=,]/-}.txt"
  timeout 40 t3 run --preset "$1" --dtype "$2" --devices all --collective "$3" \
    --mode sequential,host --chunks "$4" --host-loop "$5" --reps 5 --warmup 1 --tune off \
    --verbose > "$f" 2>&1
  line "$1 $2 $3 c$4 $5" $? "$f"
}
for pd in gpt3-op-tp2:f16 gpt3-fc2-tp2:f16 mtnlg-op-tp2:f16 gpt3-op-tp2:f32; do
  p=${pd%%:*}; d=${pd##*:}
  run "$p" "$d" all-reduce 4 grain=stage
  run "$p" "$d" all-reduce 8 grain=2
  run "$p" "$d" direct-all-reduce 8 grain=2
done
