#!/usr/bin/env bash
# Run 51: issue 39's comparison on one H200 after the tuner's measurements went lean (operands made
# once per point, the system lowered again on the same buffers, the GEMM alone timed only first,
# sequential once per layout, a confirmation of each mode's three fastest): per preset and dtype,
# `t3 tune` (the search) then the exhaustive grid of the same space, then tune_compare.py.
# `bash docs/results/run51/call.sh PRESET:DTYPE...` after `. .gpu/prelude.sh`; results in $OUT.
set -u
out=${OUT:-out}; mkdir -p $out; s=$out/summary.txt
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >> $s
stamp() { while IFS= read -r l; do printf '%s %s\n' "$(date +%s.%N | cut -c1-14)" "$l"; done; }
for pd in "$@"; do
  p=${pd%%:*}; d=${pd##*:}
  if [ $SECONDS -gt ${STOP_AT:-450} ]; then echo "skipped $p $d (time)" >> $s; continue; fi
  t0=$SECONDS
  timeout 120 t3 tune --presets $p --dtype $d --budget-s ${SEARCH_S:-60} --out $out/$p-$d-search.json 2>&1 | stamp > $out/$p-$d-search.log
  echo "$p $d search rc=${PIPESTATUS[0]} $((SECONDS - t0)) s" >> $s
  t1=$SECONDS
  timeout 200 t3 tune --presets $p --dtype $d --exhaustive --budget-s ${GRID_S:-150} --out $out/$p-$d-grid.json 2>&1 | stamp > $out/$p-$d-grid.log
  echo "$p $d grid rc=${PIPESTATUS[0]} $((SECONDS - t1)) s" >> $s
  python3 scripts/device/tune_compare.py $out/$p-$d-search.json $out/$p-$d-grid.json --within 3 >> $s 2>&1
done
# Everything in one file: only a few files come back from a device call.
tar czf /tmp/run51.tgz -C $out . ; mv /tmp/run51.tgz $out/ ; find $out -type f ! -name run51.tgz ! -name summary.txt -delete
