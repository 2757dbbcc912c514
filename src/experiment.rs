//! One experiment: build the system, verify every mode against the f64 reference and its trackers,
//! time warm-up and repetitions, and turn the medians into the metrics every run reports.

use serde::Serialize;
use web_time::Instant;

pub use crate::check::{check, outputs, rounding, sample, verdict, Verdict, Verify};
use crate::config::{Config, ModeKind};
use crate::consistency::{failed_for, Check};
use crate::error::{Error, Result};
use crate::gemm::Engine;
use crate::gpu::Gpu;
use crate::hostlink::Path;
use crate::lower::{FusedTuning, Group};
use crate::modes::{self, run_everywhere, Kernels, Mode, System};
use crate::ranks::Inputs;
use crate::reference::Rounding;
use crate::stats::{median, percentile, Series, Spread, Warmup};
use crate::timeline::Timeline;
use crate::timing::{adjusted, time_things, Measured, Timed};

mod links;
pub use crate::timing::{
    Rep, Stability, Took, COMM, FUSED_COMM, FUSED_GEMM, FUSED_SEQ, GEMM, GEMM_UNTRACKED,
    MIN_WARMUP_S, SEQ,
};
use links::links_seen;
pub use links::{read_links_against, LinkCalibration, LinkSeen};

/// Everything `t3 run` asks for.
#[derive(Clone, Debug)]
pub struct Options {
    pub config: Config,
    pub modes: Vec<ModeKind>,
    pub reps: usize,
    /// Least warm-up rounds; [`Stability`] says how long the warm-up may go on until it settles.
    pub warmup: usize,
    pub seed: u64,
    /// `None` picks Full below about 2 GFLOP of reference work, else a 64-row sample.
    pub verify: Option<Verify>,
    pub stability: Stability,
    pub baselines: Baselines,
}

/// What a measurement times and checks beside the modes asked for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Baselines {
    /// The GEMM alone (tracked and not), sequential (checked too) and each mode's own sequential
    /// run: every figure of the report, checked against each other.
    #[default]
    All,
    /// Sequential's time alone, not checked again: what the tuner's measurements after its first
    /// need to read each figure against sequential on the same clocks (no efficiency, no GEMM rate).
    Sequential,
    /// [`Baselines::All`] but the untracked GEMM: the tuner's first measurement of a point (the
    /// model's costs). The untracked GEMM gives only the trackers' overhead, which no choice of the
    /// tuner reads, and on the largest points each timed thing costs a GEMM's time per rep.
    Costs,
}

/// One mode's line of the report.
#[derive(Clone, Debug, Serialize)]
pub struct ModeResult {
    pub mode: ModeKind,
    /// Whether its triggers are tracked at run time or planned ahead.
    pub trigger: crate::modes::Trigger,
    pub median_ms: Option<f64>,
    pub spread_ms: Option<Spread>,
    /// Over T_seq.
    pub speedup: Option<f64>,
    /// (seq - T) / (seq - ideal), with the `seq_ms` and `ideal_ms` below.
    pub overlap_efficiency: Option<f64>,
    /// The sequential time and ideal its efficiency is against: T_seq and max(T_gemm, T_comm), or
    /// its own sequential run where it has one (`own_baseline`, fused mode: [`OwnRun`]).
    pub seq_ms: Option<f64>,
    pub ideal_ms: Option<f64>,
    pub own_baseline: bool,
    pub bytes_moved: u64,
    /// Element type of the outputs it computed and moved (fused mode: f32 always).
    pub output_dtype: crate::shapes::Dtype,
    pub max_rel_error: Option<f64>,
    /// The bound on `max_rel_error`, derived from the outputs' rounding along the schedule
    /// ([`Rounding`]).
    pub tolerance: f64,
    /// Checked elements past their own rounding bound ([`Rounding::excess`]): 0 where right.
    pub elements_past_rounding: Option<usize>,
    pub trackers_ok: Option<bool>,
    pub trigger_latency_median_us: Option<f64>,
    pub trigger_latency_p99_us: Option<f64>,
    pub skipped: Option<String>,
    /// Failed checks that concern this mode (its own and the baselines'): its overlap efficiency
    /// is then empty.
    pub checks_failed: Vec<String>,
    /// The configuration it ran, in words, and where it came from (src/tune/apply.rs).
    pub config: Option<String>,
    /// The same as values, where they differ from the report's `config` or were planned.
    pub knobs: Option<crate::tune::Knobs>,
    pub config_source: Option<crate::tune::Source>,
    /// Where the tune table says the mode loses to sequential at this point: what was done.
    pub fallback: Option<String>,
    /// Where the mode ran at a configuration of its own, apart from T_seq's: sequential's time at
    /// that configuration, timed beside it (its `speedup` is over T_seq all the same).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub own_t_seq_ms: Option<f64>,
    /// How long its last repetition went on after its last GEMM work ended, ms (its timeline's
    /// [`Timeline::after_gemm_us`]): the part of the collective nothing hid.
    pub after_gemm_ms: Option<f64>,
    /// Its last repetition's waiting landings, where the flag handoff had gated links.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub early_landings: Option<crate::modes::EarlyLandings>,
}

