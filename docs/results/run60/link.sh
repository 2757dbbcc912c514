#!/usr/bin/env bash
# Run 60 call 1 (two GPUs): the streamed rows of `t3 calibrate --devices all` at 1 and 4 GiB per
# direction and 2, 3 and 4 submissions queued per device, twice in turn; then issue 38's grain
# sweep (scripts/device/grain-2gpu.sh) until STOP_AT seconds.
set -u
out=${OUT:-out}; mkdir -p "$out/cal"
nvidia-smi topo -m > "$out/topo.txt" 2>&1
for i in 1 2; do
  for v in "1g --stream-mib 1024" "4g" "4g-q3 --host-loop in-flight=3" "4g-q4 --host-loop in-flight=4"; do
    read -ra a <<< "$v"
    timeout 120 t3 calibrate --devices all --reps 3 --mib 64 "${a[@]:1}" --out "$out/cal/${a[0]}-$i.json" \
      > "$out/cal/${a[0]}-$i.txt" 2>&1
    echo "${a[0]} $i rc=$? $(grep '^streamed' "$out/cal/${a[0]}-$i.txt" | sed 's/.*: //' | tr '\n' '|') ${SECONDS}s" >> "$out/cal/summary.txt"
  done
done
STOP_AT=$(( ${STOP_AT:-540} - SECONDS )) OUT=$out bash scripts/device/grain-2gpu.sh
