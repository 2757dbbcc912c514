//! Measures the tracked GEMM (StoreMode::Store) against the same GEMM with the tracker epilogue compiled
//! out (StoreMode::Untracked): median ms, TFLOP/s and the tracker overhead.
//!
//! Flags after `--` (`cargo bench --bench gemm -- --help`): `--sizes` (a run of shapes that differ
//! only in K separates a tile's fixed cost, its prologue and epilogue, from its cost per slice),
//! `--dtypes`, `--kernel`, `--coopmat2-spv`, `--kernel-wgsl`, `--chunks`, `--grid`, `--seed`,
//! `--no-verify`, `--beside-copy-mib` (the GEMM beside a copy out of host memory), the timing's `--reps`, `--warmup-s`, `--settle-s`, `--debug`, and `--json FILE`.

mod common;

use common::*;
use std::process::ExitCode;
use t3_wgpu::stats::median;

use anyhow::{bail, Context};
use t3_wgpu::gemm::{Engine, GemmKernel, StoreMode};
use t3_wgpu::gpu::Gpu;
use t3_wgpu::reference::{self, Rng};
use t3_wgpu::shapes::{Dtype, Shape};
use t3_wgpu::tracked::TrackedGemm;

/// Rows of C checked against f64 per size: the first, the last (the ragged edge), the rest random.
const CHECK_ROWS: usize = 8;
/// Looser than the tests' 1e-5: at K = 8192 the f32 accumulation error alone approaches 1e-6.
const MAX_REL_ERR: f64 = 1e-4;

/// The tracked GEMM against the same GEMM with the tracker compiled out.
#[derive(clap::Parser, Debug)]
#[command(name = "bench-gemm")]
struct Args {
    /// GEMM shapes: N for N x N x N, or MxNxK (a comma list).
    #[arg(long, value_delimiter = ',', default_value = "512", value_parser = size)]
    sizes: Vec<Shape>,
    /// Operand types: f32, f16, bf16 (a comma list).
    #[arg(long, value_delimiter = ',', default_value = "f32", value_parser = dtype)]
    dtypes: Vec<Dtype>,
    /// The kernel: auto (the adapter's best per type), simt, coop, or coopmat2 (NVIDIA's
    /// cooperative_matrix2 through SPIR-V passthrough; not a `--gemm-kernel` of t3 yet).
    #[arg(long, default_value = "auto", value_parser = engine)]
    kernel: Choice,
    /// A coopmat2 variant built by scripts/coopmat2/spirv.sh with other macros, checked and timed
    /// as the kernel: TRACKED.spv,UNTRACKED.spv.
    #[arg(long, value_name = "TRACKED.spv,UNTRACKED.spv")]
    coopmat2_spv: Option<String>,
    /// WGSL files replacing the GEMM kernels, as t3's `--kernel-wgsl`: simt=FILE,coop=FILE.
    #[arg(long = "kernel-wgsl", value_name = "simt=FILE,coop=FILE", value_parser = kernel_files)]
    kernel_wgsl: Option<t3_wgpu::settings::KernelFiles>,
    /// Chunks the output is tracked in (fewer where the GEMM has fewer rows).
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u64).range(1..))]
    chunks: u64,
    /// The tracked GEMM on a persistent grid of this many workgroups looping over tiles (as
    /// `--gemm-grid` runs a pass's GEMM), checked like the rest: its cost against the untracked
    /// GEMM on a workgroup per tile. 0: a workgroup per tile.
    #[arg(long, default_value_t = 0)]
    grid: u32,
    /// Seed of the random operands.
    #[arg(long, default_value_t = 0x7431_6e6d)]
    seed: u64,
    /// Time without checking the result: for experimental kernels that leave C unwritten on
    /// purpose (to time a GEMM without its epilogue, say); the line says "unchecked".
    #[arg(long)]
    no_verify: bool,
    /// Also time each tracked GEMM beside a copy of this many MiB out of host memory into the
    /// device's (`copy_buffer_to_buffer`, encoded before and after the GEMM's pass, on the host
    /// clock): whether the queue's copy runs beside a pass, as a landing by copy would need. 0: not.
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u64).range(0..=4096))]
    beside_copy_mib: u64,
    #[command(flatten)]
    timing: Timing,
    #[command(flatten)]
    out: Out,
}

