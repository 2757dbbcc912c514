#!/usr/bin/env bash
# Run 58 on two GPUs (kind nvidia-h200-x2, after `. .gpu/prelude.sh`): the polled link between two
# GPUs (bench-polled, owed since run 53), then where the zero-copy link's host memory lies: the
# calibration with the process (and so the pages the import pins) on each NUMA node in turn, with
# interleaved pages, and at other link workgroup budgets; the defaults first and last.
set -u
out=$(mktemp -d); trap 'tar -C "$out" -czf "$OUT/r.tgz" .; cp "$out/summary.txt" "$OUT/" 2>/dev/null' EXIT
s="$out/summary.txt"; t0=$SECONDS
{ nvidia-smi topo -m; lscpu | grep -iE "numa|socket|model name"
  for d in /sys/bus/pci/devices/*; do [ "$(cat "$d/vendor")" = 0x10de ] && case $(cat "$d/class") in 0x0302*|0x0300*) echo "$d numa_node $(cat "$d/numa_node")";; esac; done
  echo "numactl: $(command -v numactl) taskset: $(command -v taskset) numa_balancing: $(cat /proc/sys/kernel/numa_balancing 2>/dev/null)"
  for n in /sys/devices/system/node/node*; do echo "$n cpus $(cat "$n/cpulist")"; grep MemTotal "$n/meminfo"; done; } >> "$s" 2>&1
gunzip -f .gpu/bin/bench-polled.gz
timeout 150 bench-polled --devices all --reps 3 --timeout-s 5 --slots 128 --only "0 ->,1 ->,<->,ring" --json "$out/polled-spread.jsonl" > "$out/polled-spread.txt" 2>&1
echo "== polled spread rc=$? ($((SECONDS - t0)) s)" >> "$s"; tail -30 "$out/polled-spread.txt" >> "$s"
cal() { tag=$1; shift; [ $((SECONDS - t0)) -gt "${STOP_AT:-500}" ] && { echo "skipped $tag (time)" >> "$s"; return; }
  timeout 90 "$@" --devices all --reps 3 --out "$out/link-$tag.json" > "$out/cal-$tag.txt" 2>&1
  echo "== $tag: $* rc=$? ($((SECONDS - t0)) s)" >> "$s"; grep -E "at once|alone:" "$out/cal-$tag.txt" >> "$s"; }
cal base t3 calibrate
for n in /sys/devices/system/node/node*; do cal "${n##*/}" taskset -c "$(cat "$n/cpulist")" t3 calibrate; done
command -v numactl > /dev/null && cal interleave numactl --interleave=all t3 calibrate
for w in 256 384 768; do cal "wg$w" t3 calibrate --link-workgroups $w; done
cal base2 t3 calibrate
timeout 150 bench-polled --devices all --reps 3 --timeout-s 5 --flag-load atomic,volatile --json "$out/polled.jsonl" > "$out/polled.txt" 2>&1
echo "== polled all rc=$? ($((SECONDS - t0)) s)" >> "$s"; tail -40 "$out/polled.txt" >> "$s"
echo "done ($((SECONDS - t0)) s)" >> "$s"
