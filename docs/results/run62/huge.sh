set -u
out=$OUT
for b in t3 t3-huge; do
  for h in store=out store=link; do
    f="$out/rs-$b-${h//=/-}.txt"
    T3_HUGE=1 timeout 60 $b run --preset tnlg-op-tp2 --dtype f16 --devices all --collective reduce-scatter \
      --mode sequential,host --chunks 4 --host-loop "$h" --reps 5 --warmup 1 --tune off --verbose > "$f" 2>&1
    echo "$b $h rc=$?: $(grep -E '^ *host ' "$f" | head -1 | tr -s ' ') | $(grep -c madvise "$f") madvise, $(grep madvise "$f" | head -1)"
  done
done
