//! One experiment: build the system, verify every mode against the f64 reference and its trackers,
//! time warm-up and repetitions, and turn the medians into the metrics every run reports.

use std::collections::HashMap;
use std::time::Instant;

use serde::Serialize;

use crate::consistency::{failed_for, Check, Checks, Figures};
use crate::error::{Error, Result};
use crate::gemm::Engine;
use crate::gpu::Gpu;
use crate::modes::{self, run_recording, Config, Kernels, Mode, Run, System};
use crate::plan::{key, Buf, Loc};
use crate::ranks::{finished, Inputs};
use crate::reference::{rel_frobenius, Rng};
use crate::stats::{since_start, Sample, Series, Settle, Spread, Warmup};
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
    /// Least warm-up rounds; [`Stability`] says how long the warm-up may go on until it settles.
    pub warmup: usize,
    pub seed: u64,
    /// `None` picks Full below about 2 GFLOP of reference work, else a 64-row sample.
    pub verify: Option<Verify>,
    pub stability: Stability,
}

/// How a run warms up, when it trusts its figures, and how often it measures again.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Stability {
    /// Bound on the warm-up, seconds: past it the reps start whether or not every timed thing
    /// settled (0: `warmup` rounds only, no stability test).
    pub warmup_s: f64,
    pub settle: Settle,
    pub checks: Checks,
    /// Measurements after the first when a consistency or spread check fails.
    pub retries: usize,
}

impl Default for Stability {
    fn default() -> Self {
        Stability {
            warmup_s: 10.0,
            settle: Settle::default(),
            checks: Checks::default(),
            retries: 2,
        }
    }
}

/// One mode's line of the report.
#[derive(Clone, Debug, Serialize)]
pub struct ModeResult {
    pub mode: String,
    /// Whether its triggers are tracked at run time or planned ahead.
    pub trigger: crate::modes::Trigger,
    pub median_ms: Option<f64>,
    pub spread_ms: Option<Spread>,
    pub speedup: Option<f64>,
    pub overlap_efficiency: Option<f64>,
    pub bytes_moved: u64,
    pub max_rel_error: Option<f64>,
    pub trackers_ok: Option<bool>,
    pub trigger_latency_median_us: Option<f64>,
    pub trigger_latency_p99_us: Option<f64>,
    pub skipped: Option<String>,
    /// Failed checks that concern this mode (its own and the baselines'): its overlap efficiency
    /// is then empty.
    pub checks_failed: Vec<String>,
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
    pub t_comm_spread: Option<Spread>,
    pub t_seq_spread: Option<Spread>,
    /// How each timed thing's warm-up went (last attempt).
    pub warmups: Vec<Warmup>,
    /// Measurements made: 1, plus one per re-measure after a failed check.
    pub attempts: usize,
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

/// Every rank's whole output as the last run left it (`--dump`): NaN rows in chunks the plan never
/// writes on that rank.
pub fn outputs(sys: &System) -> Result<Vec<Vec<f32>>> {
    let (s, ch) = (sys.config.shape, &sys.chunking);
    (0..sys.config.ranks)
        .map(|p| {
            let mut out = Vec::with_capacity(s.m * s.n);
            for x in 0..ch.count() {
                let rows = ch.rows(x);
                let loc = Loc {
                    rank: p,
                    chunk: x,
                    buf: Buf::Out,
                };
                if sys.ranks.locs.contains_key(&loc) {
                    out.extend(sys.ranks.read_rows(sys.gpu, p, x, 0..rows.len())?);
                } else {
                    out.extend(std::iter::repeat_n(f32::NAN, rows.len() * s.n));
                }
            }
            Ok(out)
        })
        .collect()
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
    let (mut sys, inputs) = prepare(gpu, kernels, opts)?;
    measure(&mut sys, &inputs, opts)
}

/// One run of a timed thing.
#[derive(Clone, Debug, Default)]
pub struct Rep {
    /// Its time, µs.
    pub us: f64,
    /// The collective's share where the thing separates it (sequential mode): T_comm's samples.
    pub comm_us: Option<f64>,
    pub trigger_latency_us: Vec<f64>,
    pub timeline: Option<Timeline>,
}

impl From<Run> for Rep {
    fn from(r: Run) -> Self {
        Rep {
            us: r.total_us,
            comm_us: r.comm_us,
            trigger_latency_us: r.trigger_latency_us,
            timeline: Some(r.timeline),
        }
    }
}

/// One thing a run times: its name and how to run it once on the context `C` every thing shares
/// (the system, for a real run). The names the checks read are [`GEMM`], [`GEMM_UNTRACKED`], [`SEQ`]
/// (whose [`Rep::comm_us`] give [`COMM`]); the rest are modes.
pub struct Timed<'a, C = ()> {
    pub what: String,
    pub run: RunOnce<'a, C>,
}

