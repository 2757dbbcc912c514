#!/usr/bin/env bash
# Run 60 call 5 (two GPUs): host mode's timeline across both GPUs (`--trace`, Chrome trace JSON) at
# stage and chunk grain, 4 chunks per rank, on tnlg-fc2-tp2 f32 (the GEMM sets the time) and
# tnlg-op-tp2 f16 (the link does): where chunk grain loses.
set -u
out=${OUT:-out}; mkdir -p "$out/trace"
for pd in tnlg-fc2-tp2:f32 tnlg-op-tp2:f16; do
  p=${pd%%:*}; d=${pd##*:}
  for g in stage chunk; do
    timeout 60 t3 run --preset "$p" --dtype "$d" --devices all --collective all-reduce \
      --mode sequential,host --chunks 4 --host-loop "grain=$g" --reps 3 --warmup 1 --tune off \
      --verbose --trace "$out/trace/$p-$d-$g.json" > "$out/trace/$p-$d-$g.txt" 2>&1
    echo "$p $d grain $g rc=$?: $(grep -E '^ *host ' "$out/trace/$p-$d-$g.txt" | head -1 | tr -s ' ')"
  done
done
