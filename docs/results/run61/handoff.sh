#!/usr/bin/env bash
# Run 61 call 2 (two GPUs): host mode's flag handoff (`--host-loop handoff=flag`: each landing
# queued ahead beside the receiver's GEMM work, waiting at a gate the host raises once the sender's
# kernel flags its chunk) against the fence (the default), all-reduce at 4 chunks per rank, on
# TP-2 presets in f16 and f32; then the reduce-scatter alone and two timelines.
set -u
out=${OUT:-out}; mkdir -p "$out"
STOP=${STOP:-500}; t0=$SECONDS
for pd in tnlg-op-tp2:f16 tnlg-fc2-tp2:f32 gpt3-op-tp2:f16 megagpt2-op-tp2:f16 tnlg-op-tp2:f32 gpt3-op-tp2:f32 megagpt2-fc2-tp2:f32 tnlg-fc2-tp2:f16; do
  p=${pd%%:*}; d=${pd##*:}
  for h in fence flag; do
    (( SECONDS - t0 > STOP )) && { echo "stopped at $p $d $h"; break 2; }
    f="$out/$p-$d-$h.txt"
    timeout 90 t3 run --preset "$p" --dtype "$d" --devices all --collective all-reduce \
      --mode sequential,host --chunks 4 --host-loop "handoff=$h" --reps 5 --warmup 1 --tune off \
      --verbose > "$f" 2>&1
    echo "$p $d $h rc=$?: $(grep -E '^ *host ' "$f" | head -1 | tr -s ' ') | $(grep -E '^after GEMM|^handoff' "$f" | tr -s ' ' | tr '\n' ' ')"
  done
done
for p in megagpt2-op-tp2 tnlg-op-tp2 gpt3-op-tp2; do
  for h in fence flag; do
    (( SECONDS - t0 > STOP )) && { echo "stopped at rs $p $h"; break 2; }
    f="$out/rs-$p-$h.txt"
    timeout 60 t3 run --preset "$p" --dtype f16 --devices all --collective reduce-scatter \
      --mode sequential,host --chunks 4 --host-loop "handoff=$h" --reps 5 --warmup 1 --tune off \
      --verbose > "$f" 2>&1
    echo "rs $p f16 $h rc=$?: $(grep -E '^ *host ' "$f" | head -1 | tr -s ' ') | $(grep -E '^handoff' "$f" | tr -s ' ')"
  done
done
for pd in tnlg-op-tp2:f16 tnlg-fc2-tp2:f32; do
  p=${pd%%:*}; d=${pd##*:}
  (( SECONDS - t0 > STOP )) && break
  timeout 60 t3 run --preset "$p" --dtype "$d" --devices all --collective all-reduce \
    --mode sequential,host --chunks 4 --host-loop handoff=flag --reps 3 --warmup 1 --tune off \
    --verbose --trace "$out/trace-$p-$d.json" > "$out/trace-$p-$d.txt" 2>&1
  echo "trace $p $d rc=$?"
done