impl ModeResult {
    /// Whether its check failed: a tracker off its threshold, the error past its derived bound, or
    /// an element past its own.
    pub fn wrong(&self) -> bool {
        self.trackers_ok == Some(false) || self.result_wrong()
    }

    /// Whether its result is past its bound against the f64 reference (or elements past their own).
    pub fn result_wrong(&self) -> bool {
        self.max_rel_error
            .is_some_and(|e| e.is_nan() || e > self.tolerance)
            || self.elements_past_rounding.is_some_and(|n| n > 0)
    }

    /// `mode`'s row with nothing measured, checked or configured yet: its outputs of `output_dtype`
    /// checked against `tolerance`.
    pub fn blank(mode: ModeKind, output_dtype: crate::shapes::Dtype, tolerance: f64) -> Self {
        ModeResult {
            mode,
            trigger: mode.trigger(),
            median_ms: None,
            spread_ms: None,
            speedup: None,
            overlap_efficiency: None,
            seq_ms: None,
            ideal_ms: None,
            own_baseline: false,
            bytes_moved: 0,
            output_dtype,
            max_rel_error: None,
            tolerance,
            elements_past_rounding: None,
            trackers_ok: None,
            trigger_latency_median_us: None,
            trigger_latency_p99_us: None,
            skipped: None,
            checks_failed: Vec::new(),
            config: None,
            knobs: None,
            config_source: None,
            fallback: None,
            own_t_seq_ms: None,
            after_gemm_ms: None,
            early_landings: None,
        }
    }
}

/// A mode's own GEMM and transfers and the baseline its efficiency is against (fused mode's: its
/// GEMM, every rank's packed in one dispatch and tracked only, and its transfers, each alone in its
/// own sequential run, [`crate::consistency::Own`]). Medians and spreads, ms.
#[derive(Clone, Debug, Serialize)]
pub struct OwnRun {
    pub mode: ModeKind,
    pub gemm_ms: f64,
    pub gemm_spread: Spread,
    pub comm_ms: f64,
    pub comm_spread: Spread,
    /// Its GEMM then the faster of its transfers and T_comm (`own_comm`: its own).
    pub seq_ms: f64,
    pub seq_spread: Spread,
    pub own_comm: bool,
    /// max(its GEMM, those transfers).
    pub ideal_ms: f64,
}