/// N for N x N x N, or MxNxK.
fn size(s: &str) -> Result<Shape, String> {
    match s.trim().parse::<usize>() {
        Ok(n) => Shape::new(n, n, n),
        Err(_) => Shape::parse(s),
    }
    .map_err(|e| e.to_string())
}

fn dtype(s: &str) -> Result<Dtype, String> {
    Dtype::parse(s).map_err(|e| e.to_string())
}

/// A kernel, or None for the adapter's best (a type of its own: clap reads a field of type Option
/// as an optional flag).
#[derive(Clone, Copy, Debug)]
struct Choice(Option<Engine>);

fn engine(s: &str) -> Result<Choice, String> {
    Engine::parse_bench(s)
        .map(Choice)
        .map_err(|e| e.to_string())
}

fn main() -> ExitCode {
    exit_code(run(clap::Parser::parse()))
}

fn run(args: Args) -> anyhow::Result<()> {
    let (shapes, engine, reps, seed, grid) = (
        &args.sizes,
        args.kernel.0,
        args.timing.reps,
        args.seed,
        args.grid,
    );
    let chunks = args.chunks as usize;
    // A coopmat2 build of the experiment's own: "TRACKED.spv,UNTRACKED.spv".
    let variant = match &args.coopmat2_spv {
        Some(v) => {
            let files: Vec<&str> = v.split(',').collect();
            let [t, u] = files[..] else {
                bail!("--coopmat2-spv {v}: two files, TRACKED.spv,UNTRACKED.spv");
            };
            let read = |f: &str| -> anyhow::Result<Vec<u32>> {
                Ok(t3_wgpu::coopmat2::words(
                    &std::fs::read(f).with_context(|| format!("--coopmat2-spv {f}"))?,
                )?)
            };
            Some([read(t)?, read(u)?])
        }
        None => None,
    };
    let gpu = Gpu::new(&gpu_options(args.kernel_wgsl.clone())?)
        .context("the gemm bench needs a GPU adapter (see WGPU_BACKEND, WGPU_ADAPTER_NAME)")?;
    let mut clock = Clock::new(&gpu, &args.timing)?;
    println!(
        "adapter: {}; timing: {}; {reps} reps after a warm-up until settled, medians; {chunks} chunks",
        gpu.describe(),
        clock.describe()
    );
    for &dtype in &args.dtypes {
        let kernel = match &variant {
            Some(spirv) => GemmKernel::coopmat2(&gpu, dtype, spirv.clone())?,
            None => GemmKernel::with(&gpu, dtype, engine)?,
        };
        for &shape in shapes {
            let run = Run {
                chunks,
                reps,
                seed,
                grid,
                checked: !args.no_verify,
                beside_copy: args.beside_copy_mib << 20,
            };
            bench_one(&gpu, &kernel, (&mut clock, &args.out), shape, &run)?;
        }
    }
    Ok(())
}

/// The knobs every size is benched with.
struct Run {
    chunks: usize,
    reps: u32,
    seed: u64,
    /// Workgroups of the tracked GEMM's persistent grid (0: a workgroup per tile).
    grid: u32,
    /// Whether the result is checked against f64 before it is timed.
    checked: bool,
    /// Bytes of the copy out of host memory timed beside the GEMM (0: none).
    beside_copy: u64,
}

