#!/usr/bin/env bash
# Run 57 on two GPUs (after `. .gpu/prelude.sh`): host mode's all-reduce at the defaults with the
# link's kernels away from GEMM work on 128 (`t3`) and 512 workgroups (`t3-512`), alternating twice
# per point (ABAB), on the TP-2 presets whose runs are short.
set -uo pipefail
out=$(mktemp -d); trap 'tar -C "$out" -czf "$OUT/r.tgz" .; cp "$out/summary.txt" "$OUT/" 2>/dev/null' EXIT
s="$out/summary.txt"; t0=$SECONDS
for pd in ${POINTS:-tnlg-fc2-tp2:f16 megagpt2-op-tp2:f16 megagpt2-fc2-tp2:f16 tnlg-ipbwd-tp2:f16 megagpt2-op-tp2:f32 tnlg-op-tp2:f16}; do
  p=${pd%:*}; d=${pd#*:}
  for b in t3 t3-512 t3 t3-512; do
    [ $((SECONDS - t0)) -gt ${STOP_AT:-300} ] && { echo "skipped $p $d $b (time)" >> "$s"; continue; }
    timeout 60 $b run --preset $p --dtype $d --devices all --collective all-reduce --mode sequential,host --reps 3 --warmup 1 --tune off > "$out/x.txt" 2>&1
    echo "$b $p $d rc=$? $(grep -E 'T_comm' "$out/x.txt" | awk '{print "T_comm", $2}') $(grep -E '^sequential ' "$out/x.txt" | awk '{print "seq", $3}') $(grep -E '^host ' "$out/x.txt" | awk '{print "host", $3, $5, $6, $NF}')" >> "$s"
  done
done
echo "done ($((SECONDS - t0)) s)" >> "$s"
