#!/usr/bin/env bash
# Run 57 on two GPUs (kind nvidia-h200-x2, after `. .gpu/prelude.sh`): the TP-2 points not yet run at
# the defaults (no table): gpt3-fc1bwd and palm-ipbwd in f16, the twelve others in f32; then host
# mode with the link's kernels at 512 workgroups beside GEMM work on three points (WG512=0: not).
set -uo pipefail
out=$(mktemp -d); trap 'tar -C "$out" -czf "$OUT/r.tgz" .; cp "$out/summary.txt" "$OUT/" 2>/dev/null' EXIT
s="$out/summary.txt"; t0=$SECONDS
run() { # preset dtype tag [extra flags]
  local p=$1 d=$2 tag=$3; shift 3
  [ $((SECONDS - t0)) -gt ${STOP_AT:-480} ] && { echo "skipped $p $d $tag (time)" >> "$s"; return; }
  timeout 90 t3 run --preset $p --dtype $d --devices all --collective all-reduce --mode sequential,host --reps 3 --warmup 1 --tune off --verbose "$@" > "$out/$p-$d-$tag.txt" 2>&1
  echo "== $p $d $tag rc=$? ($((SECONDS - t0)) s)" >> "$s"
  grep -E "^(sequential|host) |T_comm|after GEMM|mismatch|error" "$out/$p-$d-$tag.txt" >> "$s"
}
for p in gpt3-fc1bwd-tp2 palm-ipbwd-tp2; do run $p f16 defaults; done
for p in megagpt2-op-tp2 megagpt2-fc2-tp2 megagpt2-ipbwd-tp2 megagpt2-fc1bwd-tp2 tnlg-ipbwd-tp2 tnlg-fc1bwd-tp2 gpt3-fc2-tp2 gpt3-ipbwd-tp2 mtnlg-op-tp2 palm-op-tp2 gpt3-fc1bwd-tp2 palm-ipbwd-tp2; do
  run $p f32 defaults; done
[ "${WG512:-1}" = 0 ] || for p in tnlg-op-tp2 tnlg-fc2-tp2 gpt3-op-tp2; do
  run $p f16 wg128; run $p f16 wg512 --link-workgroups 512; done
echo "done ($((SECONDS - t0)) s)" >> "$s"