/// Checks, then times, the tracked and untracked GEMM of one size.
fn bench_one(
    gpu: &Gpu,
    kernel: &GemmKernel,
    (clock, out): (&mut Clock, &Out),
    shape: Shape,
    run: &Run,
) -> anyhow::Result<()> {
    let &Run {
        chunks,
        reps,
        seed,
        grid,
        checked,
        beside_copy,
    } = run;
    let dtype = kernel.dtype;
    let Shape { m, n, k } = shape;
    // A chunk is at least a row: fewer rows than --chunks bench with a chunk per row, said so.
    let chunks = if chunks > m {
        println!("{shape}: {m} row(s), so {m} chunk(s) instead of --chunks {chunks}");
        m
    } else {
        chunks
    };
    let mut g = if grid == 0 {
        TrackedGemm::new(gpu, kernel, shape, chunks, None)
    } else {
        TrackedGemm::on_grid(gpu, kernel, shape, chunks, grid)
    }
    .with_context(|| format!("setting up the {shape} GEMM"))?;
    let mut rng = Rng::new(seed ^ (m * 31 + n * 7 + k) as u64);
    // Operands as the kernel holds them: the reference multiplies exactly what the device does.
    let mut fill =
        |len| -> Vec<f32> { rng.fill(len).into_iter().map(|v| dtype.round(v)).collect() };
    let a = fill(m * k);
    let b = fill(k * n);
    g.upload(&a, &b)?;

    let (err_tracked, err_untracked) = if checked {
        (
            verify(&mut g, StoreMode::Store, &a, &b, &mut rng)?,
            verify(&mut g, StoreMode::Untracked, &a, &b, &mut rng)?,
        )
    } else {
        (f64::NAN, f64::NAN)
    };
    let err = err_tracked.max(err_untracked);
    if checked && (err > MAX_REL_ERR || err.is_nan()) {
        bail!("{shape}: max row relative error {err:.3e} over {MAX_REL_ERR:.0e} (tracked {err_tracked:.3e}, untracked {err_untracked:.3e})");
    }

    let bound = gpu.timeout_for(shape.flops(), 0.0);
    // reset = true: every rep starts from cleared counters, as a real run does; the clear is
    // recorded before the pass, so the pass timestamps leave it out.
    let mut time = |mode: StoreMode| {
        let what = format!("{shape} gemm ({mode:?})");
        let ms = clock.times_ms(gpu, &what, reps, bound, |enc, ts| {
            g.encode(enc, mode, true, ts)
        })?;
        anyhow::Ok((ms, clock.last_warmup()))
    };
    let (tracked_all, warm_tracked) = time(StoreMode::Store)?;
    let (untracked_all, warm_untracked) = time(StoreMode::Untracked)?;
    let range = |v: &[f64]| {
        v.iter()
            .fold((f64::MAX, 0f64), |(l, h), &x| (l.min(x), h.max(x)))
    };
    let spread = |v: &[f64]| {
        let (lo, hi) = range(v);
        format!("{lo:.3}..{hi:.3}")
    };
    let (tracked, untracked) = (median(&tracked_all), median(&untracked_all));
    let tflops = |ms: f64| shape.flops() / (ms * 1e-3) / 1e12;
    let overhead = tracked / untracked - 1.0;
    // Every tracked rep faster than every untracked one: the two builds compile differently (the
    // unguarded SIMT kernel's untracked build, at 118 registers, is slower), so the difference
    // is no cost of tracking, and the figure says so rather than pass for one.
    let builds_differ = range(&tracked_all).1 < range(&untracked_all).0;
    let overhead_text = if builds_differ {
        format!(
            "{:+.2}% (every untracked rep slower: the builds differ, no tracking cost measured)",
            overhead * 100.0
        )
    } else {
        format!("{:+.2}%", overhead * 100.0)
    };
    // On a grid, "overhead" is the grid's cost (and the tracker's) against a workgroup per tile.
    let on_grid = g
        .grid_wg()
        .map_or(String::new(), |w| format!(" on a grid of {w} workgroups"));
    println!(
        "gemm {} {} ({}) {shape}: tracked{on_grid} {tracked:.3} ms ({:.3} TFLOP/s; reps {}; {}), untracked {untracked:.3} ms ({:.3} TFLOP/s; reps {}; {}), tracker overhead {overhead_text}; {}",
        gpu.info.name,
        dtype.name(),
        kernel.engine.name(),
        tflops(tracked),
        spread(&tracked_all),
        warmup_text(&warm_tracked),
        tflops(untracked),
        spread(&untracked_all),
        warmup_text(&warm_untracked),
        if checked {
            format!("max rel err {err:.2e}")
        } else {
            "unchecked".to_string()
        }
    );
    out.line(&serde_json::json!({
        "bench": "gemm",
        "n": n,
        "m": m,
        "k": k,
        "dtype": dtype.name(),
        "kernel": kernel.engine.name(),
        "chunks": chunks,
        "grid_wg": g.grid_wg(),
        "tracked_ms": tracked,
        "tracked_reps_ms": tracked_all,
        "untracked_reps_ms": untracked_all,
        "untracked_ms": untracked,
        "tracked_warmup": warm_tracked,
        "untracked_warmup": warm_untracked,
        "tflops_tracked": tflops(tracked),
        "tflops_untracked": tflops(untracked),
        "tracker_overhead": overhead,
        "builds_differ": builds_differ,
        "max_rel_err": if checked { Some(err) } else { None },
        "clock": clock.kind(),
        "adapter": gpu.info.name,
    }))?;
    if beside_copy > 0 {
        beside_a_copy(gpu, &mut g, (shape, beside_copy, reps), out)?;
    }
    Ok(())
}

