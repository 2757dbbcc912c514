//! What the benchmarks share: their common flags (read with clap after `--`: `cargo bench --bench
//! NAME -- --help`), the pass clock (GPU timestamps or host clock) and its warm-up by stability, JSON
//! lines.
#![allow(dead_code)]

use std::io::Write;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use t3_wgpu::gpu::{Gpu, GpuOptions};
use t3_wgpu::settings::KernelFiles;
pub use t3_wgpu::stats::{Settle, Warmup};
use t3_wgpu::timestamps::{time_series, Timestamps};

/// Least untimed runs before the timed ones (pipeline warm-up, clocks); see [`Clock::warm_up`].
pub const WARMUP: u32 = 2;

/// What every bench takes: where its JSON lines go.
#[derive(clap::Args, Debug)]
pub struct Out {
    /// Append one JSON line per measurement to FILE.
    #[arg(long, value_name = "FILE")]
    pub json: Option<String>,
    /// What `cargo bench` passes every `harness = false` target (nothing to do here).
    #[arg(long, hide = true)]
    pub bench: bool,
}

impl Out {
    /// Appends `v` as one line to the `--json` file, if one was given.
    pub fn line(&self, v: &serde_json::Value) -> anyhow::Result<()> {
        let Some(path) = &self.json else {
            return Ok(());
        };
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .with_context(|| format!("opening --json {path}"))?;
        writeln!(f, "{v}").with_context(|| format!("writing {path}"))?;
        Ok(())
    }
}

/// How the timing benches (gemm, steps) time a pass.
#[derive(clap::Args, Debug, Clone)]
pub struct Timing {
    /// Timed repetitions per measurement (medians reported).
    #[arg(long, default_value_t = 5, value_parser = reps)]
    pub reps: u32,
    /// Least seconds each pass warms up before it is timed (at most 600).
    #[arg(long, default_value_t = 1.0, value_parser = seconds)]
    pub warmup_s: f64,
    /// Then at most this many seconds more until its last 5 times lie within 10% of their median.
    #[arg(long, default_value_t = 10.0, value_parser = seconds)]
    pub settle_s: f64,
    /// Print every rep's span on the GPU clock (gaps and overlaps show).
    #[arg(long)]
    pub debug: bool,
}

/// Repetitions one query set holds (a begin and an end timestamp each).
pub fn reps(s: &str) -> Result<u32, String> {
    let max = wgpu::QUERY_SET_MAX_QUERIES / 2;
    match s.trim().parse::<u32>() {
        Ok(n) if (1..=max).contains(&n) => Ok(n),
        _ => Err(format!("'{s}': an integer from 1 to {max}")),
    }
}

/// Seconds in [0, 600].
pub fn seconds(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if (0.0..=600.0).contains(&v) => Ok(v),
        _ => Err(format!("'{s}': seconds from 0 to 600")),
    }
}

/// `--kernel-wgsl simt=FILE,coop=FILE`, as `t3` takes it.
pub fn kernel_files(s: &str) -> Result<KernelFiles, String> {
    KernelFiles::parse(s).map_err(|e| e.to_string())
}

/// The options a bench opens its GPU with: the environment's (WGPU_*, T3_TIMEOUT_S, T3_SMS), and
/// the kernel files its flags name.
pub fn gpu_options(kernels: Option<KernelFiles>) -> anyhow::Result<GpuOptions> {
    Ok(t3_wgpu::settings::with_environment(GpuOptions {
        kernels: kernels.unwrap_or_default(),
        ..Default::default()
    })?)
}

/// What one timed run encodes (its pass's timestamps handed in).
type Record<'r> = dyn FnMut(
        &mut wgpu::CommandEncoder,
        Option<wgpu::ComputePassTimestampWrites<'_>>,
    ) -> t3_wgpu::Result<()>
    + 'r;

/// Times compute passes with GPU timestamps where the adapter has TIMESTAMP_QUERY, else with the host
/// clock around submit + bounded wait (which then includes submission and wake-up latency).
pub struct Clock {
    timer: Timestamps,
    warmup: Option<Warmup>,
    timing: Timing,
}

impl Clock {
    pub fn new(gpu: &Gpu, timing: &Timing) -> anyhow::Result<Self> {
        let reps = timing.reps;
        if reps == 0 || 2 * reps > wgpu::QUERY_SET_MAX_QUERIES {
            bail!(
                "--reps {reps}: must be between 1 and {}",
                wgpu::QUERY_SET_MAX_QUERIES / 2
            );
        }
        Ok(Clock {
            timer: Timestamps::new(gpu, reps),
            warmup: None,
            timing: timing.clone(),
        })
    }

