#!/usr/bin/env bash
# Run 57 on two GPUs (after `. .gpu/prelude.sh`): every TP-2 preset in f16 and f32 at the defaults (no
# table), sequential and host mode, with the binary BIN (t3-512: the link's kernels away from GEMM
# work on 512 workgroups), shortest first. PRESETS sets others (on four GPUs, the TP-4 presets:
# PRESETS="$(t3 presets | awk '/-tp4 /{print $1}')").
set -uo pipefail
out=$(mktemp -d); trap 'tar -C "$out" -czf "$OUT/r.tgz" .; cp "$out/summary.txt" "$OUT/" 2>/dev/null' EXIT
s="$out/summary.txt"; t0=$SECONDS; b=${BIN:-t3}
for d in f16 f32; do for p in ${PRESETS:-megagpt2-op-tp2 tnlg-op-tp2 megagpt2-fc2-tp2 megagpt2-fc1bwd-tp2 megagpt2-ipbwd-tp2 tnlg-fc2-tp2 tnlg-fc1bwd-tp2 tnlg-ipbwd-tp2 gpt3-op-tp2 mtnlg-op-tp2 palm-op-tp2 gpt3-ipbwd-tp2 gpt3-fc2-tp2 gpt3-fc1bwd-tp2 palm-ipbwd-tp2}; do
  [ $((SECONDS - t0)) -gt ${STOP_AT:-500} ] && { echo "skipped $p $d (time)" >> "$s"; continue; }
  timeout 90 $b run --preset $p --dtype $d --devices all --collective all-reduce --mode sequential,host --reps 3 --warmup 1 --tune off --verbose > "$out/$p-$d.txt" 2>&1
  echo "== $b $p $d rc=$? ($((SECONDS - t0)) s)" >> "$s"
  grep -E "^(sequential|host) |T_comm  |after GEMM|mismatch|error" "$out/$p-$d.txt" | cut -c1-120 >> "$s"
done; done
echo "done ($((SECONDS - t0)) s)" >> "$s"
