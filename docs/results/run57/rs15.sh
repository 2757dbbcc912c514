#!/usr/bin/env bash
# Run 57 on two GPUs (after `. .gpu/prelude.sh`): our f16 reduce-scatter alone (sequential's T_comm)
# on every TP-2 preset with the binary BIN at the model's chunk count, and at 2, 4 and 8 chunks per
# rank on the smaller output shapes, beside NCCL through host memory on the five output shapes.
set -uo pipefail
out=$(mktemp -d); trap 'tar -C "$out" -czf "$OUT/r.tgz" .; cp "$out/summary.txt" "$OUT/" 2>/dev/null' EXIT
s="$out/summary.txt"; t0=$SECONDS; b=${BIN:-t3}
NCCL_P2P_DISABLE=1 timeout 120 python3 .gpu/tp_baselines.py --ranks 2 --shapes 8192x3072x1536,8192x4256x2128,8192x12288x6144,8192x20480x10240,8192x18432x9216 --dtype f16 --json "$out/nccl-shm-f16.json" > "$out/nccl-shm-f16.txt" 2>&1
echo "== NCCL host path f16 rc=$? ($((SECONDS - t0)) s)" >> "$s"; grep -E "^(shape|8192)" "$out/nccl-shm-f16.txt" >> "$s"
rs() { # preset [chunks]
  [ $((SECONDS - t0)) -gt ${STOP_AT:-200} ] && { echo "skipped $* (time)" >> "$s"; return; }
  timeout 60 $b run --preset $1 --dtype f16 --devices all --collective reduce-scatter --mode sequential --reps 5 --warmup 1 --tune off ${2:+--chunks $2} > "$out/x.txt" 2>&1
  echo "$b $1 chunks ${2:-model} rc=$? $(grep -oE 'T_comm [0-9.]+' "$out/x.txt") $(grep -oE '[0-9]+ chunks/rank' "$out/x.txt") $(grep -cE 'mismatch|error' "$out/x.txt") bad" >> "$s"
}
for p in megagpt2-op-tp2 megagpt2-fc2-tp2 megagpt2-fc1bwd-tp2 megagpt2-ipbwd-tp2 tnlg-op-tp2 tnlg-fc2-tp2 tnlg-fc1bwd-tp2 tnlg-ipbwd-tp2 gpt3-op-tp2 gpt3-fc2-tp2 gpt3-fc1bwd-tp2 gpt3-ipbwd-tp2 mtnlg-op-tp2 palm-op-tp2 palm-ipbwd-tp2; do rs $p; done
for p in megagpt2-op-tp2 tnlg-op-tp2 gpt3-op-tp2; do for c in 1 2 4 8; do rs $p $c; done; done
echo "done ($((SECONDS - t0)) s)" >> "$s"
