#!/usr/bin/env bash
# Run 55, call 6 (one H200, after `. .gpu/prelude.sh`): the final binaries of the session checked on
# the GPU: host mode across two Vulkan devices on the TP-2 points (every result against the f64
# reference), TP-4 over four Vulkan devices, and the calibration beside a GEMM on a small table.
set -uo pipefail
out=$(mktemp -d); trap 'tar -C "$out" -czf "$OUT/r.tgz" .; cp "$out/summary.txt" "$OUT/" 2>/dev/null' EXIT
s="$out/summary.txt"; t0=$SECONDS
for pd in tnlg-op-tp2:f16:2 gpt3-op-tp2:f32:2 tnlg-op-tp4:f16:4 tnlg-fc2-tp4:f32:4; do
  IFS=: read p d n <<< "$pd"
  f="$out/$p-$d"
  timeout 100 t3 run --preset $p --dtype $d --devices $n --collective all-reduce --mode sequential,host --reps 3 --warmup 1 --tune off --verbose > "$f.txt" 2>&1
  echo "== $p $d on $n devices rc=$? ($((SECONDS - t0)) s)" >> "$s"; grep -E "link 0->1|^workload|^sequential|^host " "$f.txt" | cut -c1-200 >> "$s"
done
timeout 90 t3 calibrate --devices 2 --reps 3 --mib 64 --beside-gemm 4096x4256x2128:f16 --out "$out/cal.json" > "$out/cal.txt" 2>&1
echo "== calibrate --beside-gemm rc=$? ($((SECONDS - t0)) s)" >> "$s"; grep -E "beside|streamed" "$out/cal.txt" >> "$s"
echo "done ($((SECONDS - t0)) s)" >> "$s"
