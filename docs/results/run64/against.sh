#!/usr/bin/env bash
# Run 64 call 3 (two GPUs): the direct all-reduce against the ring as `t3 tune` configured it in call
# 2 (the table docs/results/run64/call2/tune.json, which chose the ring), in one call, twice in turn:
# the tuned ring; the ring and the direct one at 8 chunks and grain 2 (where run 63 saw the direct
# one pay); the direct one at the tuned ring's other knobs; and at 8 chunks a chunk a submission.
set -u
out=${OUT:-out}; mkdir -p "$out"
table=docs/results/run64/call2/tune.json
line() {
  echo "$1 rc=$2: $(grep -E '^ *sequential ' "$3" | head -1 | tr -s ' ' | cut -d' ' -f1-3) | $(grep -E '^ *host ' "$3" | head -1 | tr -s ' ') | $(grep -E '^ +(\[[a-z]+\] )?host: ' "$3" | head -1 | tr -s ' ')"
}
run() { # preset name args...
  local p=$1 n=$2; shift 2
  local f="$out/$p-$n-$pass.txt"
  timeout 60 t3 run --preset "$p" --dtype f16 --devices all --mode sequential,host --reps 5 \
    --warmup 1 --verbose "$@" > "$f" 2>&1
  line "$p $n" $? "$f"
}
for pass in 1 2; do
  run gpt3-op-tp2 tuned-ring --tune "$table"
  run gpt3-op-tp2 ring-c8-g2 --tune off --chunks 8 --host-loop grain=2
  run gpt3-op-tp2 direct-c8-g2 --tune off --collective direct-all-reduce --chunks 8 --host-loop grain=2
  run gpt3-op-tp2 direct-tuned-knobs --tune off --collective direct-all-reduce --chunks 4 \
    --gemm-grid 128 --step-lead 0 --host-loop grain=chunk
  run gpt3-op-tp2 direct-c8-chunk --tune off --collective direct-all-reduce --chunks 8 --host-loop grain=chunk
  run mtnlg-op-tp2 tuned-ring --tune "$table"
  run mtnlg-op-tp2 ring-c8-g2 --tune off --chunks 8 --host-loop grain=2
  run mtnlg-op-tp2 direct-c8-g2 --tune off --collective direct-all-reduce --chunks 8 --host-loop grain=2
  run mtnlg-op-tp2 direct-tuned-knobs --tune off --collective direct-all-reduce --chunks 4 \
    --step-lead 0 --host-loop grain=chunk,in-flight=1
  run mtnlg-op-tp2 direct-c8-chunk --tune off --collective direct-all-reduce --chunks 8 --host-loop grain=chunk
  echo "pass $pass at ${SECONDS} s"
  [ $SECONDS -gt 280 ] && break
done
