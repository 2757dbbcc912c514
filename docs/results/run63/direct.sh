#!/usr/bin/env bash
# Run 63 call 1 (two GPUs): the direct all-reduce (every rank's partial of each chunk sent whole to
# its peer as the GEMM makes it, the peer's partials gathered in an inbox and added at the end)
# against the ring all-reduce, host mode at 4 chunks per rank on eight TP-2 points, with the host's
# trigger and the device's; then 8 chunks per rank on four.
set -u
out=${OUT:-out}; mkdir -p "$out"
line() {
  echo "$1 rc=$2: $(grep -E '^ *sequential ' "$3" | head -1 | tr -s ' ' | cut -d' ' -f1-3) | $(grep -E '^ *host ' "$3" | head -1 | tr -s ' ') | $(grep -E '^baselines' "$3" | tr -s ' ' | cut -d' ' -f3-8) | $(grep -E '^after GEMM' "$3" | grep -o 'host [0-9.]* ms ([0-9.]* of T_comm)') | $(grep -E '^handoff' "$3" | cut -c12-70)"
}
run() { # tag preset dtype collective chunks host-loop
  local f="$out/$1-$2-$3-$4-c$5-${6//[=,]/-}.txt"
  timeout 90 t3 run --preset "$2" --dtype "$3" --devices all --collective "$4" \
    --mode sequential,host --chunks "$5" --host-loop "$6" --reps 5 --warmup 1 --tune off \
    --verbose --json "${f%.txt}.json" > "$f" 2>&1
  line "$2 $3 $4 c$5 $6" $? "$f"
}
for pd in tnlg-op-tp2:f16 tnlg-fc2-tp2:f32 gpt3-op-tp2:f16 megagpt2-op-tp2:f16 tnlg-op-tp2:f32 gpt3-op-tp2:f32 megagpt2-fc2-tp2:f32 tnlg-fc2-tp2:f16; do
  p=${pd%%:*}; d=${pd##*:}
  run a "$p" "$d" all-reduce 4 trigger=host
  run d "$p" "$d" direct-all-reduce 4 trigger=host
  run d "$p" "$d" direct-all-reduce 4 trigger=device
done
for pd in tnlg-op-tp2:f16 gpt3-op-tp2:f16 tnlg-fc2-tp2:f32 megagpt2-op-tp2:f16; do
  p=${pd%%:*}; d=${pd##*:}
  run d "$p" "$d" direct-all-reduce 8 trigger=host
  run d "$p" "$d" direct-all-reduce 8 trigger=device
done
