#!/usr/bin/env bash
# Run 57 on two GPUs (kind nvidia-h200-x2, after `. .gpu/prelude.sh`): the link's kernels away from
# GEMM work on 128 workgroups (`t3`, the default), 512 (`t3-512`) and 1024 (`t3-1024`): the same
# code with HOST_SEND_WORKGROUPS and HOST_LAND_WORKGROUPS set so (beside GEMM work a pass's sends
# still share 8 and its landings 32). NCCL through host memory on the same output shapes first,
# then the calibration, our reduce-scatter and host mode's all-reduce with each binary in turn.
set -uo pipefail
out=$(mktemp -d); trap 'tar -C "$out" -czf "$OUT/r.tgz" .; cp "$out/summary.txt" "$OUT/" 2>/dev/null' EXIT
s="$out/summary.txt"; t0=$SECONDS; bins="t3 t3-512 t3-1024"
late() { [ $((SECONDS - t0)) -gt ${STOP_AT:-520} ] && { echo "skipped $* (time)" >> "$s"; return 0; }; return 1; }
NCCL_P2P_DISABLE=1 timeout 120 python3 .gpu/tp_baselines.py --ranks 2 --shapes 8192x3072x1536,8192x4256x2128,8192x12288x6144,8192x20480x10240,8192x18432x9216 --dtype f16 --json "$out/nccl-shm-f16.json" > "$out/nccl-shm-f16.txt" 2>&1
echo "== NCCL host path f16 rc=$? ($((SECONDS - t0)) s)" >> "$s"; cat "$out/nccl-shm-f16.txt" >> "$s"
for b in $bins; do late calibrate $b && continue
  timeout 90 $b calibrate --devices all --reps 3 --out "$out/link-$b.json" > "$out/cal-$b.txt" 2>&1
  echo "== $b calibrate rc=$? ($((SECONDS - t0)) s)" >> "$s"; grep -iE "GB/s|both|alone" "$out/cal-$b.txt" | head -20 >> "$s"
done
for p in megagpt2-op-tp2 tnlg-op-tp2 gpt3-op-tp2 palm-op-tp2 mtnlg-op-tp2; do for b in $bins; do late rs $p $b && continue
  timeout 60 $b run --preset $p --dtype f16 --devices all --collective reduce-scatter --mode sequential --reps 5 --warmup 1 --tune off > "$out/rs-$p-$b.txt" 2>&1
  echo "== $b $p f16 reduce-scatter rc=$? ($((SECONDS - t0)) s)" >> "$s"; grep -E "T_comm|chunks|mismatch|error" "$out/rs-$p-$b.txt" | head -3 >> "$s"
done; done
for pd in tnlg-op-tp2:f16 tnlg-fc2-tp2:f16 gpt3-op-tp2:f16 tnlg-op-tp2:f32 tnlg-fc2-tp2:f32; do p=${pd%:*}; d=${pd#*:}; for b in $bins; do late ar $p $d $b && continue
  timeout 90 $b run --preset $p --dtype $d --devices all --collective all-reduce --mode sequential,host --reps 3 --warmup 1 --tune off --verbose > "$out/ar-$p-$d-$b.txt" 2>&1
  echo "== $b $p $d all-reduce rc=$? ($((SECONDS - t0)) s)" >> "$s"; grep -E "^(sequential|host) |T_comm|after GEMM|mismatch|error" "$out/ar-$p-$d-$b.txt" >> "$s"
done; done
echo "done ($((SECONDS - t0)) s)" >> "$s"
