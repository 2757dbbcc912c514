#!/usr/bin/env bash
# Run 64 calls 4 and 5 (two GPUs): `t3 tune` again after call 3, where the direct all-reduce ran
# 3-6% faster than the ring call 2 tuned, at knobs that search had not reached; then `t3 run` of each
# point with the new table, without one, and at call 3's fastest direct configuration. Call 4 ran it
# with the collective axis last in each round and the chunk axis trying one count finer than the
# model's best second; call 5 with the search's rounds from each collective in turn, each in its
# share of the time.
set -u
out=${OUT:-out}; mkdir -p "$out"
line() {
  echo "$1 rc=$2: $(grep -E '^ *sequential ' "$3" | head -1 | tr -s ' ' | cut -d' ' -f1-3) | $(grep -E '^ *host ' "$3" | head -1 | tr -s ' ') | $(grep -E '^ +(\[[a-z]+\] )?host: ' "$3" | head -1 | tr -s ' ')"
}
timeout 330 t3 tune --presets gpt3-op-tp2,mtnlg-op-tp2,tnlg-op-tp2 --dtype f16 --devices all \
  --mode sequential,host --budget-s 210 --out "$out/tune.json" > "$out/tune.txt" 2>&1
echo "tune rc=$? ${SECONDS} s"; grep -v '^tune: ' "$out/tune.txt"
run() { # preset name args...
  local p=$1 n=$2; shift 2
  local f="$out/$p-$n.txt"
  timeout 60 t3 run --preset "$p" --dtype f16 --devices all --mode sequential,host --reps 5 \
    --warmup 1 --verbose "$@" > "$f" 2>&1
  line "$p $n" $? "$f"
}
run gpt3-op-tp2 table --tune "$out/tune.json"
run gpt3-op-tp2 off --tune off
run gpt3-op-tp2 direct-c8-g2 --tune off --collective direct-all-reduce --chunks 8 --host-loop grain=2
run mtnlg-op-tp2 table --tune "$out/tune.json"
run mtnlg-op-tp2 off --tune off
run mtnlg-op-tp2 direct-tuned-knobs --tune off --collective direct-all-reduce --chunks 4 \
  --step-lead 0 --host-loop grain=chunk,in-flight=1
run tnlg-op-tp2 table --tune "$out/tune.json"
run tnlg-op-tp2 off --tune off
echo "done at ${SECONDS} s"
