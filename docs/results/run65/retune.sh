#!/usr/bin/env bash
# Run 65 (two GPUs): `t3 tune` of sequential and host mode across the devices on TP-2 presets (f16 as
# it ran, `DTYPE` since),
# with the search of dadd0d3 (rounds from the ring's and the direct all-reduce's start in turn) and
# the configuration as given confirmed beside its three fastest (run 64 tuned three presets before the
# confirmation, five with the direct all-reduce one knob among the others); then `t3 run` of each
# point with that table and without (`--tune off`).
#   PRESETS="gpt3-fc2-tp2 palm-op-tp2 ..." BUDGET=350 [DTYPE=f32] bash docs/results/run65/retune.sh
set -u
out=${OUT:-out}; mkdir -p "$out"
read -ra presets <<< "${PRESETS:?}"
line() {
  echo "$1 rc=$2: $(grep -E '^ *sequential ' "$3" | head -1 | tr -s ' ' | cut -d' ' -f1-3) | $(grep -E '^ *host ' "$3" | head -1 | tr -s ' ') | $(grep -E '^ +(\[[a-z]+\] )?host: ' "$3" | head -1 | tr -s ' ')"
}
ps=$(IFS=,; echo "${presets[*]}")
timeout $((${BUDGET:?} + 120)) t3 tune --presets "$ps" --dtype "${DTYPE:-f16}" --devices all \
  --mode sequential,host --budget-s "$BUDGET" --out "$out/tune.json" > "$out/tune.txt" 2>&1
echo "tune rc=$? ${SECONDS} s"; grep -v '^tune: ' "$out/tune.txt"
for p in "${presets[@]}"; do
  for t in table off; do
    if [ $SECONDS -gt "${STOP_AT:-540}" ]; then echo "skipped $p $t (time)"; continue; fi
    f="$out/$p-$t.txt"; arg=$t; [ $t = table ] && arg="$out/tune.json"
    timeout 60 t3 run --preset "$p" --dtype "${DTYPE:-f16}" --devices all --mode sequential,host --reps 5 \
      --warmup 1 --tune "$arg" --verbose > "$f" 2>&1
    line "$p ${DTYPE:-f16} $t" $? "$f"
  done
done
echo "done at ${SECONDS} s"
