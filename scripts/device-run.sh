#!/usr/bin/env bash
# Every figure of BENCHMARKS.md, on the GPU machine (what it needs and how: docs/device-runs.md):
#   there, with t3 (and the bench-* executables) on the PATH and the Vulkan loader installed:
#   bash scripts/device-run.sh PART
#   (PART: ceilings, overlap, scaling, forward, arbitration, f16, chunks, lead, flake, hostlink, run7, grid, coopvar,
#    hostloop, hostloop2, hostwait, hostdepth, twogpu, fused, fused1, passes, polled)
# The hostlink part runs on two GPUs (kind nvidia-h200-x2) and ships its test binary as .gpu/bin/test-hostlink.
# The f16 part also runs the test binaries' f16 cases on the device (the cooperative-matrix kernel
# cannot run on lavapipe): ship them with `cp $(test executable) .gpu/bin/test-gemm` (and
# test-collectives) after prepare.sh.
# Results land in $OUT (or ./out).
set -uo pipefail
# At most 8 files come back from the device: each part leaves its files in one folder, tarred at the end.
dest=${OUT:-out}; part=${1:-ceilings}
out=$(mktemp -d); trap 'tar -C "$out" -czf "$dest/$part.tgz" .' EXIT
mkdir -p "$dest"
case "$part" in
ceilings)
  t3 info --json > "$out/info.json"
  python3 .gpu/cuda_baselines.py --sizes 4096,8192 --json "$out/cuda.json"
  bench-gemm --sizes 4096,8192 --reps 5 --json "$out/bench.jsonl"
  bench-steps --mib 256,1024 --reps 5 --link-wg 16,64,256 --json "$out/bench.jsonl"
  t3 calibrate --json > "$out/link.json"
  ;;
overlap)
  t3 calibrate > /dev/null
  # Issue 4's table: R = 4 and 8, unthrottled and the 150 GB/s budget, reduce-scatter and all-reduce.
  for r in 4 8; do for c in reduce-scatter all-reduce; do for l in "" "--link-gbps 150"; do
    t3 run --preset tnlg-fc2-tp$r --collective $c --chunks 2 --reps 5 --warmup 2 $l --json "$out/ov-$r-$c${l:+-150}.json" --svg "$out/ov-$r-$c${l:+-150}.svg" || exit 1
  done; done; done
  # Issue 6's presets at TP 8 and 150 GB/s (checks sampled; GPT-3 FC-2 unchecked: its CPU reference is long).
  for p in tnlg-op-tp8 tnlg-fc2-tp8 gpt3-op-tp8; do
    t3 run --preset $p --collective reduce-scatter --chunks 2 --link-gbps 150 --reps 3 --warmup 1 --json "$out/$p-150.json" --svg "$out/$p-150.svg" || exit 1
  done
  t3 run --preset gpt3-fc2-tp8 --collective reduce-scatter --chunks 2 --link-gbps 150 --reps 3 --warmup 1 --no-verify --json "$out/gpt3-fc2-tp8-150.json" || exit 1
  ;;
scaling)
  t3 calibrate > /dev/null
  t3 sweep --presets tnlg-op-tp8 --collective reduce-scatter --reduce forward --ranks 2,4,8,16,32 --chunks 1 --link-workgroups 16 --reps 3 --warmup 1 --no-verify --csv "$out/scale-ranks.csv"
  t3 sweep --presets tnlg-op-tp8 --collective reduce-scatter --reduce forward --ranks 8 --chunks 1,2,4,8,16 --link-workgroups 16 --reps 3 --warmup 1 --no-verify --csv "$out/scale-chunks.csv"
  ;;
