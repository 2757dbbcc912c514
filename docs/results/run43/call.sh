#!/usr/bin/env bash
# Run 43: the zero-copy link on real GPUs. `bash docs/results/run43/call.sh N` on kind nvidia-h200-xN
# (N = 2 or 4), after `. .gpu/prelude.sh`. Each command is bounded; results in $OUT/r.tgz and a
# summary in $OUT/summary.txt.
set -uo pipefail
n=${1:-2}
out=$(mktemp -d); trap 'tar -C "$out" -czf "$OUT/r.tgz" .; cp "$out/summary.txt" "$OUT/" 2>/dev/null' EXIT
s="$out/summary.txt"
t3 info > "$out/info.txt" 2>&1
grep -iE "H200|H100|device" "$out/info.txt" | head -8 >> "$s"
echo "== calibrate zero-copy" >> "$s"
timeout 150 t3 calibrate --devices all --reps 3 --out "$out/zc.json" > "$out/cal-zc.txt" 2>&1
echo "rc=$?" >> "$s"; grep -E "zero-copy|streamed" "$out/cal-zc.txt" >> "$s"
echo "== calibrate mapped (host copy), 64 MiB" >> "$s"
timeout 100 t3 calibrate --devices all --link-path mapped --mib 64 --reps 3 --out "$out/mapped.json" > "$out/cal-mapped.txt" 2>&1
echo "rc=$?" >> "$s"; grep -E "streamed|host part" "$out/cal-mapped.txt" >> "$s"
for d in f16 f32; do for p in tnlg-op-tp$n gpt3-op-tp$n tnlg-fc2-tp$n; do
  for lp in zero-copy mapped; do
    [ $lp = mapped ] && [ $p != tnlg-op-tp$n ] && continue
    name=$p-$d-$lp
    timeout 75 t3 run --preset $p --dtype $d --devices all --collective all-reduce --chunks 4 --mode sequential,host --reps 3 --warmup 1 --link-path $lp --json "$out/$name.json" > "$out/$name.txt" 2>&1
    echo "== $name rc=$?" >> "$s"
    grep -E "^           link 0->1|T_gemm|T_comm|T_seq|^sequential|^host " "$out/$name.txt" >> "$s"
  done
done; done
echo "== NCCL through host memory (NCCL_P2P_DISABLE=1)" >> "$s"
for d in f16 f32; do
  NCCL_P2P_DISABLE=1 timeout 90 python3 .gpu/tp_baselines.py --ranks $n --shapes 8192x4256x$((4256/n)),8192x12288x$((12288/n)),8192x4256x$((17024/n)) --dtype $d --json "$out/nccl-shm-$d.json" > "$out/nccl-shm-$d.txt" 2>&1
  echo "nccl $d rc=$?" >> "$s"; tail -12 "$out/nccl-shm-$d.txt" >> "$s"
done
