#!/usr/bin/env bash
# Run 62 calls 3 and 5 (two GPUs): host mode with the send the device triggers beside the GEMM making its
# chunk (`--host-loop trigger=device`, with the fence and with the flag handoff) against the
# host's trigger (the default), all-reduce at 4 chunks per rank on eight TP-2 points, the
# reduce-scatter alone on three, and one traced run of each store.
set -u
out=${OUT:-out}; mkdir -p "$out"
line() {
  echo "$1 rc=$2: $(grep -E '^ *host ' "$3" | head -1 | tr -s ' ') | $(grep -E '^after GEMM' "$3" | grep -o 'host [0-9.]* ms ([0-9.]* of T_comm)') | $(grep -E '^handoff' "$3" | cut -c12-)"
}
for pd in tnlg-op-tp2:f16 tnlg-fc2-tp2:f32 gpt3-op-tp2:f16 megagpt2-op-tp2:f16 tnlg-op-tp2:f32 gpt3-op-tp2:f32 megagpt2-fc2-tp2:f32 tnlg-fc2-tp2:f16; do
  p=${pd%%:*}; d=${pd##*:}
  for h in trigger=host trigger=device trigger=device,handoff=flag; do
    f="$out/$p-$d-${h//[=,]/-}.txt"
    timeout 90 t3 run --preset "$p" --dtype "$d" --devices all --collective all-reduce \
      --mode sequential,host --chunks 4 --host-loop "$h" --reps 5 --warmup 1 --tune off \
      --verbose --json "${f%.txt}.json" > "$f" 2>&1
    line "$p $d $h" $? "$f"
  done
done
for pd in tnlg-op-tp2:f16 megagpt2-op-tp2:f16 gpt3-op-tp2:f16; do
  p=${pd%%:*}; d=${pd##*:}
  for h in trigger=host trigger=device; do
    f="$out/rs-$p-$d-${h//[=,]/-}.txt"
    timeout 60 t3 run --preset "$p" --dtype "$d" --devices all --collective reduce-scatter \
      --mode sequential,host --chunks 4 --host-loop "$h" --reps 5 --warmup 1 --tune off \
      --verbose > "$f" 2>&1
    line "rs $p $d $h" $? "$f"
  done
done
for h in trigger=host trigger=device; do
  timeout 60 t3 run --preset tnlg-op-tp2 --dtype f16 --devices all --collective all-reduce \
    --mode host --chunks 4 --host-loop "$h" --reps 3 --warmup 1 --tune off \
    --trace "$out/trace-${h//=/-}.json" > "$out/trace-${h//=/-}.txt" 2>&1
  echo "trace $h rc=$?"
done