forward)
  t3 calibrate > /dev/null
  # The forwarded ring reduce against update, on the performance issue's presets (TP 8, 150 GB/s).
  for p in tnlg-op-tp8 tnlg-fc2-tp8 gpt3-op-tp8; do
    t3 run --preset $p --collective reduce-scatter --chunks 2 --link-gbps 150 --reduce forward --mode sequential,host,encoded --reps 3 --warmup 1 --json "$out/fw-$p-150.json" --svg "$out/fw-$p-150.svg" || exit 1
  done
  t3 run --preset gpt3-fc2-tp8 --collective reduce-scatter --chunks 2 --link-gbps 150 --reduce forward --mode sequential,host,encoded --reps 3 --warmup 1 --no-verify --json "$out/fw-gpt3-fc2-tp8-150.json" || exit 1
  for r in 4 8; do for c in reduce-scatter all-reduce; do for l in "" "--link-gbps 150"; do
    t3 run --preset tnlg-fc2-tp$r --collective $c --chunks 2 --reps 5 --warmup 2 --reduce forward --mode sequential,host,encoded $l --json "$out/fw-$r-$c${l:+-150}.json" || exit 1
  done; done; done
  # Fused with more, smaller chunks (its transfers are one workgroup per chunk).
  t3 run --preset tnlg-fc2-tp8 --collective reduce-scatter --chunks 8 --link-gbps 150 --mode sequential,encoded,fused --reps 3 --warmup 1 --json "$out/fused-c8.json" || exit 1
  ;;
arbitration)
  # Arbitration on and off: steps sharing a pass with GEMM work capped to 16..128 workgroups in all.
  t3 sweep --presets tnlg-op-tp8,tnlg-fc2-tp8,gpt3-op-tp8,gpt3-fc2-tp8 --collective reduce-scatter --reduce forward --chunks 2 --link-workgroups 16 --arbitrate 0,16,32,64,128 --mode sequential,encoded --reps 3 --warmup 1 --no-verify --csv "$out/arbitration.csv"
  ;;
f16)
  # f16 operands: the device's kernel choice, its correctness (test binaries), cuBLAS fp16 beside it.
  t3 info > "$out/info.txt" 2>&1
  for t in gemm collectives; do
    if [ -x .gpu/bin/test-$t ]; then T3_REQUIRE_GPU=1 .gpu/bin/test-$t f16 --nocapture > "$out/test-$t.txt" 2>&1; echo "test-$t rc=$?" >> "$out/tests.txt"; fi
  done
  T3_REQUIRE_GPU=1 .gpu/bin/test-gemm kernel_choice > "$out/test-choice.txt" 2>&1; echo "test-choice rc=$?" >> "$out/tests.txt"
  python3 .gpu/cuda_baselines.py --sizes 4096,8192 --json "$out/cuda.json"
  # NVIDIA's driver optimises a new pipeline in the background and caches the result on disk; a first
  # pass fills the cache, so the timed pass measures the optimised build from its first rep.
  bench-gemm --sizes 4096,8192 --dtypes f32,f16 --reps 5 --warmup-s 3 > "$out/bench-cache-fill.txt" 2>&1
  bench-gemm --sizes 4096,8192 --dtypes f32,f16 --reps 9 --json "$out/bench.jsonl"
  bench-gemm --sizes 4096,8192 --dtypes f16 --kernel simt --reps 9 --json "$out/bench.jsonl"
  ;;
chunks)
  # Overlap per preset at TP 8, 150 GB/s (16-workgroup link), forwarded ring, 1..8 chunks per rank,
  # f32 and f16 operands; local inbox adds run unthrottled.
  # Fill the driver's pipeline cache for the f16 kernels first (see the f16 part).
  t3 run --preset tnlg-op-tp8 --dtype f16 --collective reduce-scatter --chunks 2 --mode sequential,encoded --reps 20 --warmup 5 --no-verify > "$out/cache-fill.txt" 2>&1
  for d in f32 f16; do
    t3 sweep --presets tnlg-op-tp8,gpt3-op-tp8,tnlg-fc2-tp8,gpt3-fc2-tp8 --collective reduce-scatter --reduce forward --chunks 1,2,4,8 --link-workgroups 16 --dtype $d --mode sequential,encoded --reps 3 --warmup 1 --no-verify --csv "$out/chunks-$d.csv"
  done
  ;;
