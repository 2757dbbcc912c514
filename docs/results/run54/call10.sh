#!/usr/bin/env bash
# Run 54, call 10 (kind nvidia-h200-x2, the machine of calls 8-9, after `. .gpu/prelude.sh`): host
# mode on the TP-2 output projections at 64 workgroups (the budget `t3 tune` chose on four of five
# points), then `t3 tune` of gpt3-op-tp2 f32.
set -uo pipefail
out=$(mktemp -d); trap 'tar -C "$out" -czf "$OUT/r.tgz" .; cp "$out/summary.txt" "$OUT/" 2>/dev/null' EXIT
s="$out/summary.txt"; t0=$SECONDS
for pd in tnlg-op-tp2:f16 gpt3-op-tp2:f16 tnlg-fc2-tp2:f16 tnlg-op-tp2:f32 tnlg-fc2-tp2:f32; do
  p=${pd%%:*}; d=${pd##*:}
  timeout 90 t3 run --preset $p --dtype $d --devices all --collective all-reduce --mode sequential,host --reps 3 --warmup 1 --link-workgroups 64 --tune off > "$out/$p-$d-ar-64.txt" 2>&1
  echo "== $p $d all-reduce --link-workgroups 64 rc=$?" >> "$s"; grep -E "T_comm|^sequential|^host " "$out/$p-$d-ar-64.txt" >> "$s"
done
timeout 150 t3 tune --presets gpt3-op-tp2 --dtype f32 --devices all --mode sequential,host --budget-s 40 --out "$out/tune.json" > "$out/tune.txt" 2>&1
echo "== tune gpt3-op-tp2 f32 rc=$? ($((SECONDS - t0)) s)" >> "$s"; sed -n '/ ranks, /,$p' "$out/tune.txt" >> "$s"
echo "done ($((SECONDS - t0)) s)" >> "$s"
