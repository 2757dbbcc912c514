#!/usr/bin/env bash
# Run 58 on one H200 (after `. .gpu/prelude.sh`): fused mode where every rank's B packed passes one
# binding (2 GiB: B bound in two windows) with `t3` (a branch per B load) and `t3-sel` (both windows
# read, the word selected), in turn per point; palm-ipbwd-tp4 (B 2.04 GB, one window) the control.
set -u
out=$(mktemp -d); trap 'tar -C "$out" -czf "$OUT/r.tgz" .; cp "$out/summary.txt" "$OUT/" 2>/dev/null' EXIT
s="$out/summary.txt"; t0=$SECONDS
for g in .gpu/bin/*.gz; do gunzip -f "$g"; done; chmod +x .gpu/bin/*
bins=${BINS:-t3 t3-sel}
one() { tag=$1; shift; [ $((SECONDS - t0)) -gt "${STOP_AT:-500}" ] && { echo "skipped $tag (time)" >> "$s"; return; }
  timeout 120 "$@" --reps 3 --warmup 1 --tune off > "$out/$tag.txt" 2>&1
  echo "== $tag: $* rc=$? ($((SECONDS - t0)) s)" >> "$s"; grep -E "^(sequential|fused) |config +fused|mismatch|error|wrong" "$out/$tag.txt" >> "$s"; }
for pd in mtnlg-ipbwd-tp4:f16 palm-fc2-tp4:f16 palm-ipbwd-tp4:f16; do p=${pd%:*}; d=${pd#*:}
  for b in $bins; do one "$p-$d-$b" $b run --preset $p --dtype $d --mode sequential,fused; done; done
for b in $bins; do one "f32-2048-$b" $b run --shape 2048x12288x12288 --ranks 4 --collective all-reduce --dtype f32 --mode sequential,fused; done
one "mtnlg-ipbwd-tp4-spares" t3 run --preset mtnlg-ipbwd-tp4 --dtype f16 --mode fused --fused trigger=spares,grid=off
echo "done ($((SECONDS - t0)) s)" >> "$s"