lead)
  # The step lead off and auto (the default) per preset and chunk count, f32 and f16 operands, then the
  # output projections at 1 chunk with every check on, timelines and traces (BENCHMARKS.md run 6).
  t3 run --preset tnlg-op-tp8 --dtype f16 --collective reduce-scatter --chunks 2 --mode sequential,encoded --reps 20 --warmup 5 --no-verify > "$out/cache-fill.txt" 2>&1
  for d in f32 f16; do
    t3 sweep --presets tnlg-op-tp8,gpt3-op-tp8,tnlg-fc2-tp8,gpt3-fc2-tp8 --collective reduce-scatter --reduce forward --chunks 1,2,4,8 --link-workgroups 16 --step-lead 0,auto --dtype $d --mode sequential,encoded --reps 3 --warmup 1 --no-verify --csv "$out/lead-$d.csv"
  done
  for p in tnlg-op-tp8 gpt3-op-tp8; do
    t3 run --preset $p --collective reduce-scatter --reduce forward --chunks 1 --link-workgroups 16 --mode sequential,encoded --reps 3 --warmup 1 --json "$out/$p-c1.json" --svg "$out/$p-c1.svg" --trace "$out/$p-c1.trace.json" > "$out/$p-c1.txt" 2>&1 || exit 1
  done
  ;;
flake)
  # Issue 14's flake (f16 T_gemm 11.3 ms > T_seq 4.8 ms): every rep's time and host time since process
  # start (JSON .samples), in fresh processes with the driver's shader disk cache and without it, so a
  # pipeline swapped in mid-run shows as a step at one at_s. First as the issue ran (count-only warm-up,
  # "--warmup 1 --warmup-s 0"; the checks still re-measure, every attempt's samples are kept), then
  # with the warm-up by stability (the default), which should settle past the swap.
  t3 calibrate > /dev/null
  count="--warmup 1 --warmup-s 0"
  f16="--preset tnlg-op-tp8 --dtype f16 --collective reduce-scatter --reduce forward --chunks 1 --link-gbps 150"
  for i in 1 2 3; do
    t3 run $f16 --reps 20 $count --json "$out/cache-$i.json" > "$out/cache-$i.txt" 2>&1
    __GL_SHADER_DISK_CACHE=0 t3 run $f16 --reps 20 $count --json "$out/nocache-$i.json" > "$out/nocache-$i.txt" 2>&1
  done
  for i in 1 2; do
    t3 run $f16 --reps 3 $count --json "$out/issue-$i.json" > "$out/issue-$i.txt" 2>&1
    __GL_SHADER_DISK_CACHE=0 t3 run $f16 --reps 3 --json "$out/settle-nocache-$i.json" > "$out/settle-nocache-$i.txt" 2>&1
    t3 run $f16 --reps 3 --json "$out/settle-$i.json" > "$out/settle-$i.txt" 2>&1
  done
  # A sweep's points as separate processes (each with its JSON samples), count-only warm-up.
  for p in tnlg-op-tp8 gpt3-op-tp8 tnlg-fc2-tp8 gpt3-fc2-tp8; do for d in f32 f16; do
    t3 run --preset $p --dtype $d --collective reduce-scatter --reduce forward --chunks 1 --link-gbps 150 --mode sequential,encoded --reps 10 $count --no-verify --json "$out/sweep-$p-$d.json" > "$out/sweep-$p-$d.txt" 2>&1
  done; done
  ;;
