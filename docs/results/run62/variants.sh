#!/usr/bin/env bash
# Run 62 call 4 (two GPUs): the device's trigger with two variants a probe binary reads from the
# environment (T3_NO_HOLD: the receiver's last GEMM stage does not wait for its peer's chunks;
# T3_WATCH_LAST: the watching sends go after the GEMM in its pass), on four TP-2 points.
set -u
out=${OUT:-out}; mkdir -p "$out"
for pd in tnlg-op-tp2:f16 tnlg-op-tp2:f32 tnlg-fc2-tp2:f16 gpt3-op-tp2:f32; do
  p=${pd%%:*}; d=${pd##*:}
  for v in host device device:T3_NO_HOLD device:T3_WATCH_LAST device:T3_NO_HOLD:T3_WATCH_LAST; do
    t=${v%%:*}; envs=""; [ "$v" != "$t" ] && envs=$(echo "${v#*:}" | tr ':' '\n' | sed 's/$/=1/' | tr '\n' ' ')
    f="$out/$p-$d-${v//:/-}.txt"
    env $envs timeout 90 t3 run --preset "$p" --dtype "$d" --devices all --collective all-reduce \
      --mode sequential,host --chunks 4 --host-loop "trigger=$t" --reps 5 --warmup 1 --tune off \
      --verbose > "$f" 2>&1
    echo "$p $d $v rc=$?: $(grep -E '^ *host ' "$f" | head -1 | tr -s ' ' | cut -d' ' -f3,5,6) | $(grep -E '^after GEMM' "$f" | grep -o 'host [0-9.]* ms ([0-9.]* of T_comm)')"
  done
done