/// The report of one experiment (the `--json` object).
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// What the file is ([`FORMAT`]) and its layout's version ([`FORMAT_VERSION`]): the page's
    /// viewer reads a `--json` file by them.
    pub format: &'static str,
    pub format_version: u32,
    pub adapter: String,
    /// Whether any device is a CPU adapter (lavapipe, SwiftShader): its timings emulate a GPU's.
    pub emulated: bool,
    /// With the ranks on several devices: one line per device (its ranks) and per host link.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub devices: Vec<String>,
    /// With the ranks on several devices: what each host link carried in the collective alone
    /// (sequential's, timed as T_comm).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub links: Vec<LinkSeen>,
    /// The host link table the links' rates were read against, where one calibrated these devices
    /// on these paths ([`read_links_against`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub link_calibration: Option<LinkCalibration>,
    pub config: Config,
    /// The kernel that computed the GEMMs.
    pub gemm_kernel: Engine,
    pub chunk_bounds: Vec<usize>,
    pub reps: usize,
    pub warmup: usize,
    pub seed: u64,
    pub verify: Verify,
    pub grain: String,
    pub stability: Stability,
    pub t_gemm_ms: f64,
    pub t_gemm_untracked_ms: f64,
    pub tracker_overhead: f64,
    pub t_comm_ms: f64,
    pub t_seq_ms: f64,
    pub ideal_ms: f64,
    /// The reps' spread around each baseline median (ms).
    pub t_gemm_spread: Option<Spread>,
    pub t_gemm_untracked_spread: Option<Spread>,
    /// Fused mode's configuration, where it ran, in words: its knobs (`config.fused`) resolved
    /// against the device, and its put.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fused_config: Option<String>,
    /// The same as values.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fused_tuning: Option<FusedTuning>,
    /// The own sequential runs of the modes that have one (fused mode's, where it ran).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub own: Vec<OwnRun>,
    pub t_comm_spread: Option<Spread>,
    pub t_seq_spread: Option<Spread>,
    /// How each timed thing's warm-up went (last attempt).
    pub warmups: Vec<Warmup>,
    /// Measurements made: 1, plus one per re-measure after a failed check.
    pub attempts: usize,
    /// Where the measurement's time went.
    pub took: Took,
    /// Every check on the last attempt's figures.
    pub checks: Vec<Check>,
    /// No consistency or spread check failed on the last attempt.
    pub consistent: bool,
    pub device_memory_bytes: u64,
    pub gemm_tflops: f64,
    pub results: Vec<ModeResult>,
    /// Every run of every timed thing, warm-up included, with the host time it was launched at;
    /// every attempt.
    pub samples: Vec<Series>,
    /// Each measured mode's timeline (its last repetition), as the SVG and the trace draw it.
    pub timelines: Vec<Timeline>,
}

/// [`Report::format`]: what a `--json` file is.
pub const FORMAT: &str = "t3-results";
/// [`Report::format_version`]: 1 added the format and the timelines (files before it have
/// neither); a change of a field's meaning, or a field gone, bumps it.
pub const FORMAT_VERSION: u32 = 1;

/// The reference work of a full check, in multiply-adds.
fn reference_work(c: &Config) -> f64 {
    c.total_flops() / 2.0
}

/// Validates `opts`, builds the system on one device and uploads fresh inputs.
pub fn prepare<'a>(
    gpu: &'a Gpu,
    kernels: &'a Kernels,
    opts: &Options,
) -> Result<(System<'a>, Inputs)> {
    prepare_on(
        std::slice::from_ref(gpu),
        std::slice::from_ref(kernels),
        opts,
        Path::Mapped,
    )
}

/// [`prepare`] with the ranks over `gpus` (each with its `kernels`), links taking path `want`
/// where the devices allow.
pub fn prepare_on<'a>(
    gpus: &'a [Gpu],
    kernels: &'a [Kernels],
    opts: &Options,
    want: Path,
) -> Result<(System<'a>, Inputs)> {
    let sys = build(gpus, kernels, opts, want)?;
    let inputs = Inputs::random(
        opts.config.shape,
        opts.config.dtype,
        opts.config.collective,
        &sys.chunking,
        opts.seed,
    );
    sys.upload(&inputs);
    Ok((sys, inputs))
}

/// [`prepare_on`] without the inputs: the system checked and built, its operands not written.
pub fn build<'a>(
    gpus: &'a [Gpu],
    kernels: &'a [Kernels],
    opts: &Options,
    want: Path,
) -> Result<System<'a>> {
    build_adopting(gpus, kernels, opts, want, Vec::new())
}

/// [`build`], its ranks taking `operands` ([`System::into_operands`] of a system of the same point
/// and inputs) where they fit; [`System::adopted_operands`] then says no upload is needed.
pub fn build_adopting<'a>(
    gpus: &'a [Gpu],
    kernels: &'a [Kernels],
    opts: &Options,
    want: Path,
    operands: Vec<Vec<crate::ranks::RankBuffers>>,
) -> Result<System<'a>> {
    if opts.reps == 0 {
        return Err(Error::invalid("repetition count", 0, "at least 1"));
    }
    let cpu = gpus
        .iter()
        .any(|g| g.info.device_type == wgpu::DeviceType::Cpu);
    opts.config
        .check_memory(cpu, crate::validate::available_host_memory())?;
    System::adopting(
        gpus,
        kernels,
        opts.config.clone(),
        want,
        &opts.modes,
        operands,
    )
}

/// Runs the experiment end to end.
pub fn run(gpu: &Gpu, kernels: &Kernels, opts: &Options) -> Result<Report> {
    let (mut sys, inputs) = prepare(gpu, kernels, opts)?;
    measure(&mut sys, &inputs, opts)
}

