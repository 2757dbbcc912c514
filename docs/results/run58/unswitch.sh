#!/usr/bin/env bash
# Run 58 on one H200 (after `. .gpu/prelude.sh`): fused mode with every rank's B in two windows, `t3`
# (the window chosen per load) against `t3-uni` (B's second window from a rank's start, a copy of the
# cooperative kernel's tile code per window), in turn per point: B split by `--fused window=BYTES`
# on tnlg-fc2-tp4 and palm-ipbwd-tp4, and past one binding on mtnlg-ipbwd-tp4 and palm-fc2-tp4.
set -u
out=$(mktemp -d); trap 'tar -C "$out" -czf "$OUT/r.tgz" .; cp "$out/summary.txt" "$OUT/" 2>/dev/null' EXIT
s="$out/summary.txt"; t0=$SECONDS
for g in .gpu/bin/*.gz; do gunzip -f "$g"; done; chmod +x .gpu/bin/*
one() { tag=$1; shift; [ $((SECONDS - t0)) -gt "${STOP_AT:-300}" ] && { echo "skipped $tag (time)" >> "$s"; return; }
  timeout 120 "$@" --reps 3 --warmup 1 --tune off > "$out/$tag.txt" 2>&1
  echo "== $tag: $* rc=$? ($((SECONDS - t0)) s)" >> "$s"; grep -E "^(sequential|fused) |mismatch|error|wrong" "$out/$tag.txt" >> "$s"; }
for b in t3-uni t3; do
  one "tnlg-fc2-w64m-$b" $b run --preset tnlg-fc2-tp4 --dtype f16 --mode sequential,fused --fused window=67108864
done
for b in t3-uni t3; do
  one "palm-ipbwd-w1g-$b" $b run --preset palm-ipbwd-tp4 --dtype f16 --mode sequential,fused --fused window=1073741824
done
one mtnlg-ipbwd-t3-uni t3-uni run --preset mtnlg-ipbwd-tp4 --dtype f16 --mode sequential,fused
one palm-fc2-t3-uni t3-uni run --preset palm-fc2-tp4 --dtype f16 --mode sequential,fused
one tnlg-fc2-t3-uni t3-uni run --preset tnlg-fc2-tp4 --dtype f16 --mode sequential,fused
echo "done ($((SECONDS - t0)) s)" >> "$s"
