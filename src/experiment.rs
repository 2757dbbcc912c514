//! One experiment: build the system, verify every mode against the f64 reference and its trackers,
//! time warm-up and repetitions, and turn the medians into the metrics every run reports.

use std::collections::HashMap;

use serde::Serialize;

use crate::error::{Error, Result};
use crate::gemm::{Engine, StoreMode};
use crate::gpu::Gpu;
use crate::modes::{self, run_passes, Config, Kernels, Mode, System};
use crate::plan::key;
use crate::ranks::{finished, Inputs};
use crate::reference::{rel_frobenius, Rng};
use crate::timeline::Timeline;

/// How results are checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verify {
    /// Every finished row against the reference, plus every tracker counter.
    Full,
    /// A random sample of finished rows (for shapes whose reference would take long), plus every counter.
    Sample(usize),
    /// No check.
    Off,
}

/// Everything `t3 run` asks for.
#[derive(Clone, Debug)]
pub struct Options {
    pub config: Config,
    pub modes: Vec<String>,
    pub reps: usize,
    pub warmup: usize,
    pub seed: u64,
    /// `None` picks Full below about 2 GFLOP of reference work, else a 64-row sample.
    pub verify: Option<Verify>,
}

/// One mode's line of the report.
#[derive(Clone, Debug, Serialize)]
pub struct ModeResult {
    pub mode: String,
    pub median_ms: Option<f64>,
    pub speedup: Option<f64>,
    pub overlap_efficiency: Option<f64>,
    pub bytes_moved: u64,
    pub max_rel_error: Option<f64>,
    pub trackers_ok: Option<bool>,
    pub trigger_latency_median_us: Option<f64>,
    pub trigger_latency_p99_us: Option<f64>,
    pub skipped: Option<String>,
}

/// The report of one experiment (the `--json` object).
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub adapter: String,
    pub config: Config,
    /// The kernel that computed the GEMMs.
    pub gemm_kernel: Engine,
    pub chunk_bounds: Vec<usize>,
    pub reps: usize,
    pub warmup: usize,
    pub seed: u64,
    pub verify: Verify,
    pub grain: String,
    pub t_gemm_ms: f64,
    pub t_gemm_untracked_ms: f64,
    pub tracker_overhead: f64,
    pub t_comm_ms: f64,
    pub t_seq_ms: f64,
    pub ideal_ms: f64,
    pub device_memory_bytes: u64,
    pub gemm_tflops: f64,
    pub results: Vec<ModeResult>,
    #[serde(skip)]
    pub timelines: Vec<Timeline>,
}

