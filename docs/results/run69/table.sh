#!/usr/bin/env bash
# Run 69 (one H200): the README's every-mode table (run 40 calls 4-5: TP-8 presets, reduce-scatter,
# 1 chunk per rank, the link throttled to 150 GB/s, f16 with --gemm-grid 128) with cac265b's
# sequential (every GEMM op in one pass), then the binary before it (`t3old`, 3f8fd9c: a pass per
# GEMM stage) on sequential alone, point by point: T_gemm and T_seq both ways in one device run.
#   POINTS="f16:tnlg-op f32:gpt3-op ..." OUT=... bash docs/results/run69/table.sh
set -u
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
timeout 120 t3 calibrate > "$out/calibrate.txt" 2>&1; echo "calibrate rc=$?"
for pt in ${POINTS:-f16:tnlg-op f16:gpt3-op f16:tnlg-fc2 f32:tnlg-op f32:tnlg-fc2 f32:gpt3-op}; do
  IFS=: read -r d p <<< "$pt"; grid=(); [ $d = f16 ] && grid=(--gemm-grid 128)
  for b in t3:sequential,host,encoded,fused t3old:sequential; do
    IFS=: read -r bin modes <<< "$b"
    [ $((SECONDS - t0)) -gt ${STOP_AT:-450} ] && { echo "skipped $p $d $bin (time)"; continue; }
    f="$out/$d-$p-$bin.txt"
    timeout ${TO:-150} $bin run --preset $p-tp8 --chunks 1 "${grid[@]}" --collective reduce-scatter --reduce update \
      --link-gbps 150 --mode $modes --reps 3 --dtype $d --tune off --verbose --json "$out/$d-$p-$bin.json" > "$f" 2>&1
    echo "== $d $p $bin rc=$? ($((SECONDS - t0)) s)"
    grep -E "^(baselines|fused own|           seq|           T_|           ideal|sequential|encoded|host  |fused  )|error|Error|warning" "$f" | cut -c1-150
  done
done
echo "done ($((SECONDS - t0)) s)"