/// Verifies and times every requested mode on a prepared system.
pub fn measure(sys: &mut System, inputs: &Inputs, opts: &Options) -> Result<Report> {
    measure_with(sys, inputs, opts, &|_, _| Ok(()))
}

/// [`measure`], with `adjust` seeing every timed run before it is recorded: the seam through which
/// tests make a figure inconsistent on purpose, and the page reports progress (an error from it ends
/// the measurement there: the page's Stop).
pub fn measure_with(
    sys: &mut System,
    inputs: &Inputs,
    opts: &Options,
    adjust: &dyn Fn(&str, &mut Rep) -> Result<()>,
) -> Result<Report> {
    let verify = opts
        .verify
        .unwrap_or(if reference_work(&opts.config) <= 1e9 {
            Verify::Full
        } else {
            Verify::Sample(64)
        });

    // Modes to run: sequential (it defines T_seq and T_comm), then the requested ones.
    let order: Vec<Box<dyn Mode>> = ModeKind::ALL
        .into_iter()
        .filter(|&k| k == ModeKind::Sequential || opts.modes.contains(&k))
        .map(modes::runner)
        .collect();
    let mut skipped: Vec<Option<String>> = order.iter().map(|m| m.skip_reason(sys)).collect();
    let fused_runs = order
        .iter()
        .zip(&skipped)
        .any(|(m, s)| m.kind() == ModeKind::Fused && s.is_none());
    // The pipelines made on first use, before the checks' runs would make them.
    let making = Instant::now();
    let pipelines_s = match fused_runs {
        true => sys
            .make_fused_pipelines(opts.baselines != Baselines::Sequential)
            .map(|_| making.elapsed().as_secs_f64())?,
        false => 0.0,
    };
    // Checks first, on poisoned outputs.
    let checking = Instant::now();
    let checked = checked(&order, &skipped, opts);
    let checks = crate::check::check_all(sys, inputs, (&order, &checked), verify)?;
    let checks_s = checking.elapsed().as_secs_f64();
    let rounding = rounding(sys);
    let mut things = things(&order, &skipped, adjust, opts.baselines);
    let fused_tuning = fused_runs
        .then(|| sys.parts[0].lowered.fused.as_ref().ok().map(|f| f.tuning))
        .flatten();
    let stability = stability_on(sys, opts.stability);
    let mut measured = time_things(sys, &mut things, opts.warmup, opts.reps, &stability)?;
    let t_gemm = measured.median_ms(GEMM);
    let t_gemm_untracked = measured.median_ms(GEMM_UNTRACKED);
    let t_seq = measured.median_ms(SEQ);
    let t_comm = measured.median_ms(COMM);
    let ideal = t_gemm.max(t_comm);
    let index = |name: &str| things.iter().position(|t| t.what == name);
    let grain = index(SEQ)
        .and_then(|i| measured.last[i].as_ref())
        .and_then(|r| r.timeline.as_ref())
        .map(|t| t.grain.clone())
        .unwrap_or_default();
    let mut results = Vec::new();
    let mut timelines = Vec::new();
    for (i, m) in order.iter().enumerate() {
        if !opts.modes.contains(&m.kind()) {
            continue;
        }
        let v = checks[i];
        let result = unmeasured(sys, m.kind(), v, &rounding, skipped[i].take());
        let Some(k) = index(m.name()).filter(|_| result.skipped.is_none()) else {
            results.push(result);
            continue;
        };
        let mut after_gemm_ms = None;
        let last = measured.last[k].take();
        let early_landings = last.as_ref().and_then(|r| r.early_landings);
        if let Some(t) = last.and_then(|r| r.timeline) {
            after_gemm_ms = t.after_gemm_us().map(|us| us / 1e3);
            timelines.push(t);
        }
        let result = timed_result(result, m.name(), k, &mut measured, t_seq, v);
        results.push(ModeResult {
            after_gemm_ms,
            early_landings,
            ..result
        });
    }
    let consistent = measured.consistent();
    Ok(Report {
        format: FORMAT,
        format_version: FORMAT_VERSION,
        emulated: sys
            .parts
            .iter()
            .any(|p| p.gpu.info.device_type == wgpu::DeviceType::Cpu),
        adapter: describe_adapter(sys),
        devices: sys.describe_devices(),
        links: links_seen(sys, t_comm),
        link_calibration: None,
        gemm_kernel: sys.parts[0].kernels.gemm.engine,
        config: opts.config.clone(),
        chunk_bounds: sys.chunking.bounds.clone(),
        reps: opts.reps,
        warmup: opts.warmup,
        seed: opts.seed,
        verify,
        grain,
        stability,
        t_gemm_ms: t_gemm,
        t_gemm_untracked_ms: t_gemm_untracked,
        tracker_overhead: t_gemm / t_gemm_untracked - 1.0,
        t_comm_ms: t_comm,
        t_seq_ms: t_seq,
        ideal_ms: ideal,
        t_gemm_spread: measured.spread_ms(GEMM),
        t_gemm_untracked_spread: measured.spread_ms(GEMM_UNTRACKED),
        fused_tuning,
        fused_config: fused_tuning.map(|t| {
            // The put's four-window twin where the packed output passed one buffer.
            let part = &sys.parts[0];
            let four = part
                .lowered
                .bindings
                .iter()
                .any(|b| b.group == Group::Fused4);
            let put = part.kernels.gemm.fused_put_of(four);
            format!("{}; put {}", t.describe(), put.name())
        }),
        own: own_runs(&measured),
        t_comm_spread: measured.spread_ms(COMM),
        t_seq_spread: measured.spread_ms(SEQ),
        warmups: measured.warmups,
        attempts: measured.attempts,
        took: Took {
            pipelines_s,
            checks_s,
            warmup_s: measured.warmup_s,
            reps_s: measured.reps_s,
        },
        checks: measured.checks,
        consistent,
        device_memory_bytes: sys.device_bytes(),
        gemm_tflops: opts.config.total_flops() / (t_gemm * 1e-3) / 1e12,
        results,
        samples: measured.samples,
        timelines,
    })
}

