#!/usr/bin/env bash
# Run 49, call 2: issue 39's grid comparison on one H200, f16: `t3 tune` (the search, 60 s budget) on
# the four TP-8 presets, then the exhaustive grid of the same space with a larger budget (300 s), then
# scripts/device/tune_compare.py --within 3. `bash docs/results/run49/call2.sh` after `. .gpu/prelude.sh`.
set -u
out=${OUT:-out}; mkdir -p $out; s=$out/summary.txt
common=(--presets tnlg-op-tp8,gpt3-op-tp8,tnlg-fc2-tp8,gpt3-fc2-tp8 --reps 3 --warmup 1 --warmup-s 1 --dtype f16)
start=$SECONDS
timeout 200 t3 tune "${common[@]}" --budget-s 60 --out $out/search.json > $out/search.log 2>&1
echo "search rc=$? $((SECONDS - start)) s" >> $s
t0=$SECONDS
timeout 330 t3 tune "${common[@]}" --exhaustive --budget-s 300 --out $out/grid.json > $out/grid.log 2>&1
echo "grid rc=$? $((SECONDS - t0)) s" >> $s
python3 scripts/device/tune_compare.py $out/search.json $out/grid.json --within 3 > $out/compare.md 2>&1
cat $out/compare.md >> $s