/// How a [`Timed`] thing runs once.
pub type RunOnce<'a, C> = Box<dyn FnMut(&mut C) -> Result<Rep> + 'a>;

pub const GEMM: &str = "gemm_tracked";
pub const GEMM_UNTRACKED: &str = "gemm_untracked";
pub const COMM: &str = "comm";
pub const SEQ: &str = "sequential";

/// What timing the things of a run gave: every attempt's samples, and the last attempt's warm-ups,
/// checks, latencies and timelines.
pub struct Measured {
    pub samples: Vec<Series>,
    pub warmups: Vec<Warmup>,
    pub attempts: usize,
    pub checks: Vec<Check>,
    /// Per timed thing (in order): its reps' trigger latencies and its last rep.
    pub latencies: Vec<Vec<f64>>,
    pub last: Vec<Option<Rep>>,
}

impl Measured {
    /// The last attempt's series of `what`.
    pub fn series(&self, what: &str) -> Option<&Series> {
        self.samples.iter().rev().find(|s| s.what == what)
    }

    /// Spread of `what`'s reps, ms.
    pub fn spread_ms(&self, what: &str) -> Option<Spread> {
        Spread::of(&self.series(what)?.rep_us()).map(|s| s.scaled(1e-3))
    }

    pub fn median_ms(&self, what: &str) -> f64 {
        self.spread_ms(what).map_or(f64::NAN, |s| s.median)
    }

    pub fn consistent(&self) -> bool {
        !self.checks.iter().any(Check::remeasure)
    }
}

/// Times `things`: warm-up until every one settles (or the bound passes), then `reps` rounds in
/// which each runs once, in order. Rounds interleave the things, so that a drift of the GPU's
/// clocks over the run (seen on an H200 under a long fp32 load) shifts all of them alike. Where a
/// consistency or spread check fails, measures again, at most `stability.retries` times.
pub fn time_things<C>(
    ctx: &mut C,
    things: &mut [Timed<C>],
    warmup: usize,
    reps: usize,
    stability: &Stability,
) -> Result<Measured> {
    let mut samples = Vec::new();
    let mut attempt = 0;
    loop {
        let (series, warmups, latencies, last) =
            attempt_once(ctx, things, warmup, reps, stability, attempt)?;
        samples.extend(series);
        let mut m = Measured {
            samples,
            warmups,
            attempts: attempt + 1,
            checks: Vec::new(),
            latencies,
            last,
        };
        m.checks = checks_of(&m, things, &stability.checks);
        if m.consistent() || attempt >= stability.retries {
            return Ok(m);
        }
        samples = m.samples;
        attempt += 1;
    }
}

type Attempt = (Vec<Series>, Vec<Warmup>, Vec<Vec<f64>>, Vec<Option<Rep>>);

/// One measurement: the warm-up, then the reps.
fn attempt_once<C>(
    ctx: &mut C,
    things: &mut [Timed<C>],
    warmup: usize,
    reps: usize,
    stability: &Stability,
    attempt: usize,
) -> Result<Attempt> {
    let n = things.len();
    let mut a: Attempt = (
        things
            .iter()
            .map(|t| Series::new(&t.what, attempt))
            .chain(std::iter::once(Series::new(COMM, attempt)))
            .collect(),
        Vec::new(),
        vec![Vec::new(); n],
        vec![None; n],
    );
    let settle = &stability.settle;
    let bound = std::time::Duration::from_secs_f64(stability.warmup_s.max(0.0));
    let start = Instant::now();
    let mut rounds = 0;
    // Comm's series counts once a thing has reported it.
    let settled = |a: &Attempt| {
        a.0.iter()
            .filter(|s| s.what != COMM || !s.warmup.is_empty())
            .all(|s| settle.settled(&s.warmup_us()))
    };
    while rounds < warmup || (start.elapsed() < bound && !settled(&a)) {
        round(ctx, things, &mut a, true)?;
        rounds += 1;
    }
    let warm_s = start.elapsed().as_secs_f64();
    for _ in 0..reps {
        round(ctx, things, &mut a, false)?;
    }
    // Comm's series exists only where a thing reported it.
    if a.0[n].warmup.is_empty() && a.0[n].reps.is_empty() {
        a.0.pop();
    }
    a.1 =
        a.0.iter()
            .map(|s| {
                let us = s.warmup_us();
                let since = settle.settled_since(&us);
                Warmup {
                    what: s.what.clone(),
                    runs: us.len(),
                    seconds: since.map_or(warm_s, |i| s.warmup[i].at_s - s.warmup[0].at_s),
                    settled: since.is_some(),
                }
            })
            .collect();
    Ok(a)
}

