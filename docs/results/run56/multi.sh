#!/usr/bin/env bash
# Run 56 on two or four GPUs (kinds nvidia-h200-x2 / -x4, after `. .gpu/prelude.sh`): host mode on
# the TP-n presets (n = the GPUs present), f16 and f32, at the default grain (a stage per
# submission), at two chunks per rank per submission (`--host-loop grain=2`, also one submission
# queued per device) and at a chunk, alternating within each point; our reduce-scatter's T_comm
# beside NCCL's through host memory (f16, at the model's chunk count and at 8 and 16 per rank); the
# calibration (the ring's links at once on four); then `t3 tune` of sequential and host mode on as
# many points as time leaves.
set -uo pipefail
n=$(nvidia-smi -L | wc -l)
out=$(mktemp -d); trap 'tar -C "$out" -czf "$OUT/r.tgz" .; cp "$out/summary.txt" "$OUT/" 2>/dev/null' EXIT
s="$out/summary.txt"; t0=$SECONDS
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; echo "$n GPUs"; } >> "$s"
for pd in tnlg-op-tp$n:f16 tnlg-fc2-tp$n:f16 gpt3-op-tp$n:f16 tnlg-op-tp$n:f32 tnlg-fc2-tp$n:f32 gpt3-op-tp$n:f32; do
  p=${pd%%:*}; d=${pd##*:}
  # t3-base, where shipped: the binary of f3d73d4 (before a device's landings beside no GEMM work
  # went one per link a submission, each beside a send), at the default grain.
  if command -v t3-base > /dev/null; then
    f="$out/$p-$d-base"
    timeout 90 t3-base run --preset $p --dtype $d --devices all --collective all-reduce --mode sequential,host --reps 3 --warmup 1 --tune off --verbose > "$f.txt" 2>&1
    echo "== $p $d t3-base rc=$? ($((SECONDS - t0)) s)" >> "$s"; grep -E "T_comm|^sequential|^host |^after GEMM" "$f.txt" >> "$s"
  fi
  for g in grain=stage grain=2 grain=chunk grain=2,in-flight=1; do
    [ $((SECONDS - t0)) -gt ${STOP_GRAIN:-300} ] && { echo "skipped $p $d $g (time)" >> "$s"; continue; }
    f="$out/$p-$d-${g//[=,]/-}"
    timeout 90 t3 run --preset $p --dtype $d --devices all --collective all-reduce --mode sequential,host --reps 3 --warmup 1 --tune off --host-loop $g --verbose --trace "$f.trace.json" --json "$f.json" > "$f.txt" 2>&1
    echo "== $p $d $g rc=$? ($((SECONDS - t0)) s)" >> "$s"; grep -E "T_comm|^sequential|^host |^after GEMM" "$f.txt" >> "$s"
  done
done
for p in tnlg-op-tp$n tnlg-fc2-tp$n gpt3-op-tp$n; do for c in model 8 16; do
  [ $c = model ] && ch="" || ch="--chunks $c"
  timeout 60 t3 run --preset $p --dtype f16 --devices all --collective reduce-scatter --mode sequential --reps 3 --warmup 1 --tune off $ch --verbose > "$out/$p-rs-$c.txt" 2>&1
  echo "== $p f16 reduce-scatter chunks $c rc=$?" >> "$s"; grep -E "T_comm|^workload" "$out/$p-rs-$c.txt" >> "$s"
done; done
shapes=$(for p in tnlg-op-tp$n tnlg-fc2-tp$n gpt3-op-tp$n; do t3 presets | awk -v p=$p '$1 == p {printf "%sx%sx%s,", $5, $6, $7}'; done)
NCCL_P2P_DISABLE=1 timeout 90 python3 .gpu/tp_baselines.py --ranks $n --shapes ${shapes%,} --dtype f16 --json "$out/nccl-shm-f16.json" > "$out/nccl-shm-f16.txt" 2>&1
echo "== NCCL through host memory, shapes ${shapes%,} rc=$? ($((SECONDS - t0)) s)" >> "$s"; tail -6 "$out/nccl-shm-f16.txt" >> "$s"
timeout 100 t3 calibrate --devices all --reps 3 --out "$out/cal.json" > "$out/cal.txt" 2>&1
echo "== calibrate rc=$? ($((SECONDS - t0)) s)" >> "$s"; grep -E "streamed|sending" "$out/cal.txt" | sed 's/(zero-copy, [0-9]* MiB each)//' >> "$s"
for pd in tnlg-fc2-tp$n:f16 tnlg-op-tp$n:f32 tnlg-op-tp$n:f16; do
  p=${pd%%:*}; d=${pd##*:}
  [ $((SECONDS - t0)) -gt ${STOP_TUNE:-500} ] && { echo "skipped tune $p $d (time)" >> "$s"; continue; }
  timeout 80 t3 tune --presets $p --dtype $d --devices all --mode sequential,host --budget-s 35 --out "$out/tune.json" > "$out/tune-$p-$d.txt" 2>&1
  echo "== tune $p $d rc=$? ($((SECONDS - t0)) s)" >> "$s"; sed -n '/ ranks, /,$p' "$out/tune-$p-$d.txt" >> "$s"
done
echo "done ($((SECONDS - t0)) s)" >> "$s"
