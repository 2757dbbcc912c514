#!/usr/bin/env bash
# Run 67 (two GPUs): the side queues beside a GEMM (bench-gemm --beside-copy-mib: copies on a second
# universal queue and on the transfer queues, each alone and beside the tracked GEMM), then host mode
# over engine links against zero-copy ones on TP-2 presets in f16 (the ring at the defaults, and the
# direct all-reduce at the tuned configuration), and the reduce-scatter alone.
#   OUT=... bash docs/results/run67/engine.sh   (t3 and bench-gemm of the engine path on the PATH)
set -u
out=${OUT:-out}; mkdir -p "$out"
line() {
  echo "$1 rc=$2: $(grep -E '^ *sequential ' "$3" | head -1 | tr -s ' ' | cut -d' ' -f1-3) | $(grep -E '^ *host ' "$3" | head -1 | tr -s ' ' | cut -d' ' -f1-8)"
  grep -E '^ +T_comm|^after GEMM|^links ' "$3" | tr -s ' '
}
timeout 150 bench-gemm --sizes 8192x18432x9216 --dtypes f16 --beside-copy-mib 512 --reps 5 \
  --json "$out/bench.json" > "$out/bench.txt" 2>&1
echo "bench rc=$? ${SECONDS} s"; grep -vE '^\s*$' "$out/bench.txt"
run() {
  local name=$1; shift
  timeout 90 t3 run --dtype f16 --devices all --reps 5 --warmup 1 --tune off --verbose "$@" \
    > "$out/$name.txt" 2>&1
  line "$name" $? "$out/$name.txt"
}
for p in ${PRESETS:-tnlg-op-tp2 gpt3-op-tp2 palm-op-tp2}; do
  for path in zero-copy engine; do
    [ $SECONDS -gt "${STOP_AT:-480}" ] && { echo "skipped $p $path (time)"; continue; }
    run "$p-$path" --preset "$p" --mode sequential,host --link-path "$path"
  done
done
for path in zero-copy engine; do
  [ $SECONDS -gt "${STOP_AT:-480}" ] && { echo "skipped direct $path (time)"; continue; }
  run "palm-op-tp2-direct-$path" --preset palm-op-tp2 --mode sequential,host --link-path "$path" \
    --collective direct-all-reduce --chunks 4 --host-loop grain=chunk,in-flight=1
  run "megagpt2-op-tp2-rs-$path" --preset megagpt2-op-tp2 --mode sequential --link-path "$path" \
    --collective reduce-scatter
done
echo "done at ${SECONDS} s"
