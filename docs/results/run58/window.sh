#!/usr/bin/env bash
# Run 58 on one H200 (after `. .gpu/prelude.sh`): is fused mode's f16 loss where B passes one binding
# the two windows or the working set? The same points with B and the output split by `--fused
# window=BYTES` where they would fit one binding.
set -u
out=$(mktemp -d); trap 'tar -C "$out" -czf "$OUT/r.tgz" .; cp "$out/summary.txt" "$OUT/" 2>/dev/null' EXIT
s="$out/summary.txt"; t0=$SECONDS
one() { tag=$1; shift; [ $((SECONDS - t0)) -gt "${STOP_AT:-300}" ] && { echo "skipped $tag (time)" >> "$s"; return; }
  timeout 120 "$@" --reps 3 --warmup 1 --tune off > "$out/$tag.txt" 2>&1
  echo "== $tag: $* rc=$? ($((SECONDS - t0)) s)" >> "$s"; grep -E "^(sequential|fused) |mismatch|error|wrong" "$out/$tag.txt" >> "$s"; }
one tnlg-fc2 t3 run --preset tnlg-fc2-tp4 --dtype f16 --mode sequential,fused
one tnlg-fc2-w64m t3 run --preset tnlg-fc2-tp4 --dtype f16 --mode fused --fused window=67108864
one tnlg-fc2-w512m t3 run --preset tnlg-fc2-tp4 --dtype f16 --mode fused --fused window=536870912
one palm-ipbwd t3 run --preset palm-ipbwd-tp4 --dtype f16 --mode sequential,fused
one palm-ipbwd-w1g t3 run --preset palm-ipbwd-tp4 --dtype f16 --mode fused --fused window=1073741824
echo "done ($((SECONDS - t0)) s)" >> "$s"
