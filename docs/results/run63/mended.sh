#!/usr/bin/env bash
# Run 63 call 5 (two GPUs): the device's trigger after the mend of 69a4536 (a device's last GEMM
# stage waits only for chunks the peer made in an earlier stage), on the collectives it touched:
# the all-gather and the direct reduce-scatter, host's trigger against the device's, three TP-2 points.
set -u
out=${OUT:-out}; mkdir -p "$out"
line() {
  echo "$1 rc=$2: $(grep -E '^ *sequential ' "$3" | head -1 | tr -s ' ' | cut -d' ' -f1-3) | $(grep -E '^ *host ' "$3" | head -1 | tr -s ' ') | $(grep -E '^after GEMM' "$3" | grep -o 'host [0-9.]* ms ([0-9.]* of T_comm)') | $(grep -E '^handoff' "$3" | cut -c12-100)"
}
for pd in tnlg-op-tp2:f16 gpt3-op-tp2:f16 megagpt2-op-tp2:f16; do
  p=${pd%%:*}; d=${pd##*:}
  for c in all-gather direct-reduce-scatter; do
    for h in trigger=host trigger=device; do
      f="$out/$p-$d-$c-${h//=/-}.txt"
      timeout 60 t3 run --preset "$p" --dtype "$d" --devices all --collective "$c" \
        --mode sequential,host --chunks 4 --host-loop "$h" --reps 5 --warmup 1 --tune off \
        --verbose > "$f" 2>&1
      line "$p $d $c $h" $? "$f"
    done
  done
done
