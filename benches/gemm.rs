//! Measures the tracked GEMM (StoreMode::Store) against the same GEMM with the tracker epilogue compiled
//! out (StoreMode::Untracked) on square M = N = K: median ms, TFLOP/s and the tracker overhead.
//!
//! Environment: T3_BENCH_SIZES (comma list, default "512"), T3_BENCH_CHUNKS (default 8),
//! T3_BENCH_REPS (default 5), T3_BENCH_SEED, T3_BENCH_JSON (file to append JSON lines to).

use std::io::Write;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use t3_wgpu::gemm::{GemmKernel, StoreMode, TrackedGemm};
use t3_wgpu::gpu::{Gpu, GpuOptions};
use t3_wgpu::reference::{self, Rng};
use t3_wgpu::shapes::Shape;

const WARMUP: u32 = 2;
/// Rows of C checked against f64 per size: the first, the last (the ragged edge), the rest random.
const CHECK_ROWS: usize = 8;
/// Looser than the tests' 1e-5: at K = 8192 the f32 accumulation error alone approaches 1e-6.
const MAX_REL_ERR: f64 = 1e-4;

fn main() -> ExitCode {
    // One line (with its causes) instead of anyhow's Debug form, which adds a backtrace when
    // RUST_BACKTRACE is set and buries the message.
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> anyhow::Result<()> {
    let sizes: Vec<usize> = env_list("T3_BENCH_SIZES", "512")?;
    let chunks: usize = env_one("T3_BENCH_CHUNKS", 8)?;
    let reps: u32 = env_one("T3_BENCH_REPS", 5)?;
    let seed: u64 = env_one("T3_BENCH_SEED", 0x7431_6e6d)?;
    let gpu = Gpu::new(&GpuOptions::default())
        .context("the gemm bench needs a GPU adapter (see WGPU_BACKEND, WGPU_ADAPTER_NAME)")?;
    let kernel = GemmKernel::new(&gpu)?;
    let clock = Clock::new(&gpu, reps)?;
    println!(
        "adapter: {}; timing: {}; {reps} reps after {WARMUP} warm-ups, medians; {chunks} chunks",
        gpu.describe(),
        clock.describe()
    );
    for n in sizes {
        let shape = Shape::new(n, n, n)?;
        let g = TrackedGemm::new(&gpu, &kernel, shape, chunks, None)
            .with_context(|| format!("setting up the {shape} GEMM"))?;
        let mut rng = Rng::new(seed ^ n as u64);
        let a = rng.fill(n * n);
        let b = rng.fill(n * n);
        g.upload(&gpu, &a, &b)?;

        let err_tracked = verify(&gpu, &kernel, &g, StoreMode::Store, &a, &b, &mut rng)?;
        let err_untracked = verify(&gpu, &kernel, &g, StoreMode::Untracked, &a, &b, &mut rng)?;
        let err = err_tracked.max(err_untracked);
        if err > MAX_REL_ERR || err.is_nan() {
            bail!("{shape}: max row relative error {err:.3e} over {MAX_REL_ERR:.0e} (tracked {err_tracked:.3e}, untracked {err_untracked:.3e})");
        }

        let bound = gpu.timeout_for(shape.flops(), 0.0);
        // reset = true: every rep starts from cleared counters, as a real run does; the clear is
        // recorded before the pass, so the pass timestamps leave it out.
        let time = |mode: StoreMode| {
            let what = format!("{shape} gemm ({mode:?})");
            clock.median_ms(&gpu, &what, reps, bound, |enc, ts| {
                g.encode(&gpu, &kernel, enc, mode, true, ts)
            })
        };
        let tracked = time(StoreMode::Store)?;
        let untracked = time(StoreMode::Untracked)?;
        let tflops = |ms: f64| shape.flops() / (ms * 1e-3) / 1e12;
        let overhead = tracked / untracked - 1.0;
        println!(
            "gemm {} n={n}: tracked {tracked:.3} ms ({:.3} TFLOP/s), untracked {untracked:.3} ms ({:.3} TFLOP/s), tracker overhead {:+.2}%; max rel err {err:.2e}",
            gpu.info.name,
            tflops(tracked),
            tflops(untracked),
            overhead * 100.0
        );
        json_line(&serde_json::json!({
            "bench": "gemm",
            "n": n,
            "chunks": chunks,
            "tracked_ms": tracked,
            "untracked_ms": untracked,
            "tflops_tracked": tflops(tracked),
            "tflops_untracked": tflops(untracked),
            "tracker_overhead": overhead,
            "max_rel_err": err,
            "clock": clock.kind(),
            "adapter": gpu.info.name,
        }))?;
    }
    Ok(())
}

/// Runs `mode` once on a poisoned C and returns the largest relative (Frobenius) error of sampled rows
/// against f64; for the tracked mode also checks that every chunk's counter reached its threshold.
fn verify(
    gpu: &Gpu,
    kernel: &GemmKernel,
    g: &TrackedGemm,
    mode: StoreMode,
    a: &[f32],
    b: &[f32],
    rng: &mut Rng,
) -> anyhow::Result<f64> {
    let Shape { m, n, k } = g.shape;
    g.fill_c(gpu, f32::NAN);
    g.run(gpu, kernel, mode, true)?;
    if mode == StoreMode::Store {
        let counters = g.read_counters(gpu)?;
        if counters != g.thresholds {
            bail!(
                "{}: tracker counters {counters:?}, expected {:?}",
                g.shape,
                g.thresholds
            );
        }
    }
    let mut rows = vec![0, m - 1];
    rows.extend((2..CHECK_ROWS.min(m)).map(|_| rng.below(m)));
    let mut worst = 0f64;
    for row in rows {
        let got = gpu.read_f32("a row of C", &g.c, (row * n * 4) as u64, n)?;
        let want = reference::gemm(&a[row * k..(row + 1) * k], b, 1, n, k);
        // rel_frobenius turns NaN (an unwritten, poisoned element) into infinity.
        worst = worst.max(reference::rel_frobenius(&got, &want));
    }
    Ok(worst)
}

/// Times compute passes with GPU timestamps where the adapter has TIMESTAMP_QUERY, else with the host
/// clock around submit + bounded wait (which then includes submission and wake-up latency).
struct Clock {
    ts: Option<Timestamps>,
}

struct Timestamps {
    set: wgpu::QuerySet,
    resolve: wgpu::Buffer,
    staging: wgpu::Buffer,
    period_ns: f64,
}

impl Clock {
    fn new(gpu: &Gpu, reps: u32) -> anyhow::Result<Self> {
        if reps == 0 || 2 * reps > wgpu::QUERY_SET_MAX_QUERIES {
            bail!(
                "T3_BENCH_REPS = {reps}: must be between 1 and {}",
                wgpu::QUERY_SET_MAX_QUERIES / 2
            );
        }
        if !gpu.has(wgpu::Features::TIMESTAMP_QUERY) {
            return Ok(Clock { ts: None });
        }
        let bytes = u64::from(2 * reps) * wgpu::QUERY_SIZE as u64;
        let buffer = |label, usage| {
            gpu.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: bytes,
                usage,
                mapped_at_creation: false,
            })
        };
        Ok(Clock {
            ts: Some(Timestamps {
                set: gpu.device.create_query_set(&wgpu::QuerySetDescriptor {
                    label: Some("bench timestamps"),
                    ty: wgpu::QueryType::Timestamp,
                    count: 2 * reps,
                }),
                resolve: buffer(
                    "bench timestamp resolve",
                    wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
                ),
                staging: buffer(
                    "bench timestamp readback",
                    wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                ),
                period_ns: f64::from(gpu.queue.get_timestamp_period()),
            }),
        })
    }

    fn kind(&self) -> &'static str {
        if self.ts.is_some() {
            "gpu"
        } else {
            "host"
        }
    }

    fn describe(&self) -> &'static str {
        if self.ts.is_some() {
            "GPU timestamps at compute-pass boundaries"
        } else {
            "host wall clock around submit + wait (adapter has no TIMESTAMP_QUERY)"
        }
    }

    /// Median ms of `reps` runs of the pass `record` encodes, after WARMUP untimed runs. With
    /// timestamps every rep is submitted without waiting and all are resolved in one readback after.
    fn median_ms(
        &self,
        gpu: &Gpu,
        what: &str,
        reps: u32,
        bound: Duration,
        record: impl Fn(&mut wgpu::CommandEncoder, Option<wgpu::ComputePassTimestampWrites<'_>>),
    ) -> anyhow::Result<f64> {
        let run = |ts| -> anyhow::Result<wgpu::SubmissionIndex> {
            let mut enc = gpu.device.create_command_encoder(&Default::default());
            record(&mut enc, ts);
            Ok(gpu.submit(what, vec![enc.finish()])?)
        };
        for _ in 0..WARMUP {
            let idx = run(None)?;
            gpu.wait(Some(idx), what, bound)?;
        }
        let Some(t) = &self.ts else {
            let mut ms = Vec::with_capacity(reps as usize);
            for _ in 0..reps {
                let t0 = Instant::now();
                let idx = run(None)?;
                gpu.wait(Some(idx), what, bound)?;
                ms.push(t0.elapsed().as_secs_f64() * 1e3);
            }
            return Ok(median(ms));
        };
        let mut last = None;
        for i in 0..reps {
            last = Some(run(Some(wgpu::ComputePassTimestampWrites {
                query_set: &t.set,
                beginning_of_pass_write_index: Some(2 * i),
                end_of_pass_write_index: Some(2 * i + 1),
            }))?);
        }
        gpu.wait(last, what, bound * reps)?;
        let mut enc = gpu.device.create_command_encoder(&Default::default());
        enc.resolve_query_set(&t.set, 0..2 * reps, &t.resolve, 0);
        enc.copy_buffer_to_buffer(&t.resolve, 0, &t.staging, 0, None);
        let idx = gpu.submit("resolving timestamps", vec![enc.finish()])?;
        let bytes = gpu.map_read("timestamps", &t.staging, idx, t.staging.size())?;
        let ticks: &[u64] = bytemuck::cast_slice(&bytes);
        let ms = ticks
            .chunks_exact(2)
            .map(|p| p[1].saturating_sub(p[0]) as f64 * t.period_ns / 1e6)
            .collect();
        Ok(median(ms))
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let h = v.len() / 2;
    if v.len() % 2 == 1 {
        v[h]
    } else {
        (v[h - 1] + v[h]) / 2.0
    }
}

fn env_one<T: std::str::FromStr>(name: &str, default: T) -> anyhow::Result<T> {
    match std::env::var(name) {
        Ok(s) if !s.trim().is_empty() => s
            .trim()
            .parse()
            .map_err(|_| anyhow::anyhow!("{name} = {s:?}: not a valid number")),
        _ => Ok(default),
    }
}

fn env_list<T: std::str::FromStr>(name: &str, default: &str) -> anyhow::Result<Vec<T>> {
    let s = std::env::var(name).unwrap_or_else(|_| default.to_string());
    s.split(',')
        .map(str::trim)
        .filter(|x| !x.is_empty())
        .map(|x| {
            x.parse()
                .map_err(|_| anyhow::anyhow!("{name} = {s:?}: {x:?} is not a valid number"))
        })
        .collect()
}

/// Appends `v` as one line to the file named by T3_BENCH_JSON, if set.
fn json_line(v: &serde_json::Value) -> anyhow::Result<()> {
    let Ok(path) = std::env::var("T3_BENCH_JSON") else {
        return Ok(());
    };
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .with_context(|| format!("opening T3_BENCH_JSON = {path}"))?;
    writeln!(f, "{v}").with_context(|| format!("writing {path}"))?;
    Ok(())
}
