#!/usr/bin/env bash
# Run 47: one GPU after the house's refactors: the TP-8 presets of the README's table, every mode, as
# run 45 call 2 ran them (fused mode's timeline asked for, so its chunk-grain timeline where the
# spares trigger is checked too), and `t3 tune` on one preset, every mode, timed.
# `bash docs/results/run47/call.sh` after `. .gpu/prelude.sh`; results in $OUT.
set -u
out=${OUT:-out}; mkdir -p $out
s=$out/summary.txt
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $s
start=$SECONDS
t3 calibrate > $out/calibrate.txt 2>&1
for p in tnlg-op-tp8 gpt3-op-tp8 tnlg-fc2-tp8 gpt3-fc2-tp8 f32:tnlg-op-tp8 f32:tnlg-fc2-tp8; do
  case $p in
    f32:*) p=${p#f32:}; d=f32; extra="--reps 3" ;;
    *) d=f16; extra="--gemm-grid 128 --reps 5" ;;
  esac
  timeout 150 t3 run --preset $p --dtype $d --collective reduce-scatter --link-gbps 150 $extra --tune off --svg $out/$p-$d.svg --json $out/$p-$d.json > $out/$p-$d.txt 2>&1
  echo "== $p $d rc=$? ($((SECONDS - start)) s)" >> $s
  grep -E "^(sequential|host|encoded|fused) |T_gemm|^workload" $out/$p-$d.txt >> $s
  python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print('\n'.join('timeline '+t['mode']+': '+t['grain'][:20]+' ... '+t['grain'][-40:] for t in r['timelines'] if t['mode']=='fused'))" $out/$p-$d.json >> $s 2>&1
done
t0=$SECONDS
timeout 200 t3 tune --presets tnlg-op-tp8 --dtype f16 --budget-s 60 --out $out/tune.json > $out/tune.txt 2>&1
echo "== tune tnlg-op-tp8 f16 rc=$? $((SECONDS - t0)) s" >> $s
cat $out/tune.txt >> $s
echo "total $((SECONDS - start)) s" >> $s