pub fn median(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn percentile(v: &mut [f64], q: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    v[((v.len() - 1) as f64 * q).round() as usize]
}

/// Checks every finished output against the reference (all rows or a sample) and every tracker
/// against its threshold. Returns (max relative error, trackers ok).
pub fn check(sys: &System, inputs: &Inputs, verify: Verify) -> Result<(f64, bool)> {
    let counters = sys.ranks.read_counters(sys.gpu)?;
    let trackers_ok = counters
        .iter()
        .all(|(l, v)| sys.plan.thresholds.get(&key(*l)) == Some(v));
    let (shape, coll, ch) = (sys.config.shape, sys.config.collective, &sys.chunking);
    let done = finished(coll, ch);
    let mut worst = 0f64;
    let mut reference: HashMap<usize, Vec<f64>> = HashMap::new();
    let mut want_row = |row: usize| -> Vec<f64> {
        reference
            .entry(row)
            .or_insert_with(|| inputs.expected_row(shape, coll, ch, row))
            .clone()
    };
    match verify {
        Verify::Off => {}
        Verify::Full => {
            for &(p, x) in &done {
                let rows = ch.rows(x);
                let got = sys.ranks.read_rows(sys.gpu, p, x, 0..rows.len())?;
                let want: Vec<f64> = rows.flat_map(&mut want_row).collect();
                worst = worst.max(rel_frobenius(&got, &want));
            }
        }
        Verify::Sample(count) => {
            let mut rng = Rng::new(inputs.seed ^ 0x5A5A);
            for _ in 0..count {
                let (p, x) = done[rng.below(done.len())];
                let rows = ch.rows(x);
                let r = rng.below(rows.len());
                let got = sys.ranks.read_rows(sys.gpu, p, x, r..r + 1)?;
                worst = worst.max(rel_frobenius(&got, &want_row(rows.start + r)));
            }
        }
    }
    Ok((worst, trackers_ok))
}

/// The reference work of a full check, in multiply-adds.
fn reference_work(c: &Config) -> f64 {
    c.total_flops() / 2.0
}

/// Validates `opts`, builds the system and uploads fresh inputs.
pub fn prepare<'a>(
    gpu: &'a Gpu,
    kernels: &'a Kernels,
    opts: &Options,
) -> Result<(System<'a>, Inputs)> {
    for m in &opts.modes {
        if !modes::names().contains(&m.as_str()) {
            return Err(Error::invalid(
                "mode",
                m,
                format!("one of {}", modes::names().join(", ")),
            ));
        }
    }
    if opts.reps == 0 {
        return Err(Error::invalid("repetition count", 0, "at least 1"));
    }
    opts.config.check_memory(
        gpu.info.device_type == wgpu::DeviceType::Cpu,
        crate::validate::available_host_memory(),
    )?;
    let sys = System::new(gpu, kernels, opts.config.clone())?;
    let inputs = Inputs::random(
        opts.config.shape,
        opts.config.dtype,
        opts.config.collective,
        &sys.chunking,
        opts.seed,
    );
    sys.ranks.upload(gpu, &inputs);
    Ok((sys, inputs))
}

/// Runs the experiment end to end.
pub fn run(gpu: &Gpu, kernels: &Kernels, opts: &Options) -> Result<Report> {
    let (sys, inputs) = prepare(gpu, kernels, opts)?;
    measure(&sys, &inputs, opts)
}