/// Each thing runs once; comm's sample comes from the thing that reports it.
fn round<C>(ctx: &mut C, things: &mut [Timed<C>], a: &mut Attempt, warm: bool) -> Result<()> {
    let n = things.len();
    for (i, t) in things.iter_mut().enumerate() {
        let at_s = since_start();
        let r = (t.run)(ctx)?;
        a.0[i].push(warm, Sample { at_s, us: r.us });
        if let Some(us) = r.comm_us {
            a.0[n].push(warm, Sample { at_s, us });
        }
        if !warm {
            a.2[i].extend(r.trigger_latency_us.iter().copied());
            a.3[i] = Some(r);
        }
    }
    Ok(())
}

/// The checks on `m`'s figures; none where a baseline was not timed.
fn checks_of<C>(m: &Measured, things: &[Timed<C>], checks: &Checks) -> Vec<Check> {
    let (Some(gemm), Some(comm), Some(seq)) =
        (m.spread_ms(GEMM), m.spread_ms(COMM), m.spread_ms(SEQ))
    else {
        return Vec::new();
    };
    let spreads = |f: &dyn Fn(&str) -> bool| -> Vec<(&str, Spread)> {
        things
            .iter()
            .filter(|t| f(&t.what))
            .filter_map(|t| Some((t.what.as_str(), m.spread_ms(&t.what)?)))
            .collect()
    };
    let modes = spreads(&|w| ![GEMM, GEMM_UNTRACKED, SEQ].contains(&w));
    let others = spreads(&|w| w == GEMM_UNTRACKED);
    checks.run(&Figures {
        gemm,
        comm,
        seq,
        modes: &modes,
        others: &others,
    })
}

/// `f` as a timed thing whose every run `adjust` sees.
fn adjusted<'a, C>(
    what: &'static str,
    adjust: &'a dyn Fn(&str, &mut Rep),
    mut f: impl FnMut(&mut C) -> Result<Rep> + 'a,
) -> Timed<'a, C> {
    Timed {
        what: what.into(),
        run: Box::new(move |ctx| {
            let mut r = f(ctx)?;
            adjust(what, &mut r);
            Ok(r)
        }),
    }
}

/// Verifies and times every requested mode on a prepared system.
pub fn measure(sys: &mut System, inputs: &Inputs, opts: &Options) -> Result<Report> {
    measure_with(sys, inputs, opts, &|_, _| {})
}

