#!/usr/bin/env bash
# Run 64 call 2 (two GPUs): `t3 tune` of host mode across the devices with the direct all-reduce as
# an alternative of the ring's at two ranks, on the TP-2 f16 points where run 63 saw it pay at 8
# chunks and grain 2 (gpt3-op, mtnlg-op), one where the ring paid (tnlg-op) and two it had not
# timed (palm-op, gpt3-ipbwd); then `t3 run` of each with that table and without (`--tune off`).
set -u
out=${OUT:-out}; mkdir -p "$out"
line() {
  echo "$1 rc=$2: $(grep -E '^ *sequential ' "$3" | head -1 | tr -s ' ' | cut -d' ' -f1-3) | $(grep -E '^ *host ' "$3" | head -1 | tr -s ' ') | $(grep -E '^ +(\[[a-z]+\] )?host: ' "$3" | head -1 | tr -s ' ')"
}
tune() { # budget presets...
  local b=$1; shift
  local ps; ps=$(IFS=,; echo "$*")
  timeout $((b + 90)) t3 tune --presets "$ps" --dtype f16 --devices all --mode sequential,host \
    --budget-s "$b" --out "$out/tune.json" > "$out/tune-$1.txt" 2>&1
  echo "tune $ps rc=$? ${SECONDS} s"; cat "$out/tune-$1.txt" | grep -v '^tune: '
}
run() { # preset table
  local f="$out/$1-$2.txt" t=$2
  [ "$t" = table ] && t="$out/tune.json"
  timeout 60 t3 run --preset "$1" --dtype f16 --devices all --mode sequential,host --reps 5 \
    --warmup 1 --tune "$t" --verbose > "$f" 2>&1
  line "$1 f16 $2" $? "$f"
}
tune 150 gpt3-op-tp2 mtnlg-op-tp2 tnlg-op-tp2
for p in gpt3-op-tp2 mtnlg-op-tp2 tnlg-op-tp2; do run $p table; run $p off; done
echo "at ${SECONDS} s"
if [ $SECONDS -lt 300 ]; then
  tune 100 palm-op-tp2 gpt3-ipbwd-tp2
  for p in palm-op-tp2 gpt3-ipbwd-tp2; do run $p table; run $p off; done
fi
echo "done at ${SECONDS} s"
