#!/usr/bin/env bash
# Run 67 (two GPUs), after call 3: engine links with the inbox cleared once at creation (wgpu
# zeroed it under the first read, which it never saw written), two ways: `t3` (the sender's copy
# engine copies its outbox into host memory, the receiver's copies it into its inbox) and
# `t3-hybrid` (the sender's step kernel writes host memory, as zero-copy; the receiver's copy engine
# lands it), against zero-copy links; the ring at the defaults, the reduce-scatter alone, and the
# direct all-reduce at the tuned configuration (chunk grain) one and two submissions deep.
#   OUT=... bash docs/results/run67/engine2.sh   (t3 and t3-hybrid on the PATH)
set -u
out=${OUT:-out}; mkdir -p "$out"
line() {
  echo "$1 rc=$2: $(grep -E '^ *sequential ' "$3" | head -1 | tr -s ' ' | cut -d' ' -f1-3,9-10) | $(grep -E '^ *host ' "$3" | head -1 | tr -s ' ' | cut -d' ' -f1-6,9-10)"
  grep -E '^ +T_comm|^after GEMM' "$3" | tr -s ' ' | cut -c1-100
}
run() {
  local name=$1 bin=$2; shift 2
  [ $SECONDS -gt "${STOP_AT:-480}" ] && { echo "skipped $name (time)"; return; }
  timeout 90 $bin run --dtype f16 --devices all --reps 5 --warmup 1 --tune off --verbose "$@" \
    > "$out/$name.txt" 2>&1
  line "$name" $? "$out/$name.txt"
}
for v in "engine t3 engine" "hybrid t3-hybrid engine" "zero-copy t3 zero-copy"; do
  set -- $v
  run "tnlg-op-tp2-$1" $2 --preset tnlg-op-tp2 --mode sequential,host --link-path $3
  run "megagpt2-op-tp2-rs-$1" $2 --preset megagpt2-op-tp2 --mode sequential --link-path $3 \
    --collective reduce-scatter
done
for p in palm-op-tp2 gpt3-op-tp2; do
  for v in "zero-copy t3 zero-copy 1" "engine t3 engine 1" "hybrid t3-hybrid engine 1" \
           "engine t3 engine 2" "hybrid t3-hybrid engine 2"; do
    set -- $v
    run "$p-direct-$1-d$4" $2 --preset $p --mode sequential,host --link-path $3 \
      --collective direct-all-reduce --chunks 4 --host-loop grain=chunk,in-flight=$4
  done
done
echo "done at ${SECONDS} s"