hostlink)
  # The host-staged link between the two GPUs (issue 12: >= 25 GB/s per direction): its tests on the real
  # devices (several devices on one H200, and --devices all), then the calibration both ways, mapped (the
  # path the trigger loop uses), staged, and two devices on one H200 for comparison.
  t3 info > "$out/info.txt" 2>&1
  T3_REQUIRE_GPU=1 test-hostlink --test-threads 1 > "$out/test-hostlink.txt" 2>&1 || exit 1
  bench-hostlink --devices all --mib 1,4,16,64,256 --threads 1,2,4,8,16,24 --reps 7 --json "$out/bench.jsonl" --table "$out/hostlink.json" > "$out/hostlink.txt" 2>&1 || exit 1
  bench-hostlink --devices all --path staged --mib 16,64,256 --threads 4,16 --reps 5 > "$out/hostlink-staged.txt" 2>&1
  bench-hostlink --devices 2 --mib 16,64,256 --threads 4,16 --reps 5 > "$out/hostlink-one-gpu.txt" 2>&1
  ;;
polled)
  # Issue 38's lead, the polled link (bench-polled, BENCHES=1): what a running kernel sees of another
  # agent's writes, every scenario the devices allow with each flag load, then the links between
  # devices with a slot per slice (no slot reused within a kernel; BENCHMARKS.md "The polled link").
  t3 info > "$out/info.txt" 2>&1
  bench-polled --devices all --reps 3 --timeout-s 5 --flag-load atomic,volatile --json "$out/polled.jsonl" > "$out/polled.txt" 2>&1
  bench-polled --devices all --reps 3 --timeout-s 5 --slots 128 --only "0 ->,1 ->,<->,ring" --json "$out/polled-spread.jsonl" > "$out/polled-spread.txt" 2>&1
  ;;
run7)
  # Run 7 (after the redesign, the warm-up by stability and the consistency checks): ceilings, the GEMMs,
  # then the overlap table at TP 8 and 150 GB/s (forwarded ring, 1 chunk, step lead auto) in f32 and f16,
  # every mode but fused (it realises reduces as updates only: the fused part times it), twice (issue 14:
  # every check passing, twice).
  t3 info > "$out/info.txt" 2>&1
  python3 .gpu/cuda_baselines.py --sizes 4096,8192 --json "$out/cuda.json" > "$out/cuda.txt" 2>&1
  bench-gemm --sizes 4096,8192 --dtypes f32,f16 --reps 9 --json "$out/bench.jsonl" > "$out/bench-gemm.txt" 2>&1
  t3 calibrate > "$out/calibrate.txt" 2>&1
  # PASSES and DTYPES split the part over calls of at most 10 minutes (e.g. DTYPES=f16).
  for pass in ${PASSES:-1 2}; do for d in ${DTYPES:-f32 f16}; do for p in tnlg-op-tp8 gpt3-op-tp8 tnlg-fc2-tp8 gpt3-fc2-tp8; do
    v=""; [ "$p" = gpt3-fc2-tp8 ] && v=--no-verify
    t3 run --preset $p --dtype $d --collective reduce-scatter --reduce forward --chunks 1 --link-gbps 150 --mode ${MODES:-sequential,host,encoded} --reps 5 $v --json "$out/ov$pass-$p-$d.json" > "$out/ov$pass-$p-$d.txt" 2>&1
    echo "ov$pass-$p-$d rc=$?" >> "$out/rc.txt"
  done; done; done
  ;;