/// [`measure`], with `adjust` seeing every timed run before it is recorded: the seam through which
/// tests make a figure inconsistent on purpose.
pub fn measure_with(
    sys: &mut System,
    inputs: &Inputs,
    opts: &Options,
    adjust: &dyn Fn(&str, &mut Rep),
) -> Result<Report> {
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
                .filter(|m| m.name() != SEQ && opts.modes.iter().any(|n| n == m.name()))
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
    let gemm_alone = |tracked: bool| {
        move |sys: &mut System| -> Result<Rep> {
            let t = run_recording(sys, |l| {
                if tracked {
                    &l.gemm_tracked
                } else {
                    &l.gemm_untracked
                }
            })?;
            let us = t.last().map(|l| l.1).unwrap_or(0.0) - t.first().map(|f| f.0).unwrap_or(0.0);
            Ok(Rep {
                us,
                ..Default::default()
            })
        }
    };
    let mut things = vec![
        adjusted(GEMM, adjust, gemm_alone(true)),
        adjusted(GEMM_UNTRACKED, adjust, gemm_alone(false)),
    ];
    for (i, m) in order.iter().enumerate() {
        if skipped[i].is_none() {
            things.push(adjusted(m.name(), adjust, move |sys: &mut System| {
                m.run(sys).map(Rep::from)
            }));
        }
    }
    let mut measured = time_things(sys, &mut things, opts.warmup, opts.reps, &opts.stability)?;
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
        if !opts.modes.iter().any(|n| n == m.name()) {
            continue;
        }
        let (err, trackers_ok) = checks[i];
        let mut result = ModeResult {
            mode: m.name().into(),
            trigger: crate::modes::Trigger::of(m.name()),
            median_ms: None,
            spread_ms: None,
            speedup: None,
            overlap_efficiency: None,
            bytes_moved: sys.plan.step_bytes(),
            max_rel_error: None,
            trackers_ok: None,
            trigger_latency_median_us: None,
            trigger_latency_p99_us: None,
            skipped: skipped[i].take(),
            checks_failed: Vec::new(),
        };
        let Some(k) = index(m.name()).filter(|_| result.skipped.is_none()) else {
            results.push(result);
            continue;
        };
        if let Some(t) = measured.last[k].take().and_then(|r| r.timeline) {
            timelines.push(t);
        }
        let spread = measured.spread_ms(m.name());
        let med = spread.map_or(f64::NAN, |s| s.median);
        let failed: Vec<String> = failed_for(&measured.checks, m.name())
            .into_iter()
            .map(|c| c.name.clone())
            .collect();
        // An efficiency only where every check it rests on passed: never a number the report has
        // evidence is wrong.
        let efficiency = failed
            .is_empty()
            .then(|| (t_seq - med) / (t_seq - ideal))
            .filter(|e| e.is_finite());
        let lats = &mut measured.latencies[k];
        result = ModeResult {
            median_ms: Some(med),
            spread_ms: spread,
            speedup: Some(t_seq / med),
            overlap_efficiency: efficiency,
            max_rel_error: err,
            trackers_ok,
            trigger_latency_median_us: (!lats.is_empty()).then(|| median(&mut lats.clone())),
            trigger_latency_p99_us: (!lats.is_empty()).then(|| percentile(lats, 0.99)),
            checks_failed: failed,
            ..result
        };
        results.push(result);
    }
    let consistent = measured.consistent();
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
        stability: opts.stability,
        t_gemm_ms: t_gemm,
        t_gemm_untracked_ms: t_gemm_untracked,
        tracker_overhead: t_gemm / t_gemm_untracked - 1.0,
        t_comm_ms: t_comm,
        t_seq_ms: t_seq,
        ideal_ms: ideal,
        t_gemm_spread: measured.spread_ms(GEMM),
        t_gemm_untracked_spread: measured.spread_ms(GEMM_UNTRACKED),
        t_comm_spread: measured.spread_ms(COMM),
        t_seq_spread: measured.spread_ms(SEQ),
        warmups: measured.warmups,
        attempts: measured.attempts,
        checks: measured.checks,
        consistent,
        device_memory_bytes: sys.device_bytes(),
        gemm_tflops: opts.config.total_flops() / (t_gemm * 1e-3) / 1e12,
        results,
        samples: measured.samples,
        timelines,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    /// A timed thing whose n-th run (from 0) takes `us(n)` µs, with `comm` µs of collective.
    fn thing<'a>(what: &str, comm: Option<f64>, us: impl Fn(usize) -> f64 + 'a) -> Timed<'a> {
        let n = Cell::new(0);
        Timed {
            what: what.into(),
            run: Box::new(move |_: &mut ()| {
                let k = n.replace(n.get() + 1);
                Ok(Rep {
                    us: us(k),
                    comm_us: comm,
                    ..Default::default()
                })
            }),
        }
    }

    fn stability(warmup_s: f64) -> Stability {
        Stability {
            warmup_s,
            ..Default::default()
        }
    }

    fn failed(m: &Measured) -> Vec<&str> {
        m.checks
            .iter()
            .filter(|c| !c.ok)
            .map(|c| c.name.as_str())
            .collect()
    }

    #[test]
    fn consistent_timings_are_measured_once() {
        let mut things = [
            thing(GEMM, None, |_| 10_000.0),
            thing(GEMM_UNTRACKED, None, |_| 9_900.0),
            thing(SEQ, Some(4_000.0), |_| 14_000.0),
            thing("encoded", None, |_| 11_000.0),
        ];
        let m = time_things(&mut (), &mut things, 1, 3, &stability(1.0)).unwrap();
        assert_eq!(m.attempts, 1);
        assert!(m.consistent() && failed(&m).is_empty(), "{:?}", m.checks);
        assert_eq!(m.median_ms(COMM), 4.0);
        // Settled after its first window: 5 warm-up runs, all recorded with their host times.
        let w = &m.warmups[0];
        assert_eq!((w.what.as_str(), w.runs, w.settled), (GEMM, 5, true));
        let s = m.series(GEMM).unwrap();
        assert_eq!((s.warmup.len(), s.reps.len()), (5, 3));
        assert!(s.warmup.iter().chain(&s.reps).all(|x| x.at_s > 0.0));
        assert!(s.reps.windows(2).all(|p| p[0].at_s <= p[1].at_s));
        assert_eq!(m.samples.len(), 5, "four things and comm");
    }

    #[test]
    fn warmup_goes_on_until_a_faster_build_settles() {
        // The GEMM's pipeline is swapped for a 3x faster build after 3 runs. (A swap after a
        // settled window cannot be foreseen: the checks catch it, see the next tests.)
        let mut things = [
            thing(GEMM, None, |n| if n < 3 { 30_000.0 } else { 10_000.0 }),
            thing(SEQ, Some(4_000.0), |_| 14_000.0),
        ];
        let m = time_things(&mut (), &mut things, 0, 3, &stability(5.0)).unwrap();
        let w = &m.warmups[0];
        assert!(w.settled && w.runs == 8, "{w:?}");
        assert_eq!(m.attempts, 1);
        assert_eq!(m.median_ms(GEMM), 10.0);
        assert!(m.consistent(), "{:?}", m.checks);
    }

    #[test]
    fn without_a_collective_the_warmup_settles_on_the_things_alone() {
        let mut things = [thing(GEMM, None, |_| 10_000.0)];
        let m = time_things(&mut (), &mut things, 0, 1, &stability(5.0)).unwrap();
        assert_eq!(m.warmups.len(), 1);
        assert!(
            m.warmups[0].settled && m.warmups[0].runs == 5,
            "{:?}",
            m.warmups
        );
    }

    #[test]
    fn warmup_is_bounded_in_time_and_count_only_without_a_bound() {
        let noisy = |n: usize| {
            if n.is_multiple_of(2) {
                10_000.0
            } else {
                14_000.0
            }
        };
        let mut things = [thing(GEMM, None, noisy)];
        let t0 = Instant::now();
        let m = time_things(&mut (), &mut things, 2, 1, &stability(0.05)).unwrap();
        assert!(t0.elapsed().as_secs_f64() < 1.0);
        assert!(!m.warmups[0].settled && m.warmups[0].runs >= 2);
        let mut things = [thing(GEMM, None, noisy)];
        let m = time_things(&mut (), &mut things, 2, 1, &stability(0.0)).unwrap();
        assert_eq!(m.warmups[0].runs, 2);
    }

    #[test]
    fn an_inconsistent_baseline_is_remeasured_then_flagged() {
        // Issue 14: T_gemm 11.279 ms against T_seq 4.760 ms, in every measurement.
        let mut things = [
            thing(GEMM, None, |_| 11_279.0),
            thing(SEQ, Some(1_000.0), |_| 4_760.0),
            thing("encoded", None, |_| 4_700.0),
        ];
        let m = time_things(&mut (), &mut things, 1, 3, &stability(0.0)).unwrap();
        assert_eq!(m.attempts, 3, "first measurement and two retries");
        assert!(!m.consistent());
        assert!(failed(&m).contains(&"T_gemm <= T_seq"), "{:?}", m.checks);
        assert!(failed_for(&m.checks, "encoded").len() >= 2);
        // Every attempt's samples are kept.
        assert_eq!(m.samples.iter().filter(|s| s.what == GEMM).count(), 3);
    }

    #[test]
    fn a_swap_during_the_reps_is_remeasured_and_then_passes() {
        // Slow until run 6 (inside the first attempt's reps), fast after: the first attempt's
        // spread fails, the second is clean.
        let mut things = [
            thing(GEMM, None, |n| if n < 6 { 30_000.0 } else { 10_000.0 }),
            thing(SEQ, Some(4_000.0), |_| 14_000.0),
        ];
        let m = time_things(&mut (), &mut things, 2, 5, &stability(0.0)).unwrap();
        assert_eq!(m.attempts, 2, "{:?}", m.checks);
        assert!(m.consistent());
        assert_eq!(m.median_ms(GEMM), 10.0);
    }
}
