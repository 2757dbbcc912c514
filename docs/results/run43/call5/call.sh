#!/usr/bin/env bash
# Run 43 call 5: the defaults across devices (zero-copy link, 4 chunks per rank, stage grain, send and
# landing kernels on 16 workgroups) on every TP-N output projection and FC-2 preset, f16 and f32.
# `bash docs/results/run43/call5.sh N` on kind nvidia-h200-xN, after `. .gpu/prelude.sh`.
set -uo pipefail
n=${1:-2}
out=$(mktemp -d); trap 'tar -C "$out" -czf "$OUT/r.tgz" .; cp "$out/summary.txt" "$OUT/" 2>/dev/null' EXIT
s="$out/summary.txt"
nvidia-smi --query-gpu=name --format=csv,noheader | head -1 >> "$s"
for d in f16 f32; do for p in tnlg-op-tp$n gpt3-op-tp$n tnlg-fc2-tp$n; do
  timeout 75 t3 run --preset $p --dtype $d --devices all --collective all-reduce --mode sequential,host --reps 3 --warmup 1 --json "$out/$p-$d.json" > "$out/$p-$d.txt" 2>&1
  echo "== $p-$d rc=$?" >> "$s"
  grep -E "^workload|T_gemm|T_comm|^sequential|^host " "$out/$p-$d.txt" >> "$s"
done; done
