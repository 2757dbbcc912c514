#!/usr/bin/env bash
# Run 71 (one H200): fused mode's own model default (7b484a9) at the defaults (`--tune off`), against
# sequential, on the presets named (default: every TP-8 one fused can run, every TP-4 and TP-2 one),
# each dtype of DTYPES (f16 f32). MODES: the modes timed (sequential,fused; host and encoded are
# unchanged since run 69). A line per point: fused's configuration and where it came from, then each
# mode's median ms, speedup and overlap efficiency. Stops starting points after STOP_AT seconds.
#   OUT=... bash docs/results/run71/defaults.sh [PRESET ...]
set -u
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
presets=("$@")
# mtnlg and palm at TP 8: fused's spares do not fit beside the GEMM (run 69: "skipped: spares bind").
[ ${#presets[@]} -eq 0 ] && presets=($(for n in 8 4 2; do t3 presets | awk -v n=$n '$1 ~ "-tp"n"$" {print $1}'; done | grep -vE '^(mtnlg|palm)-.*-tp8$'))
for d in ${DTYPES:-f16 f32}; do for p in "${presets[@]}"; do
  [ $((SECONDS - t0)) -gt ${STOP_AT:-450} ] && { echo "skipped $p $d (time)"; continue; }
  f="$out/$p-$d.txt"
  timeout ${TO:-90} t3 run --preset $p --dtype $d --mode ${MODES:-sequential,fused} --reps 3 --tune off --verbose --json "$out/$p-$d.json" > "$f" 2>&1
  echo "$p $d rc=$? ($((SECONDS - t0)) s): $(grep -E '^\s+\[[a-z]+\] fused:' "$f" | tr -s ' ' | cut -d' ' -f2-6)|$(grep -E '^(sequential|host|encoded|fused) ' "$f" | tr -s ' ' | cut -d' ' -f1,3,5,6 | tr '\n' '|')"
done; done
echo "done ($((SECONDS - t0)) s)"
