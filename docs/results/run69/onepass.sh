#!/usr/bin/env bash
# Run 69: does the GEMM's pass count set its time? Sequential lowers one pass per GEMM stage, so the
# chunk order (a stage per chunk index) has C passes where the stage order has R. `t3one` is the
# binary with sequential's and the GEMM-alone recordings holding every GEMM op in one pass (an
# experiment, not committed). Both binaries alternate on each point: T_gemm, T_seq and host mode at
# the defaults, across the devices where there are two or more (else the ranks on one device), then
# TP-8 presets on one device (emulated peers, every mode).
#   OUT=... bash docs/results/run69/onepass.sh
set -u
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
dev=(); [ "$(nvidia-smi -L | wc -l)" -ge 2 ] && dev=(--devices all)
line() { echo "$1 rc=$2 ($((SECONDS - t0)) s): $(grep -E 'T_gemm|T_seq' "$3" | sed 's/baselines//' | awk '{printf "%s %s | ", $1, $2}') $(grep -E '^(sequential|host|encoded|fused) ' "$3" | tr -s ' ' | cut -d' ' -f1,3,5,6 | tr '\n' '|') $(grep -E '^after GEMM' "$3" | cut -c1-80)"; }
for pt in tnlg-op-tp2:f32:4 palm-op-tp2:f16:8 megagpt2-fc2-tp2:f32:4 mtnlg-op-tp2:f16:8; do
  IFS=: read -r p d c <<< "$pt"
  for o in stage chunk; do for b in t3 t3one; do
    [ $((SECONDS - t0)) -gt ${STOP_AT:-300} ] && { echo "skipped $p $d $o $b (time)"; continue; }
    f="$out/$p-$d-$o-$b.txt"
    timeout 90 $b run --preset $p --dtype $d "${dev[@]}" --collective all-reduce --mode sequential,host --chunks $c --order $o --reps 5 --warmup 1 --tune off --verbose > "$f" 2>&1
    line "$p $d chunks=$c order=$o $b" $? "$f"
  done; done
done
for p in tnlg-op-tp8 gpt3-fc2-tp8 megagpt2-op-tp8; do for b in t3 t3one; do
  [ $((SECONDS - t0)) -gt ${STOP_AT:-300} ] && { echo "skipped $p one device $b (time)"; continue; }
  f="$out/$p-f16-one-$b.txt"
  timeout 90 $b run --preset $p --dtype f16 --mode sequential,host,encoded,fused --reps 5 --warmup 1 --tune off --verbose > "$f" 2>&1
  line "$p f16 one device $b" $? "$f"
done; done
echo "done ($((SECONDS - t0)) s)"