grid)
  # Issue 14's f16 overlap against the persistent GEMM grid (`--gemm-grid G`: in passes with steps the
  # GEMM stays on G workgroups, the steps get the SMs it leaves). First the GEMM alone (one workgroup per
  # tile) on the cubes and the TP-8 shapes, with cuBLAS fp16 beside
  # it; the f16 collectives tests and the grid's (its GEMM ops span several tiles) on the device; then per preset the
  # default run (G = 0: no grid, step lead auto) and every G of GRIDS, sequential, host and encoded.
  t3 info > "$out/info.txt" 2>&1
  if [ -x .gpu/bin/test-collectives ]; then
    T3_REQUIRE_GPU=1 .gpu/bin/test-collectives f16 > "$out/test-collectives.txt" 2>&1; echo "test-collectives rc=$?" >> "$out/rc.txt"
    T3_REQUIRE_GPU=1 .gpu/bin/test-collectives gemm_grid >> "$out/test-collectives.txt" 2>&1; echo "test-collectives gemm_grid rc=$?" >> "$out/rc.txt"
  fi
  if [ -z "${NO_GEMM:-}" ]; then
    python3 .gpu/cuda_baselines.py --sizes 4096,8192 --json "$out/cuda.json" > "$out/cuda.txt" 2>&1
    bench-gemm --kernel coop --sizes 4096,8192,8192x4256x532,8192x12288x1536,8192x4256x2128 --dtypes f16 --reps 9 --warmup-s 3 --json "$out/bench.jsonl" > "$out/bench-gemm.txt" 2>&1
  fi
  t3 calibrate > "$out/calibrate.txt" 2>&1
  for d in ${DTYPES:-f16}; do for p in ${PRESETS:-tnlg-op-tp8 gpt3-op-tp8}; do for g in ${GRIDS:-0 128 120 112 104}; do
    v=""; [ "$p" = gpt3-fc2-tp8 ] && v=--no-verify
    gf=""; [ "$g" != 0 ] && gf="--gemm-grid $g"
    t3 run --preset $p --dtype $d --collective reduce-scatter --reduce ${REDUCE:-forward} --chunks ${CHUNKS:-1} --link-gbps 150 --mode ${MODES:-sequential,host,encoded} --reps 5 $gf $v --json "$out/g$g-$p-$d.json" > "$out/g$g-$p-$d.txt" 2>&1
    echo "g$g-$p-$d rc=$?" >> "$out/rc.txt"
  done; done; done
  ;;
passes)
  # Where a shared pass's time goes with the GEMM grid (BENCHMARKS.md run 30, issue 14): the grid's GEMM
  # alone against a workgroup per tile (bench-gemm --grid), then tnlg-op f16 encoded with and without the
  # grid at several links, traced per pass: a pass bound by its steps shortens with a faster link.
  for g in 0 128 132; do
    bench-gemm --grid $g --kernel coop --dtypes f16 --sizes ${SIZES:-8192x4256x532,8192x12288x1536,8192x4256x2128} --reps 9 --json "$out/bench.jsonl" > "$out/bench-g$g.txt" 2>&1
    echo "bench g$g rc=$?" >> "$out/rc.txt"
  done
  t3 calibrate > "$out/calibrate.txt" 2>&1
  for p in ${PRESETS:-tnlg-op-tp8}; do for g in 0 128; do for l in ${LINKS:-75 150 300 600}; do
    gf=""; [ "$g" != 0 ] && gf="--gemm-grid $g"
    t3 run --preset $p --dtype f16 --collective reduce-scatter --reduce forward --chunks 1 --link-gbps $l --mode sequential,encoded --reps 5 $gf --trace "$out/trace-$p-g$g-l$l.json" > "$out/$p-g$g-l$l.txt" 2>&1
    echo "$p g$g l$l rc=$?" >> "$out/rc.txt"
  done; done; done
  ;;
