#!/usr/bin/env bash
# Run 63 call 3 (two GPUs): the direct all-reduce with every chunk made in one GEMM stage (a probe
# binary: T3_PROBE_ONE_STAGE=1 puts every chunk's production and steps at stage 0), so the device's
# trigger sends each chunk from inside the one GEMM pass; against the ring all-reduce at the defaults.
set -u
out=${OUT:-out}; mkdir -p "$out"
line() {
  echo "$1 rc=$2: $(grep -E '^ *sequential ' "$3" | head -1 | tr -s ' ' | cut -d' ' -f1-3) | $(grep -E '^ *host ' "$3" | head -1 | tr -s ' ') | $(grep -E '^after GEMM' "$3" | grep -o 'host [0-9.]* ms ([0-9.]* of T_comm)') | $(grep -E '^handoff' "$3" | cut -c12-120)"
}
run() { # env preset dtype collective chunks host-loop
  local f="$out/$2-$3-$4-c$5-${6//[=,]/-}-${1%%=*}.txt"
  env $1 timeout 90 t3 run --preset "$2" --dtype "$3" --devices all --collective "$4" \
    --mode sequential,host --chunks "$5" --host-loop "$6" --reps 5 --warmup 1 --tune off \
    --verbose > "$f" 2>&1
  line "$1 $2 $3 $4 c$5 $6" $? "$f"
}
for pd in tnlg-op-tp2:f16 gpt3-op-tp2:f16 megagpt2-op-tp2:f16 tnlg-fc2-tp2:f32 tnlg-op-tp2:f32 megagpt2-fc2-tp2:f32; do
  p=${pd%%:*}; d=${pd##*:}
  run X=0 "$p" "$d" all-reduce 4 trigger=host
  run T3_PROBE_ONE_STAGE=1 "$p" "$d" direct-all-reduce 4 trigger=device
  run T3_PROBE_ONE_STAGE=1 "$p" "$d" direct-all-reduce 4 trigger=device,handoff=flag
  run T3_PROBE_ONE_STAGE=1 "$p" "$d" direct-all-reduce 4 grain=2
  run T3_PROBE_ONE_STAGE=1 "$p" "$d" direct-all-reduce 2 trigger=device
done
