#!/usr/bin/env bash
# Run 56 on one H200 (after `. .gpu/prelude.sh`): whether `t3 run` on a small point times the GPU at
# a lowered SM clock. nvidia-smi samples the SM clock every 100 ms throughout; the same small point
# (tnlg-op-tp8 f16 at 1/4 scale) runs with the default warm-up, with none to speak of, and right
# after a long GEMM, each twice.
set -uo pipefail
out=$(mktemp -d); trap 'kill $smi 2>/dev/null; tar -C "$out" -czf "$OUT/r.tgz" .; cp "$out/summary.txt" "$OUT/" 2>/dev/null' EXIT
s="$out/summary.txt"; t0=$SECONDS
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks_throttle_reasons.active,utilization.gpu --format=csv -lms 100 > "$out/clocks.csv" 2>&1 & smi=$!
small="--preset tnlg-op-tp8 --dtype f16 --scale 0.25 --reps 20"
run() { local name=$1; shift; local a=$(date +%s.%N); timeout 120 t3 run "$@" --verbose --json "$out/$name.json" > "$out/$name.txt" 2>&1; local rc=$?; local b=$(date +%s.%N)
  echo "== $name rc=$rc ($a .. $b) $*" >> "$s"; grep -E "T_gemm|T_comm|T_seq|warm-up|^(sequential|host|encoded|fused) " "$out/$name.txt" >> "$s"; }
for i in 1 2; do
  run default$i $small
  sleep 2
  run short$i $small --warmup 2 --warmup-s 0
  sleep 2
  timeout 60 t3 run --preset gpt3-fc2-tp8 --dtype f16 --mode sequential --reps 3 --tune off --no-verify > /dev/null 2>&1
  run afterlong$i $small
done
sleep 1
echo "done ($((SECONDS - t0)) s)" >> "$s"