    /// Runs the pass until its times settle ([`Settle`]: the last 5 within 10% of their median),
    /// after at least WARMUP runs and `--warmup-s` seconds (default 1), for at most `--settle-s`
    /// seconds more (default 10). NVIDIA's driver swaps a background-optimised
    /// build of a new pipeline in after a while (2-7x faster for the cooperative-matrix GEMM,
    /// BENCHMARKS.md), so a short warm-up times the first build. Each warm-up run is timed alone
    /// (GPU timestamps, resolved in the run's own submission, read back per run where the adapter has
    /// them, else the host clock).
    fn warm_up(
        &mut self,
        gpu: &Gpu,
        what: &str,
        bound: Duration,
        record: &mut Record<'_>,
    ) -> anyhow::Result<()> {
        let (least, most) = (
            Duration::from_secs_f64(self.timing.warmup_s),
            Duration::from_secs_f64(self.timing.settle_s),
        );
        let settle = Settle::default();
        let t0 = Instant::now();
        let mut us = Vec::new();
        let mut at = Vec::new();
        while us.len() < WARMUP as usize
            || t0.elapsed() < least
            || (t0.elapsed() < least + most && !settle.settled(&us))
        {
            at.push(t0.elapsed().as_secs_f64());
            let span = time_series(gpu, &mut self.timer, what, 1, bound, &mut *record)?[0];
            us.push(span.1 - span.0);
        }
        let since = settle.settled_since(&us);
        self.warmup = Some(Warmup {
            what: what.into(),
            runs: us.len(),
            seconds: since.map_or(t0.elapsed().as_secs_f64(), |i| at[i]),
            settled: since.is_some(),
        });
        Ok(())
    }

    /// How the last [`Clock::times_ms`] call's warm-up went.
    pub fn last_warmup(&mut self) -> Warmup {
        self.warmup.take().unwrap_or(Warmup {
            what: String::new(),
            runs: 0,
            seconds: 0.0,
            settled: false,
        })
    }

    pub fn kind(&self) -> &'static str {
        if self.timer.gpu_clock() {
            "gpu"
        } else {
            "host"
        }
    }

    pub fn describe(&self) -> &'static str {
        if self.timer.gpu_clock() {
            "GPU timestamps at compute-pass boundaries"
        } else {
            "host wall clock around submit + wait (adapter has no TIMESTAMP_QUERY)"
        }
    }

    /// Ms of each of `reps` runs of the pass `record` encodes, in order, after the warm-up runs
    /// ([`Clock::warm_up`]; [`Clock::last_warmup`] says how it went). With timestamps every rep is
    /// submitted without waiting and the last one resolves them all for one readback after.
    pub fn times_ms(
        &mut self,
        gpu: &Gpu,
        what: &str,
        reps: u32,
        bound: Duration,
        mut record: impl FnMut(
            &mut wgpu::CommandEncoder,
            Option<wgpu::ComputePassTimestampWrites<'_>>,
        ) -> t3_wgpu::Result<()>,
    ) -> anyhow::Result<Vec<f64>> {
        self.warm_up(gpu, what, bound, &mut record)?;
        let spans = time_series(gpu, &mut self.timer, what, reps, bound, &mut record)?;
        if self.timing.debug {
            // Every rep's begin..end from the first begin: gaps and overlaps show.
            let text: Vec<String> = spans
                .iter()
                .map(|s| format!("{:.3}..{:.3}", s.0 / 1e3, s.1 / 1e3))
                .collect();
            eprintln!("{what}: {}", text.join(" "));
        }
        Ok(spans.iter().map(|s| (s.1 - s.0) / 1e3).collect())
    }
}

/// A bench's exit: on error one line (with its causes) instead of anyhow's Debug form, which adds a
/// backtrace when RUST_BACKTRACE is set and buries the message.
pub fn exit_code(r: anyhow::Result<()>) -> std::process::ExitCode {
    match r {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// "warm-up 12 runs, settled at 1.20 s" or "... NOT settled in 11.00 s".
pub fn warmup_text(w: &Warmup) -> String {
    if w.settled {
        format!("warm-up {} runs, settled at {:.2} s", w.runs, w.seconds)
    } else {
        format!("warm-up {} runs, NOT settled in {:.2} s", w.runs, w.seconds)
    }
}
