#!/usr/bin/env bash
# Run 56 on two GPUs (kind nvidia-h200-x2, after `. .gpu/prelude.sh`): `t3 tune` of sequential and
# host mode on the TP-2 presets in f16 (outputs f16 across devices; DTYPE, PRESETS set others), 20 s a
# preset (BUDGET_S), into one table; then `t3 run` with that table on two of them (RUN_PRESETS).
# First our reduce-scatter at queue depths 1-3 (SKIP_RS=1: not).
set -uo pipefail
out=$(mktemp -d); trap 'tar -C "$out" -czf "$OUT/r.tgz" .; cp "$out/summary.txt" "$OUT/" 2>/dev/null' EXIT
s="$out/summary.txt"; t0=$SECONDS
# Our reduce-scatter's T_comm at other queue depths (the collective's landings pair with sends only
# where the peer's send completed before the submission was made).
[ -n "${SKIP_RS:-}" ] || for p in tnlg-op-tp2 gpt3-op-tp2; do for q in 1 2 3; do
  timeout 60 t3 run --preset $p --dtype f16 --devices all --collective reduce-scatter --mode sequential --reps 3 --warmup 1 --tune off --host-loop in-flight=$q > "$out/$p-rs-q$q.txt" 2>&1
  echo "== $p f16 reduce-scatter in-flight=$q rc=$?" >> "$s"; grep -E "T_comm" "$out/$p-rs-q$q.txt" >> "$s"
done; done
d=${DTYPE:-f16}
for p in ${PRESETS:-megagpt2-op-tp2 megagpt2-fc2-tp2 megagpt2-fc1bwd-tp2 megagpt2-ipbwd-tp2 tnlg-fc1bwd-tp2 tnlg-ipbwd-tp2 gpt3-op-tp2 gpt3-ipbwd-tp2 gpt3-fc2-tp2 gpt3-fc1bwd-tp2 mtnlg-op-tp2 palm-op-tp2 palm-ipbwd-tp2}; do
  [ $((SECONDS - t0)) -gt ${STOP_AT:-430} ] && { echo "skipped tune $p (time)" >> "$s"; continue; }
  timeout 70 t3 tune --presets $p --dtype $d --devices all --mode sequential,host --budget-s ${BUDGET_S:-20} --out "$out/tune.json" > "$out/tune-$p.txt" 2>&1
  echo "== tune $p $d rc=$? ($((SECONDS - t0)) s)" >> "$s"; sed -n '/ ranks, /,$p' "$out/tune-$p.txt" | grep -v "^wrote" >> "$s"
done
for p in ${RUN_PRESETS:-megagpt2-op-tp2 gpt3-op-tp2}; do
  timeout 60 t3 run --preset $p --dtype $d --devices all --mode sequential,host --reps 3 --tune "$out/tune.json" > "$out/run-$p.txt" 2>&1
  echo "== run $p $d --tune table rc=$? ($((SECONDS - t0)) s)" >> "$s"; grep -E "^(sequential|host) |fell back|config|^ +host:|†" "$out/run-$p.txt" >> "$s"
done
echo "done ($((SECONDS - t0)) s)" >> "$s"
