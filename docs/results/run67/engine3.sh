#!/usr/bin/env bash
# Run 67 (two GPUs), the engine link as committed in 589f81c (the sender's step kernel writes host
# memory as on zero-copy, the receiver's copy engine lands the chunk) against zero-copy links, f16:
# the larger TP-2 presets at the configuration their tune table chose (the direct all-reduce, 4
# chunks per rank, a chunk a submission, one submission deep), then the smaller at the defaults.
#   OUT=... bash docs/results/run67/engine3.sh   (t3 of 589f81c on the PATH)
set -u
out=${OUT:-out}; mkdir -p "$out"
line() {
  echo "$1 rc=$2: $(grep -E '^ *sequential ' "$3" | head -1 | tr -s ' ' | cut -d' ' -f1-3,9-10) | $(grep -E '^ *host ' "$3" | head -1 | tr -s ' ' | cut -d' ' -f1-6,9-10)"
  grep -E '^ +T_gemm|^ +T_comm|^after GEMM' "$3" | tr -s ' ' | cut -c1-100
}
run() {
  local name=$1; shift
  [ $SECONDS -gt "${STOP_AT:-480}" ] && { echo "skipped $name (time)"; return; }
  timeout 90 t3 run --dtype f16 --devices all --reps 5 --warmup 1 --tune off --verbose "$@" \
    > "$out/$name.txt" 2>&1
  line "$name" $? "$out/$name.txt"
}
for p in ${LARGE-gpt3-op-tp2 palm-op-tp2 mtnlg-op-tp2 gpt3-ipbwd-tp2 gpt3-fc2-tp2}; do
  for path in engine zero-copy; do
    run "$p-direct-$path" --preset $p --mode sequential,host --link-path $path \
      --collective direct-all-reduce --chunks 4 --host-loop grain=chunk,in-flight=1
  done
done
for p in ${SMALL-tnlg-op-tp2 tnlg-fc2-tp2 tnlg-ipbwd-tp2 megagpt2-op-tp2 megagpt2-fc2-tp2 megagpt2-ipbwd-tp2}; do
  for path in engine zero-copy; do
    run "$p-$path" --preset $p --mode sequential,host --link-path $path
  done
done
echo "done at ${SECONDS} s"
