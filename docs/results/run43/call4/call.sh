#!/usr/bin/env bash
# Run 43 call 4 (kind nvidia-h200-x2): the zero-copy link's kernel budget (--link-workgroups W sets
# both the send and the landing kernels' workgroups; unthrottled: send 16, landing 64) and the host
# loop's grain, on the TP-2 points where host mode lost in call 3. After `. .gpu/prelude.sh`.
set -uo pipefail
out=$(mktemp -d); trap 'tar -C "$out" -czf "$OUT/r.tgz" .; cp "$out/summary.txt" "$OUT/" 2>/dev/null' EXIT
s="$out/summary.txt"
one() { # name, then t3 run arguments
  local name=$1; shift
  timeout 60 t3 run --devices all --collective all-reduce --mode sequential,host --reps 3 --warmup 1 "$@" --json "$out/$name.json" > "$out/$name.txt" 2>&1
  echo "== $name rc=$? ($*)" >> "$s"
  grep -E "T_gemm|T_comm|^sequential|^host " "$out/$name.txt" >> "$s"
}
for p in tnlg-op-tp2 tnlg-fc2-tp2; do for d in f32 f16; do
  for w in 16 32 128; do one $p-$d-w$w --preset $p --dtype $d --link-workgroups $w; done
  T3_HOST_GRAIN=stage one $p-$d-stage --preset $p --dtype $d
done; done
one gpt3-op-tp2-f32-w32 --preset gpt3-op-tp2 --dtype f32 --link-workgroups 32