/// `asked` on `sys`'s devices: no least warm-up where every one is a CPU adapter (lavapipe), whose
/// pipelines no driver swaps.
fn stability_on(sys: &System, asked: Stability) -> Stability {
    let cpu = sys
        .parts
        .iter()
        .all(|p| p.gpu.info.device_type == wgpu::DeviceType::Cpu);
    Stability {
        min_warmup_s: if cpu { 0.0 } else { asked.min_warmup_s },
        ..asked
    }
}

/// Which of `order` a measurement checks: every mode not `skipped`, a baseline only where it checks
/// its baselines (not [`Baselines::Sequential`]).
fn checked(order: &[Box<dyn Mode>], skipped: &[Option<String>], opts: &Options) -> Vec<bool> {
    let lean = opts.baselines == Baselines::Sequential;
    order
        .iter()
        .zip(skipped)
        .map(|(m, s)| s.is_none() && (!lean || opts.modes.contains(&m.kind())))
        .collect()
}

/// What a measurement times: unless [`Baselines::Sequential`], the tracked GEMM alone (and the
/// untracked one with [`Baselines::All`]) and each mode's own sequential run where it has one; and
/// every mode of `order` not `skipped` (sequential among them).
fn things<'a, 's>(
    order: &'a [Box<dyn Mode>],
    skipped: &[Option<String>],
    adjust: &'a dyn Fn(&str, &mut Rep) -> Result<()>,
    baselines: Baselines,
) -> Vec<Timed<'a, System<'s>>> {
    let with_baselines = baselines != Baselines::Sequential;
    let mut things = Vec::new();
    if with_baselines {
        things.push(adjusted(GEMM, adjust, gemm_alone(|l| &l.gemm_tracked)));
    }
    if baselines == Baselines::All {
        things.push(adjusted(
            GEMM_UNTRACKED,
            adjust,
            gemm_alone(|l| &l.gemm_untracked),
        ));
    }
    let run = order.iter().zip(skipped).filter(|(_, s)| s.is_none());
    for (m, _) in run.clone().filter(|_| with_baselines) {
        if let Some(own) = m.own_sequential() {
            things.push(adjusted(FUSED_SEQ, adjust, move |sys: &mut System| {
                own_sequential(own(sys)?)
            }));
        }
    }
    for (m, _) in run {
        things.push(adjusted(m.name(), adjust, move |sys: &mut System| {
            m.run(sys).map(Rep::from)
        }));
    }
    things
}

