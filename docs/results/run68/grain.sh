#!/usr/bin/env bash
# Run 68 on four GPUs: host mode's grain on the TP-4 presets at the defaults otherwise (4 chunks per
# rank, zero-copy ring): a stage a submission (the default), two chunks, a chunk; alternating within
# each point, sequential timed beside each.
#   OUT=... [POINTS="p:d ..."] bash docs/results/run68/grain.sh
set -u
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
for pd in ${POINTS:-gpt3-fc2-tp4:f16 mtnlg-op-tp4:f16 palm-op-tp4:f16 gpt3-op-tp4:f16 tnlg-fc2-tp4:f16 megagpt2-fc2-tp4:f16 mtnlg-fc2-tp4:f16 palm-ipbwd-tp4:f16 gpt3-fc2-tp4:f32 tnlg-op-tp4:f32}; do
  p=${pd%%:*}; d=${pd##*:}
  for g in stage 2 chunk; do
    [ $((SECONDS - t0)) -gt ${STOP_AT:-420} ] && { echo "skipped $p $d $g (time)"; continue; }
    f="$out/$p-$d-$g.txt"
    timeout 60 t3 run --preset $p --dtype $d --devices all --mode sequential,host --reps 5 --warmup 1 --tune off --host-loop grain=$g --verbose > "$f" 2>&1
    echo "$p $d grain=$g rc=$? ($((SECONDS - t0)) s): $(grep -E '^sequential ' "$f" | tr -s ' ' | cut -d' ' -f1,3) | $(grep -E '^host ' "$f" | tr -s ' ' | cut -d' ' -f1,3-7) | $(grep -E '^after GEMM' "$f" | cut -c1-80)"
  done
done
echo "done ($((SECONDS - t0)) s)"