/// Times, on the host clock (submission to completion, medians of `reps`), the tracked GEMM alone,
/// a copy of `bytes` out of imported host memory into the device's alone, and both in one
/// submission with the copy before and after the GEMM's pass: a pair near the longer of the two
/// alone ran side by side, near their sum one after the other.
fn beside_a_copy(
    gpu: &Gpu,
    g: &mut TrackedGemm,
    (shape, bytes, reps): (Shape, u64, u32),
    out: &Out,
) -> anyhow::Result<()> {
    use t3_wgpu::timestamps::{time_series, Timestamps};
    // SAFETY: one device alone reads this host memory, after the host wrote nothing to it.
    let shared = unsafe { t3_wgpu::hostlink::shared::import(&[&gpu.device], "beside copy", bytes) }
        .context("importing host memory for --beside-copy-mib (VK_EXT_external_memory_host)")?;
    let host = &shared.views[0];
    use wgpu::BufferUsages as U;
    let dev = gpu.buffer(
        "beside copy landing",
        bytes,
        U::STORAGE | U::COPY_DST | U::COPY_SRC,
    )?;
    let bound = gpu.timeout_for(shape.flops(), 2.0 * bytes as f64);
    // What one submission encodes: the copy before the GEMM's pass, the GEMM, the copy after.
    let mut time = |what: &str, (before, gemm, after): (bool, bool, bool)| -> anyhow::Result<f64> {
        let mut ms = Vec::new();
        for _ in 0..=reps {
            let span = time_series(
                gpu,
                &mut Timestamps::host_clock(),
                what,
                1,
                bound,
                |enc, _| {
                    if before {
                        enc.copy_buffer_to_buffer(host, 0, &dev, 0, bytes);
                    }
                    if gemm {
                        g.encode(enc, StoreMode::Store, true, None)?;
                    }
                    if after {
                        enc.copy_buffer_to_buffer(host, 0, &dev, 0, bytes);
                    }
                    Ok(())
                },
            )?[0];
            ms.push((span.1 - span.0) / 1e3);
        }
        Ok(median(&ms[1..]))
    };
    // Each time holds one submission's round trip; the sum of two alone holds it twice.
    let empty = time("an empty submission", (false, false, false))?;
    let gemm = time("the gemm alone", (false, true, false))?;
    let copy = time("the copy alone", (true, false, false))?;
    let before = time("the copy, then the gemm", (true, true, false))?;
    let after = time("the gemm, then the copy", (false, true, true))?;
    let gbps = bytes as f64 / ((copy - empty).max(1e-6) * 1e-3) / 1e9;
    println!(
        "  beside a {} MiB copy out of host memory (host clock, an empty submission {empty:.3} ms): gemm alone {gemm:.3} ms, copy alone {copy:.3} ms ({gbps:.1} GB/s); copy then gemm {before:.3} ms, gemm then copy {after:.3} ms (side by side would be {:.3}, one after the other {:.3})",
        bytes >> 20,
        gemm.max(copy),
        gemm + copy - empty
    );
    out.line(&serde_json::json!({
        "bench": "gemm beside copy",
        "m": shape.m, "n": shape.n, "k": shape.k,
        "bytes": bytes,
        "empty_ms": empty,
        "gemm_ms": gemm,
        "copy_ms": copy,
        "copy_then_gemm_ms": before,
        "gemm_then_copy_ms": after,
        "adapter": gpu.info.name,
    }))?;
    beside_side_queues(gpu, g, (shape, bytes, reps), (&shared, &dev), out)
}