coopvar)
  # The cooperative-matrix GEMM variants (scripts/coop-variants/, README there) against the committed
  # kernel and cuBLAS fp16 in the same call: per variant the f16 tests on the device (they also fill the
  # driver's pipeline cache for it), then the bench with a time warm-up. A variant that fails to build
  # or to verify is recorded (rc) and the next one runs.
  t3 info > "$out/info.txt" 2>&1
  python3 .gpu/cuda_baselines.py --sizes 4096,8192 --json "$out/cuda.json" > "$out/cuda.txt" 2>&1
  # COOP_VARIANTS picks (and orders) the list; "committed" is shaders/gemm_coop.wgsl itself. The default
  # leaves out the variants NVVM rejected in run 7 (vec, db1, db2, db2-swz, half; half16 shares their
  # vec4<u32> workgroup memory, which run 11 showed is what it rejects; h4 became the committed kernel).
  # COOP_SIZES: the bench's shapes (N or MxNxK; a K sweep at fixed M, N separates a tile's fixed cost
  # from its cost per slice). A variant whose header says --no-verify leaves C unwritten on
  # purpose: it is timed unchecked and its tests are skipped.
  for v in ${COOP_VARIANTS:-committed alias db2-h4 half16-h4}; do
    f=scripts/coop-variants/$v.wgsl; [ "$v" = committed ] && f=
    verify=1; [ -n "$f" ] && grep -q -- "--no-verify" "$f" && verify=0
    [ $verify = 1 ] && for t in gemm collectives; do
      T3_KERNEL_WGSL=${f:+coop=$f} T3_REQUIRE_GPU=1 .gpu/bin/test-$t f16 --skip bf16 > "$out/test-$t-$v.txt" 2>&1; echo "$v test-$t rc=$?" >> "$out/rc.txt"
    done
    nv=""; [ $verify = 0 ] && nv=--no-verify
    bench-gemm ${f:+--kernel-wgsl coop=$f} $nv --kernel coop --sizes ${COOP_SIZES:-4096,8192} --dtypes f16 --reps 9 --warmup-s ${COOP_WARMUP_S:-3} \
      --json "$out/bench-$v.jsonl" > "$out/bench-$v.txt" 2>&1; echo "$v bench rc=$?" >> "$out/rc.txt"
    grep -h "^gemm" "$out/bench-$v.txt" | sed "s/^/$v: /"
  done
  cat "$out/rc.txt" "$out/cuda.txt"
  ;;
hostloop)
  # Issue 12: the pipelined host trigger loop on ONE device against sequential (was 0.45-0.96x), the
  # TP-8 presets at 2 chunks, unthrottled (checked) and at 150 GB/s (SVG and Perfetto: the host-waits
  # lane shows the loop, the host panel's grain how well its clock is aligned). DTYPES="f32" or "f16"
  # splits the part over two calls of at most 10 minutes.
  t3 calibrate > /dev/null
  t3 run --preset tnlg-op-tp8 --dtype f16 --collective reduce-scatter --chunks 2 --mode sequential,host --reps 20 --warmup 5 --no-verify > "$out/cache-fill.txt" 2>&1
  for d in ${DTYPES:-f32 f16}; do for p in tnlg-op-tp8 tnlg-fc2-tp8 gpt3-op-tp8 gpt3-fc2-tp8; do
    v=""; [ $p = gpt3-fc2-tp8 ] && v="--no-verify"
    t3 run --preset $p --dtype $d --collective reduce-scatter --chunks 2 --mode sequential,host --reps 5 --warmup 2 $v --json "$out/$p-$d.json" > "$out/$p-$d.txt" 2>&1
    echo "$p-$d rc=$?" >> "$out/rc.txt"
    t3 run --preset $p --dtype $d --collective reduce-scatter --chunks 2 --link-gbps 150 --mode sequential,host --reps 5 --warmup 2 --no-verify --json "$out/$p-$d-150.json" --svg "$out/$p-$d-150.svg" --trace "$out/$p-$d-150.trace.json" > "$out/$p-$d-150.txt" 2>&1
    echo "$p-$d-150 rc=$?" >> "$out/rc.txt"
  done; done
  ;;
hostloop2)
  # The trigger loop after the redesign (issue 12: step chains follow the queue, one loop for one device
  # and many) on one device, run 8's configuration (TP 8, 150 GB/s, forwarded ring, 1 chunk): host
  # against sequential and encoded, f32 and f16.
  t3 info > "$out/info.txt" 2>&1
  t3 calibrate > "$out/calibrate.txt" 2>&1
  for d in ${DTYPES:-f32 f16}; do for p in tnlg-op-tp8 gpt3-op-tp8 tnlg-fc2-tp8 gpt3-fc2-tp8; do
    v=""; [ $p = gpt3-fc2-tp8 ] && v="--no-verify"
    t3 run --preset $p --dtype $d --collective reduce-scatter --reduce forward --chunks 1 --link-gbps 150 --mode sequential,host,encoded --reps 5 $v --json "$out/$p-$d.json" --svg "$out/$p-$d.svg" > "$out/$p-$d.txt" 2>&1
    echo "$p-$d rc=$?" >> "$out/rc.txt"
  done; done
  cat "$out/rc.txt"
  ;;