/// Verifies and times every requested mode on a prepared system.
pub fn measure(sys: &System, inputs: &Inputs, opts: &Options) -> Result<Report> {
    let gpu = sys.gpu;
    let all = modes::all();
    let verify = opts
        .verify
        .unwrap_or(if reference_work(&opts.config) <= 1e9 {
            Verify::Full
        } else {
            Verify::Sample(64)
        });

    // Modes to run: sequential always (it defines T_seq and T_comm), then the requested ones.
    let seq: &dyn Mode = &modes::Sequential;
    let order: Vec<&dyn Mode> = std::iter::once(seq)
        .chain(
            all.iter()
                .filter(|m| m.name() != "sequential" && opts.modes.iter().any(|n| n == m.name()))
                .map(|m| m.as_ref()),
        )
        .collect();
    let mut skipped: Vec<Option<String>> = order.iter().map(|m| m.skip_reason(sys)).collect();
    // Checks first, on poisoned outputs.
    let mut checks: Vec<(Option<f64>, Option<bool>)> = vec![(None, None); order.len()];
    if verify != Verify::Off {
        for (i, m) in order.iter().enumerate() {
            if skipped[i].is_none() {
                sys.ranks.poison(gpu);
                m.run(sys)?;
                let (e, ok) = check(sys, inputs, verify)?;
                checks[i] = (Some(e), Some(ok));
            }
        }
    }
    // Repetitions interleave the baselines and every mode, so that a drift of the GPU's clocks over
    // the run (seen on an H200 under a long fp32 load) shifts all of them alike.
    let (seq_passes, stages) = modes::sequential::passes(sys);
    let gemm_passes = &seq_passes[..stages];
    let span = |t: &[(f64, f64)]| {
        t.last().map(|l| l.1).unwrap_or(0.0) - t.first().map(|f| f.0).unwrap_or(0.0)
    };
    let mut tg = Vec::new();
    let mut tgu = Vec::new();
    let mut totals: Vec<Vec<f64>> = vec![Vec::new(); order.len()];
    let mut comms = Vec::new();
    let mut lats: Vec<Vec<f64>> = vec![Vec::new(); order.len()];
    let mut last: Vec<Option<crate::modes::Run>> = vec![None; order.len()];
    for rep in 0..opts.warmup + opts.reps {
        let keep = rep >= opts.warmup;
        let a = run_passes(sys, gemm_passes, StoreMode::Store, "gemm alone (tracked)")?;
        let b = run_passes(
            sys,
            gemm_passes,
            StoreMode::Untracked,
            "gemm alone (untracked)",
        )?;
        if keep {
            tg.push(span(&a));
            tgu.push(span(&b));
        }
        for (i, m) in order.iter().enumerate() {
            if skipped[i].is_some() {
                continue;
            }
            let r = m.run(sys)?;
            if keep {
                totals[i].push(r.total_us);
                comms.extend(r.comm_us);
                lats[i].extend(r.trigger_latency_us.iter().copied());
                last[i] = Some(r);
            }
        }
    }
    let t_gemm = median(&mut tg) / 1e3;
    let t_gemm_untracked = median(&mut tgu) / 1e3;
    let t_seq = median(&mut totals[0]) / 1e3;
    let t_comm = median(&mut comms) / 1e3;
    let ideal = t_gemm.max(t_comm);
    let grain = last[0]
        .as_ref()
        .map(|r| r.timeline.grain.clone())
        .unwrap_or_default();
    let mut results = Vec::new();
    let mut timelines = Vec::new();
    for (i, m) in order.iter().enumerate() {
        if !opts.modes.iter().any(|n| n == m.name()) {
            continue;
        }
        let (err, trackers_ok) = checks[i];
        if let Some(reason) = skipped[i].take() {
            results.push(ModeResult {
                mode: m.name().into(),
                median_ms: None,
                speedup: None,
                overlap_efficiency: None,
                bytes_moved: sys.plan.step_bytes(),
                max_rel_error: None,
                trackers_ok: None,
                trigger_latency_median_us: None,
                trigger_latency_p99_us: None,
                skipped: Some(reason),
            });
            continue;
        }
        let med = median(&mut totals[i]) / 1e3;
        if let Some(r) = last[i].take() {
            timelines.push(r.timeline);
        }
        results.push(ModeResult {
            mode: m.name().into(),
            median_ms: Some(med),
            speedup: Some(t_seq / med),
            overlap_efficiency: Some(if t_seq - ideal > 0.0 {
                (t_seq - med) / (t_seq - ideal)
            } else {
                0.0
            }),
            bytes_moved: sys.plan.step_bytes(),
            max_rel_error: err,
            trackers_ok,
            trigger_latency_median_us: (!lats[i].is_empty()).then(|| median(&mut lats[i].clone())),
            trigger_latency_p99_us: (!lats[i].is_empty()).then(|| percentile(&mut lats[i], 0.99)),
            skipped: None,
        });
    }
    Ok(Report {
        adapter: gpu.describe(),
        gemm_kernel: sys.kernels.gemm.engine,
        config: opts.config.clone(),
        chunk_bounds: sys.chunking.bounds.clone(),
        reps: opts.reps,
        warmup: opts.warmup,
        seed: opts.seed,
        verify,
        grain,
        t_gemm_ms: t_gemm,
        t_gemm_untracked_ms: t_gemm_untracked,
        tracker_overhead: t_gemm / t_gemm_untracked - 1.0,
        t_comm_ms: t_comm,
        t_seq_ms: t_seq,
        ideal_ms: ideal,
        device_memory_bytes: sys.device_bytes(),
        gemm_tflops: opts.config.total_flops() / (t_gemm * 1e-3) / 1e12,
        results,
        timelines,
    })
}