/// A GEMM alone: the recording `pick` chooses, timed.
fn gemm_alone(
    pick: fn(&crate::lower::Lowered) -> &crate::lower::Recording,
) -> impl FnMut(&mut System) -> Result<Rep> {
    move |sys: &mut System| {
        Ok(Rep {
            us: run_everywhere(sys, pick)?,
            ..Default::default()
        })
    }
}

/// A mode's own sequential run from its passes' spans `t`: the first its GEMM, the rest its transfers.
fn own_sequential(t: Vec<(f64, f64)>) -> Result<Rep> {
    let span = modes::span;
    let parts = [
        (FUSED_GEMM, &t[..t.len().min(1)]),
        (FUSED_COMM, &t[t.len().min(1)..]),
    ];
    Ok(Rep {
        us: span(&t),
        parts: parts
            .into_iter()
            .filter(|(_, t)| !t.is_empty())
            .map(|(what, t)| (what, span(t)))
            .collect(),
        ..Default::default()
    })
}

/// A mode's row before its timing: what it moves, its check's verdict `v` and why it was skipped.
fn unmeasured(
    sys: &System,
    mode: ModeKind,
    v: Option<Verdict>,
    rounding: &Rounding,
    skipped: Option<String>,
) -> ModeResult {
    ModeResult {
        bytes_moved: sys.plan.step_bytes()
            + if mode == ModeKind::Fused {
                sys.parts[0]
                    .lowered
                    .fused
                    .as_ref()
                    .map_or(0, |f| f.extra_bytes)
            } else {
                0
            },
        elements_past_rounding: v.map(|v| v.excess),
        skipped,
        ..ModeResult::blank(mode, rounding.out, rounding.tolerance())
    }
}

/// `result` with the times of the thing timed as `what` (index `k`) against sequential's `t_seq`,
/// and its check's verdict `v`.
fn timed_result(
    result: ModeResult,
    what: &str,
    k: usize,
    measured: &mut Measured,
    t_seq: f64,
    v: Option<Verdict>,
) -> ModeResult {
    let spread = measured.spread_ms(what);
    let med = spread.map_or(f64::NAN, |s| s.median);
    let failed: Vec<String> = failed_for(&measured.checks, what)
        .into_iter()
        .map(|c| c.name.clone())
        .collect();
    // An efficiency only where every check it rests on passed: never a number the report has
    // evidence is wrong.
    let bounds = measured.bounds(what);
    let efficiency = bounds
        .filter(|_| failed.is_empty())
        .map(|b| b.efficiency(med))
        .filter(|e| e.is_finite());
    let lats = &mut measured.latencies[k];
    ModeResult {
        median_ms: Some(med),
        spread_ms: spread,
        speedup: Some(t_seq / med),
        overlap_efficiency: efficiency,
        seq_ms: bounds.map(|b| b.seq.median),
        ideal_ms: bounds.map(|b| b.ideal.median),
        own_baseline: bounds.is_some_and(|b| b.own),
        max_rel_error: v.map(|v| v.max_rel_error),
        trackers_ok: v.map(|v| v.trackers_ok),
        trigger_latency_median_us: (!lats.is_empty()).then(|| median(lats)),
        trigger_latency_p99_us: (!lats.is_empty()).then(|| percentile(lats, 0.99)),
        checks_failed: failed,
        ..result
    }
}

/// Each mode with a baseline of its own: that baseline's times.
fn own_runs(measured: &Measured) -> Vec<OwnRun> {
    ModeKind::ALL
        .into_iter()
        .filter(|m| m.own_baseline())
        .filter_map(|mode| {
            let o = measured.own(mode.name())?;
            let b = measured.bounds(mode.name())?;
            Some(OwnRun {
                mode,
                gemm_ms: o.gemm.median,
                gemm_spread: o.gemm,
                comm_ms: o.comm.median,
                comm_spread: o.comm,
                seq_ms: b.seq.median,
                seq_spread: b.seq,
                own_comm: b.own_comm,
                ideal_ms: b.ideal.median,
            })
        })
        .collect()
}

/// The adapter, or the devices, in words.
fn describe_adapter(sys: &System) -> String {
    match sys.parts.len() {
        1 => sys.parts[0].gpu.describe(),
        n => format!(
            "{n} devices, ranks in contiguous blocks, steps between devices through the host \
             (device 0: {})",
            sys.parts[0].gpu.describe()
        ),
    }
}

#[cfg(test)]
mod tests;