hostwait)
  # The trigger loop's wait (--host-loop wait): blocked in the driver against polled back to back, on the
  # f16 points with the shortest GEMM stages (TP 8, 150 GB/s, forwarded ring, 1 chunk).
  t3 calibrate > "$out/calibrate.txt" 2>&1
  for w in block spin; do for p in tnlg-op-tp8 gpt3-op-tp8; do
    t3 run --host-loop wait=$w --preset $p --dtype f16 --collective reduce-scatter --reduce forward --chunks 1 --link-gbps 150 --mode sequential,host --reps 5 --json "$out/$p-$w.json" --svg "$out/$p-$w.svg" > "$out/$p-$w.txt" 2>&1
    echo "$p-$w rc=$?" >> "$out/rc.txt"
  done; done
  cat "$out/rc.txt"
  ;;
fused1)
  # Issue 13, one run per preset and dtype (TP 8, 150 GB/s, update reduces, 1 chunk): fused beside
  # sequential, host and encoded, every preset (the packed B in two windows lets gpt3-fc2 f32 run).
  t3 info > "$out/info.txt" 2>&1
  t3 calibrate > "$out/calibrate.txt" 2>&1
  for d in ${DTYPES:-f32 f16}; do for p in ${FUSED_PRESETS:-tnlg-op-tp8 gpt3-op-tp8 tnlg-fc2-tp8 gpt3-fc2-tp8}; do
    v=""; [ $p = gpt3-fc2-tp8 ] && v="--no-verify"
    t3 run --preset $p --dtype $d --collective reduce-scatter --reduce update --chunks 1 --link-gbps 150 --mode sequential,host,encoded,fused --reps 5 --warmup-s 3 $v --json "$out/$p-$d.json" --svg "$out/$p-$d.svg" > "$out/$p-$d.txt" 2>&1
    echo "$p-$d rc=$?" >> "$out/rc.txt"
  done; done
  cat "$out/rc.txt"
  ;;
hostdepth)
  # The host loop's depth (--host-loop in-flight: submissions queued per device, default 2) against step
  # delay, f16 (the shortest GEMM stages), 1 and 4 chunks.
  for n in 2 3 4; do for p in tnlg-op-tp8 gpt3-op-tp8; do for c in 1 4; do
    t3 run --host-loop in-flight=$n --preset $p --dtype f16 --collective reduce-scatter --chunks $c --mode sequential,host --reps 5 --warmup 2 --no-verify --json "$out/depth$n-$p-c$c.json" > "$out/depth$n-$p-c$c.txt" 2>&1
  done; done; done
  ;;
twogpu)
  # Issue 12: ranks on devices (kind nvidia-h200-x2, or two devices on one H200: DEVS=2). TP-2 presets
  # (PRESETS picks), f32 and f16 (DTYPES), sequential and host over the host-staged link; chunks per
  # rank (CHUNKS, default 2) and collectives (COLLECTIVES, default all-reduce) name the files when set;
  # LINKARG adds link flags (e.g. "--link-workgroups 64": the send halves' kernels on 64 workgroups
  # instead of the 16 an unthrottled link gives them, core/src/lower/mod.rs HOST_SEND_WORKGROUPS).
  devs=${DEVS:-all}
  t3 info > "$out/info.txt" 2>&1
  [ -n "${NO_CALIBRATE:-}" ] || t3 calibrate --devices "$devs" --json > "$out/calibrate.json" 2> "$out/calibrate.txt"
  for d in ${DTYPES:-f32 f16}; do for p in ${PRESETS:-tnlg-op-tp2 tnlg-fc2-tp2 gpt3-op-tp2 gpt3-fc2-tp2}; do
  for c in ${CHUNKS:-2}; do for coll in ${COLLECTIVES:-all-reduce}; do
    v=""; [ $p = gpt3-fc2-tp2 ] && v="--no-verify"
    name=$p-$d; [ -n "${CHUNKS:-}" ] && name=$name-c$c; [ -n "${COLLECTIVES:-}" ] && name=$name-$coll
    t3 run --preset $p --dtype $d --devices "$devs" --collective $coll --chunks $c --mode sequential,host --reps 5 --warmup 2 ${LINKARG:-} $v --json "$out/$name.json" --svg "$out/$name.svg" --trace "$out/$name.trace.json" > "$out/$name.txt" 2>&1
    echo "$name rc=$?" >> "$out/rc.txt"
  done; done; done; done
  cat "$out/rc.txt"
  ;;