/// Times, on the host clock, copies on the side queues the device has (src/sidequeue.rs) beside the
/// tracked GEMM on wgpu's queue: into the device out of host memory (a landing), out of the device
/// into host memory (a send), both in one submission, and (with two transfer queues) each on its own;
/// each alone, then submitted together with the GEMM: when each ends against the GEMM alone says
/// whether the copies ran beside it and what they cost it. Every copy's bytes are checked after its
/// last run.
fn beside_side_queues(
    gpu: &Gpu,
    g: &mut TrackedGemm,
    (shape, bytes, reps): (Shape, u64, u32),
    (shared, dev): (&t3_wgpu::hostlink::shared::Shared, &wgpu::Buffer),
    out: &Out,
) -> anyhow::Result<()> {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    use t3_wgpu::sidequeue::{Copy, Side, SideQueue};
    use wgpu::BufferUsages as U;
    type Jobs<'q, 'b, 'c> = [(&'q mut SideQueue, &'b [Copy<'c>])];
    let mut queues: Vec<SideQueue> = Side::ALL
        .into_iter()
        .filter_map(|side| {
            let q = SideQueue::new(&gpu.device, side, 1);
            if q.is_none() {
                println!("  no {} queue beside wgpu's on this device", side.name());
            }
            q
        })
        .collect();
    if queues.is_empty() {
        return Ok(());
    }
    let bound = gpu.timeout_for(shape.flops(), 2.0 * bytes as f64);
    let host = &shared.views[0];
    // The send's source and the landing's destination are other buffers than the landing's source
    // and the send's destination, so that both at once touch four.
    let half = bytes / 2;
    let out_dev = gpu.buffer(
        "side copy source",
        half,
        U::STORAGE | U::COPY_DST | U::COPY_SRC,
    )?;
    let land = Copy {
        src: host,
        src_offset: 0,
        dst: dev,
        dst_offset: 0,
        size: half,
    };
    let send = Copy {
        src: &out_dev,
        src_offset: 0,
        dst: host,
        dst_offset: half,
        size: half,
    };
    // Patterns the checks find: host memory's first half for the landing, the device buffer for
    // the send.
    let pattern = |salt: u32| -> Vec<u32> {
        (0..half / 4)
            .map(|i| (i as u32).wrapping_mul(2_654_435_761) ^ salt)
            .collect()
    };
    let (land_words, send_words) = (pattern(0x1a2b_3c4d), pattern(0x5e6f_7081));
    let land_bytes: &[u8] = bytemuck::cast_slice(&land_words);
    // SAFETY: the allocation holds at least `bytes` (its size rounded up), and no device touches
    // it yet.
    unsafe { std::ptr::copy_nonoverlapping(land_bytes.as_ptr(), shared.host(), land_bytes.len()) };
    gpu.queue
        .write_buffer(&out_dev, 0, bytemuck::cast_slice(&send_words));
    gpu.wait(
        Some(gpu.submit("side copy source", vec![])?),
        "side copy source",
        bound,
    )?;
    // One run: the GEMM (where `gemm`) and each job's copies on its queue, submitted together;
    // when the GEMM and the last copy ended, ms after the first submission.
    let mut once = |gemm: bool, jobs: &mut Jobs| -> anyhow::Result<(f64, f64)> {
        let t0 = std::time::Instant::now();
        let done = Arc::new(AtomicBool::new(!gemm));
        if gemm {
            let mut enc = gpu.device.create_command_encoder(&Default::default());
            g.encode(&mut enc, StoreMode::Store, true, None)?;
            gpu.submit("the gemm beside a side queue's copy", vec![enc.finish()])?;
            let d = done.clone();
            gpu.queue
                .on_submitted_work_done(move || d.store(true, Ordering::Release));
        }
        let mut tickets = Vec::new();
        for (q, copies) in jobs.iter_mut() {
            tickets.push(q.copy(copies)?);
        }
        let (mut g_end, mut c_end) = (None, None);
        while g_end.is_none() || c_end.is_none() {
            if t0.elapsed() > bound {
                bail!("the gemm and the side queues' copies: not done after {bound:?}");
            }
            let _ = gpu.device.poll(wgpu::PollType::Poll);
            let ms = t0.elapsed().as_secs_f64() * 1e3;
            if g_end.is_none() && done.load(Ordering::Acquire) {
                g_end = Some(if gemm { ms } else { 0.0 });
            }
            let mut all = true;
            for ((q, _), &t) in jobs.iter_mut().zip(&tickets) {
                all &= q.done(t)?;
            }
            if c_end.is_none() && all {
                c_end = Some(if jobs.is_empty() { 0.0 } else { ms });
            }
        }
        Ok((g_end.unwrap_or(0.0), c_end.unwrap_or(0.0)))
    };
    let mut median_of = |gemm: bool, jobs: &mut Jobs| -> anyhow::Result<(f64, f64)> {
        let mut v = Vec::new();
        for _ in 0..=reps {
            v.push(once(gemm, jobs)?);
        }
        let (a, b): (Vec<f64>, Vec<f64>) = v[1..].iter().copied().unzip();
        Ok((median(&a), median(&b)))
    };
    let gbps = |ms: f64, n: u64| n as f64 / (ms.max(1e-6) * 1e-3) / 1e9;
    let (gemm, _) = median_of(true, &mut [])?;
    println!(
        "  beside side queues, {} MiB each way, host clock: gemm alone {gemm:.3} ms",
        half >> 20
    );
    let both = [land, send];
    let mut line = |what: String, jobs: &mut Jobs| -> anyhow::Result<()> {
        let (_, alone) = median_of(false, jobs)?;
        let (g_end, c_end) = median_of(true, jobs)?;
        println!(
            "    {what}: alone {alone:.3} ms ({:.1} GB/s each way); beside the gemm: the gemm ends at {g_end:.3} ms ({:+.1}%), the copies at {c_end:.3} ({:.1} GB/s each way)",
            gbps(alone, half),
            100.0 * (g_end / gemm - 1.0),
            gbps(c_end, half)
        );
        out.line(&serde_json::json!({
            "bench": "gemm beside side queues' copies",
            "copies": what,
            "m": shape.m, "n": shape.n, "k": shape.k,
            "bytes_each_way": half,
            "gemm_ms": gemm,
            "copy_alone_ms": alone,
            "gemm_end_ms": g_end,
            "copy_end_ms": c_end,
            "adapter": gpu.info.name,
        }))?;
        Ok(())
    };
    for q in queues.iter_mut() {
        let name = format!("{} queue (family {})", q.side.name(), q.family);
        line(
            format!("landing on the {name}"),
            &mut [(&mut *q, &both[..1])],
        )?;
        line(format!("send on the {name}"), &mut [(&mut *q, &both[1..])])?;
        line(format!("both on the {name}"), &mut [(&mut *q, &both[..])])?;
    }
    if let [.., a, b] = &mut queues[..] {
        if matches!((a.side, b.side), (Side::Transfer(0), Side::Transfer(1))) {
            line(
                "the landing on transfer 0, the send on transfer 1".into(),
                &mut [(a, &both[..1]), (b, &both[1..])],
            )?;
        }
    }
    // The checks: the landing's bytes in the device buffer, the send's in host memory.
    let landed = gpu.read("the side queues' landing", dev, 0, half)?;
    if landed.as_slice() != bytemuck::cast_slice::<u32, u8>(&land_words) {
        bail!("a side queue's landing: the device buffer differs from host memory");
    }
    // SAFETY: inside the allocation, and every copy that wrote it completed.
    let sent =
        unsafe { std::slice::from_raw_parts(shared.host().add(half as usize), half as usize) };
    if sent != bytemuck::cast_slice::<u32, u8>(&send_words) {
        bail!("a side queue's send: host memory differs from the device buffer");
    }
    println!("    checked: every byte landed and sent");
    Ok(())
}