fused)
  # Issue 13: fused mode's variants against sequential, host and encoded on the four presets at TP 8,
  # 150 GB/s, f32 and f16, 1 chunk per rank. Encoded and host with --reduce forward (their best, run 6)
  # and with update (fused's semantics); fused's variants (--fused pieces, spares,
  # put, see core/src/lower/fused.rs and src/gemm.rs): the default = tiles stored plainly behind
  # the gates as relaxed atomic stores, the link's 16 pieces per transfer claimed by any workgroup,
  # spare workgroups past the GEMM's; FUSED_VARIANTS picks among coherent = a @coherent output
  # with 16-byte plain stores (run 20: slower on 7 of 8 points), atomic = native f32 atomic adds (run 13's default), cas = CAS
  # adds (the first fused mode's put), chunk = one workgroup per transfer (the first fused mode's
  # grain), split = no spares, spares1k = 1024 spares; and the default at 4 chunks per rank.
  t3 calibrate > /dev/null
  t3 run --preset tnlg-op-tp8 --dtype f16 --collective reduce-scatter --chunks 1 --mode sequential,encoded,fused --reps 20 --warmup 5 --no-verify > "$out/cache-fill.txt" 2>&1
  # FUSED_PRESETS splits the part over device calls (each under the 10-minute limit), e.g. the TNLG
  # presets in one and the GPT-3 ones in another.
  for p in ${FUSED_PRESETS:-tnlg-op-tp8 tnlg-fc2-tp8 gpt3-op-tp8 gpt3-fc2-tp8}; do for d in f32 f16; do
    v=""; [ $p = gpt3-fc2-tp8 ] && v="--no-verify"
    base="--preset $p --dtype $d --collective reduce-scatter --link-gbps 150 --reps 5 --warmup 1 --warmup-s 2 $v"
    t3 run $base --chunks 1 --reduce forward --mode sequential,host,encoded --json "$out/$p-$d-forward.json" > "$out/$p-$d-forward.txt" 2>&1
    t3 run $base --chunks 1 --reduce update --mode sequential,host,encoded,fused --json "$out/$p-$d-update.json" > "$out/$p-$d-update.txt" 2>&1
    for name in ${FUSED_VARIANTS:-coherent atomic cas chunk split spares1k}; do
      case $name in coherent) var="coherent link auto coherent";; store) var="store link auto store";; atomic) var="atomic link auto atomic";; cas) var="cas link auto cas";; chunk) var="chunk 1 0 auto";;
        split) var="split link 0 auto";; spares1k) var="spares1k link 1024 auto";; *) echo "unknown variant $name"; exit 2;; esac
      set -- $var
      t3 run --fused pieces=$2,spares=$3,put=$4 $base --chunks 1 --mode sequential,fused --json "$out/$p-$d-fused-$1.json" > "$out/$p-$d-fused-$1.txt" 2>&1
    done
    t3 run $base --chunks 4 --mode sequential,encoded,fused --json "$out/$p-$d-c4.json" > "$out/$p-$d-c4.txt" 2>&1
  done; done
  ;;
esac