/// Runs `mode` once on a poisoned C and returns the largest relative (Frobenius) error of sampled rows
/// against f64; for the tracked mode also checks that every chunk's counter reached its threshold.
fn verify(
    g: &mut TrackedGemm,
    mode: StoreMode,
    a: &[f32],
    b: &[f32],
    rng: &mut Rng,
) -> anyhow::Result<f64> {
    let Shape { m, n, k } = g.shape;
    g.fill_c(f32::NAN)?;
    g.run(mode, true)?;
    if mode == StoreMode::Store {
        let counters = g.read_counters()?;
        if counters != g.lowering.thresholds {
            bail!(
                "{}: tracker counters {counters:?}, expected {:?}",
                g.shape,
                g.lowering.thresholds
            );
        }
    }
    let mut rows = vec![0, m - 1];
    rows.extend((2..CHECK_ROWS.min(m)).map(|_| rng.below(m)));
    let mut worst = 0f64;
    for row in rows {
        let got = g.read_rows(row..row + 1)?;
        let want = reference::gemm(&a[row * k..(row + 1) * k], b, 1, n, k);
        // rel_frobenius turns NaN (an unwritten, poisoned element) into infinity.
        worst = worst.max(reference::rel_frobenius(&got, &want));
    }
    Ok(worst)
}
