//! The search: per mode, short measurements within a deadline, each read on warm clocks by the
//! sequential timed beside it; one knob at a time from the best so far (chunk counts as the model
//! ranks them), then the rest of the grid nearest that best first (or every point of the grid,
//! `exhaustive`); the three best measured again with more reps, the best of those the choice; a
//! mode still slower than the point's fastest sequential, both read so, falls back. Measured on the
//! GPU through a `Rig` that keeps one system per layout and lowers it again for every other knob.
use std::collections::HashMap;
use std::time::Duration;

use web_time::Instant;

use crate::config::Config;
use crate::error::{Error, Result};
use crate::experiment::{self, Baselines, Options, Report, Stability, Verify, MIN_WARMUP_S};
use crate::gpu::Gpu;
use crate::hostlink::Path;
use crate::modes::System;
use crate::modes::{Kernels, ModeKind};
use crate::ranks::Inputs;

use super::knobs::Given;
use super::knobs::Knobs;
use super::model::{self, Costs};
use super::space::{self, Context};
use super::table::{Choice, Key, Measured, NotRun, Point};

/// How each configuration is measured, and how widely the search goes.
#[derive(Clone, Copy, Debug)]
pub struct Settings {
    pub reps: usize,
    /// Least untimed rounds of each measurement (at least 1); the rest of a point's measurements
    /// warm up for these rounds alone where the GPU stayed busy.
    pub warmup: usize,
    /// Bound on a settling warm-up, seconds: a point's first measurement (at least
    /// [`MIN_WARMUP_S`] on a GPU), a measurement after its system was built anew, and every
    /// confirmation warm up until their figures settle.
    pub warmup_s: f64,
    pub seed: u64,
    /// Measure every point of the space's grid instead of searching it.
    pub exhaustive: bool,
    /// Chunk counts tried along the chunk axis, the model's best first.
    pub chunk_tries: usize,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            reps: 3,
            warmup: 1,
            warmup_s: 1.0,
            seed: 1,
            exhaustive: false,
            chunk_tries: 3,
        }
    }
}

/// Most configurations of one mode the exhaustive grid measures: the largest space whole (host mode
/// across devices on an all-reduce at two ranks, 8,748), since a cut drops the last values of the
/// first axes (a chunk count, the direct all-reduce) outright.
pub const MAX_GRID: usize = 16384;

/// The fastest configurations of a mode measured again at the end, each with [`CONFIRM_REPS`]
/// times the reps: a choice among many short measurements favours the one whose noise ran low,
/// and the confirmation measures it for what it is.
const CONFIRM: usize = 3;
const CONFIRM_REPS: usize = 3;

/// Most rounds along every axis the search makes from its best so far (it stops sooner where a
/// round finds nothing faster).
const MAX_ROUNDS: usize = 3;

/// How one experiment of the tuner is measured.
#[derive(Clone, Copy, Debug)]
struct How {
    /// A point's first: every mode as given, every baseline, a warm-up until the figures settle.
    first: bool,
    /// A warm-up until the figures settle (bounded by the warm-up's seconds) rather than its rounds
    /// alone: after the GPU sat idle (a system built anew, fresh operands uploaded) its clocks are
    /// down, and a confirmation decides.
    settle: bool,
    baselines: Baselines,
    reps: usize,
}

/// One point to tune: its workload's name, its configuration as given, and the modes to tune.
pub struct Job {
    pub workload: String,
    pub base: Config,
    pub modes: Vec<ModeKind>,
    /// The knobs given as flags: searched along no axis (their values are in `base`).
    pub given: Given,
}

/// The devices a point runs on and how they are linked.
pub struct Devices<'a> {
    pub gpus: &'a [Gpu],
    pub kernels: &'a [Kernels],
    pub path: Path,
}

/// Whether `e` leaves the devices unusable (a wait past its bound, a lost device): the tuning stops.
fn fatal(e: &Error) -> bool {
    matches!(e, Error::Timeout { .. } | Error::DeviceLost { .. })
}

/// What the tuner measures one point on: the point's operands, made once, and the system of the
/// configuration measured last, lowered again for the next where it keeps the same buffers (every
/// knob but the chunk count and the reduce), so that a measurement costs its runs, not an
/// allocation, an upload and fresh inputs.
struct Rig<'a, 'b> {
    d: &'a Devices<'b>,
    /// Bound on a settling warm-up, seconds.
    settle_s: f64,
    inputs: Option<Inputs>,
    sys: Option<System<'b>>,
}

impl<'b> Rig<'_, 'b> {
    /// One experiment of `modes` at `config`, measured `how`; a configuration that cannot run is
    /// `Ok(Err(why))`, and a mode that cannot run it is skipped with its reason in the report (as
    /// fused mode with the direct all-reduce, which the point's other modes still tune). The first
    /// of a point times every baseline (its GEMM and collective alone are the model's costs); the
    /// rest time sequential beside the mode ([`Baselines::Sequential`]) and check only the mode.
    fn experiment(
        &mut self,
        config: &Config,
        modes: &[ModeKind],
        s: &Settings,
        how: How,
    ) -> Result<std::result::Result<Report, String>> {
        if let Err(e) = config.validate() {
            return Ok(Err(e.to_string()));
        }
        let opts = Options {
            config: config.clone(),
            modes: modes.to_vec(),
            reps: how.reps,
            warmup: s.warmup.max(1),
            seed: s.seed,
            verify: Some(Verify::Sample(8)),
            stability: Stability {
                // The pipelines are built once for the whole tuning, and the GPU's clocks stay up
                // while one configuration follows another on the same system: those warm up for
                // their rounds alone.
                warmup_s: if how.first || how.settle {
                    s.warmup_s
                } else {
                    0.0
                },
                min_warmup_s: if how.first { MIN_WARMUP_S } else { 0.0 },
                retries: 1,
                ..Default::default()
            },
            baselines: how.baselines,
        };
        match self.measure(opts) {
            Ok(r) => Ok(Ok(r)),
            Err(e) if fatal(&e) => Err(e),
            Err(e) => Ok(Err(e.to_string())),
        }
    }

    fn measure(&mut self, mut opts: Options) -> Result<Report> {
        let kept = match self.sys.as_mut() {
            Some(sys) => sys.relower(opts.config.clone(), &opts.modes).is_ok(),
            None => false,
        };
        if !kept {
            // The GPU idled while the system was built: warm up until the figures settle.
            opts.stability.warmup_s = opts.stability.warmup_s.max(self.settle_s);
            // The last configuration's buffers go before the next one's are made.
            self.sys = None;
            let sys = experiment::build(self.d.gpus, self.d.kernels, &opts, self.d.path)?;
            let inputs = self.inputs.get_or_insert_with(|| {
                Inputs::random(
                    opts.config.shape,
                    opts.config.dtype,
                    opts.config.collective,
                    &sys.chunking,
                    opts.seed,
                )
            });
            sys.upload(inputs);
            self.sys = Some(sys);
        }
        let (Some(sys), Some(inputs)) = (self.sys.as_mut(), self.inputs.as_ref()) else {
            unreachable!("made above")
        };
        experiment::measure(sys, inputs, &opts)
    }
}

/// What one report says of `mode` at `knobs`.
fn measured(knobs: &Knobs, r: &std::result::Result<Report, String>, mode: ModeKind) -> Measured {
    let failed = |why: String| Measured {
        knobs: knobs.clone(),
        median_ms: None,
        sequential_ms: None,
        consistent: false,
        error: Some(why),
    };
    let r = match r {
        Ok(r) => r,
        Err(e) => return failed(e.clone()),
    };
    let Some(m) = r.results.iter().find(|m| m.mode == mode) else {
        return failed(format!("{mode} was not measured"));
    };
    if let Some(why) = &m.skipped {
        return failed(format!("skipped: {why}"));
    }
    // The run's own check, against the bound its outputs' rounding gives (2-byte outputs across
    // devices round at each reduce).
    if m.wrong() {
        return failed("its result or trackers failed the check".into());
    }
    Measured {
        knobs: knobs.clone(),
        median_ms: m.median_ms.filter(|t| t.is_finite() && *t > 0.0),
        sequential_ms: Some(r.t_seq_ms).filter(|t| t.is_finite() && *t > 0.0),
        consistent: r.consistent,
        error: None,
    }
}

/// What measures one configuration of one mode: the GPU through [`Rig`] ([`OnGpu`]), or a
/// stand-in in the search's CPU tests.
trait Measure {
    /// `mode` at `knobs`, measured `how`.
    fn measure(&mut self, mode: ModeKind, knobs: &Knobs, how: How) -> Result<Measured>;
}

/// The GPU's measurements of one point's configurations.
struct OnGpu<'a, 'b> {
    rig: Rig<'a, 'b>,
    job: &'a Job,
    s: &'a Settings,
}

impl Measure for OnGpu<'_, '_> {
    fn measure(&mut self, mode: ModeKind, knobs: &Knobs, how: How) -> Result<Measured> {
        let r = match knobs.apply(&self.job.base) {
            Ok(c) => self.rig.experiment(&c, &[mode], self.s, how)?,
            Err(e) => Err(e.to_string()),
        };
        Ok(measured(knobs, &r, mode))
    }
}

/// What sequential's time depends on among the knobs: the chunk count, the reduce, the link's
/// budget (which throttles sequential's collective as well), the GEMM's grid and the collective.
type Layout = (usize, String, Option<u32>, Option<u32>, Option<String>);

fn layout(k: &Knobs) -> Layout {
    (
        k.chunks,
        k.reduce.clone(),
        k.link_workgroups,
        k.gemm_grid,
        k.collective.clone(),
    )
}

/// `median_ms` on warm clocks: scaled by the sequential timed beside it (`beside_ms`, the same
/// clocks) against its layout's sequential on warm clocks (`warm_ms`). The GPU's clocks fall
/// whenever it idles while the host lowers and checks, so that one figure can read 2-3x another of
/// the same configuration; a ratio of two figures timed together moves far less. Not the ratio
/// alone: a configuration whose sequential is slow would win by it.
fn on_warm_clocks(median_ms: f64, beside_ms: f64, warm_ms: f64) -> f64 {
    median_ms * warm_ms / beside_ms
}

/// The tuner of one point: what it measured so far, and its bounds.
struct Point1<'a, M: Measure> {
    m: M,
    job: &'a Job,
    s: &'a Settings,
    seen: HashMap<(ModeKind, Knobs), Measured>,
    /// Sequential's times per [`Layout`], as timed beside every measurement.
    sequential: HashMap<Layout, Vec<f64>>,
    progress: &'a dyn Fn(&str),
    /// The longest one measurement of each mode took so far: a measurement is started only where
    /// one that long still ends before the deadline, so that the budget bounds the end of the
    /// tuning, not the start of its last measurement.
    longest: HashMap<ModeKind, Duration>,
}

impl<M: Measure> Point1<'_, M> {
    /// `mode` at `knobs`, measured once (a second ask returns the first figure).
    fn measure(&mut self, mode: ModeKind, knobs: &Knobs) -> Result<Measured> {
        let key = (mode, knobs.clone());
        if let Some(m) = self.seen.get(&key) {
            return Ok(m.clone());
        }
        (self.progress)(&format!(
            "{} {mode}: {}",
            self.job.workload,
            knobs.describe(mode)
        ));
        // Sequential beside every measurement, its rounds interleaved with the mode's: each figure
        // is read on warm clocks by it ([`on_warm_clocks`]).
        let how = How {
            first: false,
            settle: false,
            baselines: Baselines::Sequential,
            reps: self.s.reps,
        };
        let m = self.run(mode, knobs, how)?;
        self.seen.insert(key, m.clone());
        Ok(m)
    }

    /// One experiment of `mode` at `knobs`, measured `how`; its sequential time kept by layout.
    fn run(&mut self, mode: ModeKind, knobs: &Knobs, how: How) -> Result<Measured> {
        let started = Instant::now();
        let m = self.m.measure(mode, knobs, how)?;
        let took = started.elapsed();
        let longest = self.longest.entry(mode).or_default();
        *longest = (*longest).max(took);
        if let Some(t) = m.sequential_ms {
            self.sequential.entry(layout(knobs)).or_default().push(t);
        }
        Ok(m)
    }

    /// Whether one more measurement of `mode` ends before `deadline`, as long as its longest so far.
    fn fits(&self, mode: ModeKind, deadline: Instant) -> bool {
        Instant::now() + self.longest.get(&mode).copied().unwrap_or_default() <= deadline
    }

    /// Sequential's time on `l` on warm clocks: the fastest of its figures (the clocks only ever
    /// slow it).
    fn warm_ms(&self, l: &Layout) -> Option<f64> {
        let v = self.sequential.get(l)?;
        Some(v.iter().copied().fold(f64::INFINITY, f64::min)).filter(|t| t.is_finite())
    }

    /// `m`'s time on warm clocks ([`on_warm_clocks`]); None where it lacks either figure.
    fn warm_time(&self, m: &Measured) -> Option<f64> {
        m.ratio_beside()?;
        let w = self.warm_ms(&layout(&m.knobs))?;
        Some(on_warm_clocks(m.median_ms?, m.sequential_ms?, w))
    }

    /// Sorts `v` by time on warm clocks, the fastest first; what has none (a failure) last.
    fn sort(&self, v: &mut [Measured]) {
        let t = |m: &Measured| self.warm_time(m).unwrap_or(f64::INFINITY);
        v.sort_by(|a, b| t(a).total_cmp(&t(b)));
    }

    /// `mode`'s measurements, the fastest on warm clocks first.
    fn ranked(&self, mode: ModeKind) -> Vec<Measured> {
        let mut v: Vec<Measured> = self
            .seen
            .iter()
            .filter(|((m, _), _)| *m == mode)
            .map(|(_, v)| v.clone())
            .collect();
        self.sort(&mut v);
        v
    }

    /// The fastest of `mode`'s measurements on warm clocks.
    fn best(&self, mode: ModeKind) -> Option<Measured> {
        self.best_where(mode, |_| true)
    }

    /// The fastest of `mode`'s measurements on warm clocks whose knobs `keep` keeps.
    fn best_where(&self, mode: ModeKind, keep: impl Fn(&Knobs) -> bool) -> Option<Measured> {
        self.ranked(mode)
            .into_iter()
            .find(|m| m.ratio_beside().is_some() && keep(&m.knobs))
    }

    /// The search proper: one knob at a time from the best so far, every axis once per round (chunk
    /// counts as the model ranks them), rounds again from the new best while one finds a faster
    /// configuration, from each collective in turn in its share of the time; then, as the budget
    /// allows, the rest of the grid nearest the best first (two knobs changed, then three...),
    /// which ends as the grid where the budget covers it. Or every point of the grid in order
    /// (`exhaustive`). A configuration already measured costs nothing.
    fn search(
        &mut self,
        mode: ModeKind,
        axes: &[Vec<space::Value>],
        deadline: Instant,
    ) -> Result<()> {
        let base_knobs = Knobs::of(&self.job.base).canonical();
        let mut grid = space::grid(&space::start(&self.job.base, axes), axes, MAX_GRID);
        if !self.s.exhaustive {
            // The collective is no knob among the others: their best values differ with it (a GEMM
            // grid that pays beside the ring's steps can double the direct all-reduce's time, which
            // reduces by update only), so that one knob moved from the other's best says little of
            // it. The rounds run from each collective the space offers, moving the other knobs.
            let (collectives, others): (Vec<_>, Vec<_>) = axes
                .iter()
                .cloned()
                .partition(|a| matches!(a.first(), Some(space::Value::Collective(_))));
            let starts: Vec<Knobs> = match collectives.first() {
                Some(values) => values
                    .iter()
                    .map(|v| {
                        let mut k = base_knobs.clone();
                        v.set(&mut k);
                        k.canonical()
                    })
                    .filter(|k| space::runs(k, &self.job.base, mode))
                    .collect(),
                None => vec![base_knobs.clone()],
            };
            for (i, start) in starts.iter().enumerate() {
                let left = deadline.saturating_duration_since(Instant::now());
                let share = Instant::now() + left / (starts.len() - i) as u32;
                self.rounds(mode, &others, start, share)?;
            }
            let best = self.best(mode).map_or(base_knobs, |b| b.knobs);
            grid.sort_by_key(|k| k.differences(&best));
        }
        // Room for the confirmation: [`CONFIRM`] measurements of some times the reps each.
        let room = self.longest.get(&mode).copied().unwrap_or_default()
            * (CONFIRM * (CONFIRM_REPS + 1) / 2) as u32;
        let grid_deadline = deadline.checked_sub(room).unwrap_or(deadline);
        for k in grid.iter().map(Knobs::canonical) {
            if self.seen.contains_key(&(mode, k.clone())) || !space::runs(&k, &self.job.base, mode)
            {
                continue;
            }
            if !self.fits(mode, grid_deadline) {
                break;
            }
            self.measure(mode, &k)?;
        }
        Ok(())
    }

    /// Rounds of one-knob moves along `axes` from the fastest measured configuration of `start`'s
    /// collective (`start` until one is), while a round finds a faster one, until `deadline`.
    fn rounds(
        &mut self,
        mode: ModeKind,
        axes: &[Vec<space::Value>],
        start: &Knobs,
        deadline: Instant,
    ) -> Result<()> {
        let limits: Vec<usize> = axes.iter().map(Vec::len).collect();
        let best = |p: &Self| p.best_where(mode, |k| k.collective == start.collective);
        for _ in 0..MAX_ROUNDS {
            let before = best(self).and_then(|b| self.warm_time(&b));
            let mut measured = 0;
            for (a, v) in space::rounds(&limits) {
                let mut k = best(self).map_or(start.clone(), |b| b.knobs);
                axes[a][v].set(&mut k);
                let k = k.canonical();
                if self.seen.contains_key(&(mode, k.clone()))
                    || !space::runs(&k, &self.job.base, mode)
                {
                    continue;
                }
                if !self.fits(mode, deadline) {
                    return Ok(());
                }
                self.measure(mode, &k)?;
                measured += 1;
            }
            let after = best(self).and_then(|b| self.warm_time(&b));
            if measured == 0 || after >= before {
                break;
            }
        }
        Ok(())
    }

    /// The [`CONFIRM`] fastest of `mode`'s configurations measured again, each with sequential
    /// beside it, a settling warm-up and [`CONFIRM_REPS`] times the reps, as the deadline allows
    /// (the first whatever it says, at the reps where it is past; the search left room for all of
    /// them). A confirmation that failed is kept, without a time; [`Self::pick`] orders them.
    fn confirm(&mut self, mode: ModeKind, deadline: Instant) -> Result<Vec<Measured>> {
        let mut confirmed: Vec<Measured> = Vec::new();
        let top: Vec<Measured> = self
            .ranked(mode)
            .into_iter()
            .filter(|m| m.ratio_beside().is_some())
            .take(CONFIRM)
            .collect();
        for m in &top {
            let fits = self.fits(mode, deadline);
            if !fits && !confirmed.is_empty() {
                break;
            }
            // The first is measured whatever the deadline says: past it, at the search's reps, so
            // that a point whose runs take most of a second passes its budget by one measurement,
            // not by three times one.
            let how = How {
                first: false,
                settle: true,
                baselines: Baselines::Sequential,
                reps: self.s.reps * if fits { CONFIRM_REPS } else { 1 },
            };
            confirmed.push(self.run(mode, &m.knobs, how)?);
        }
        Ok(confirmed)
    }

    /// `mode`'s choice: its search over `axes` until `deadline`, then the confirmation, then
    /// [`Self::pick`]. None where nothing ran.
    fn choose(
        &mut self,
        mode: ModeKind,
        fitted: &Costs,
        axes: &[Vec<space::Value>],
        deadline: Instant,
    ) -> Result<Option<Choice>> {
        self.search(mode, axes, deadline)?;
        let alternatives = self.ranked(mode);
        let confirmed = self.confirm(mode, deadline)?;
        let mut c = Choice {
            mode,
            model_ms: None,
            given_ms: self
                .seen
                .get(&(mode, Knobs::of(&self.job.base)))
                .and_then(|m| m.median_ms),
            median_ms: f64::NAN,
            sequential_ms: None,
            knobs: Knobs::of(&self.job.base),
            speedup: f64::NAN,
            fallback: false,
            alternatives,
            confirmed,
        };
        Ok(self.pick(&mut c, fitted).then_some(c))
    }

    /// Sorts `c`'s confirmations by time on warm clocks as read now (failures last) and makes `c`
    /// the first, or where none could be confirmed in time the fastest measured whose confirmation did not fail; false where none
    /// ran. Again once every mode is measured: a later mode's sequential figures can lower a
    /// layout's warm time, and the choice must be the fastest on the figures it is judged by.
    fn pick(&self, c: &mut Choice, fitted: &Costs) -> bool {
        self.sort(&mut c.confirmed);
        let failed = |k: &Knobs| {
            c.confirmed
                .iter()
                .any(|m| m.knobs == *k && m.median_ms.is_none())
        };
        let t = |m: &Measured| self.warm_time(m).unwrap_or(f64::INFINITY);
        let best = c
            .confirmed
            .iter()
            .find(|m| self.warm_time(m).is_some())
            .or_else(|| {
                c.alternatives
                    .iter()
                    .filter(|m| self.warm_time(m).is_some() && !failed(&m.knobs))
                    .min_by(|a, b| t(a).total_cmp(&t(b)))
            })
            .cloned();
        let Some(best) = best else {
            return false;
        };
        c.model_ms = Some(model::predict_ms(
            c.mode,
            fitted,
            self.job.base.ranks,
            best.knobs.chunks,
        ));
        c.median_ms = best.median_ms.unwrap_or(f64::NAN);
        c.sequential_ms = best.sequential_ms;
        c.knobs = best.knobs;
        true
    }

    /// Sequential's time at this point: its fastest layout's on warm clocks (read as every mode's
    /// time on warm clocks is, so that a fastest figure's low noise cancels in a speedup).
    fn sequential_ms(&self) -> f64 {
        self.sequential
            .keys()
            .filter_map(|l| self.warm_ms(l))
            .filter(|t| *t > 0.0)
            .fold(f64::INFINITY, f64::min)
    }
}

/// `c`'s speedup over the point's sequential (`sequential_ms`, its fastest layout on warm clocks),
/// its time read on warm clocks where it has sequential beside it (`warm_ms`: its layout's
/// sequential on warm clocks), and whether it falls back: even its best ran slower.
fn judge(c: &mut Choice, sequential_ms: f64, warm_ms: Option<f64>) {
    let t = match (c.sequential_ms, warm_ms) {
        (Some(beside), Some(w)) => on_warm_clocks(c.median_ms, beside, w),
        _ => c.median_ms,
    };
    c.speedup = sequential_ms / t;
    c.fallback = c.speedup < 1.0;
}

/// Tunes `job` on `d` until `deadline` (at least one measurement of each mode whatever the
/// deadline), each mode's search over the space `ctx` gives; `progress` hears of each measurement.
pub fn tune_point(
    d: &Devices,
    job: &Job,
    s: &Settings,
    ctx: Context,
    deadline: Instant,
    progress: &dyn Fn(&str),
) -> Result<Point> {
    let mut p = Point1 {
        m: OnGpu {
            rig: Rig {
                d,
                settle_s: s.warmup_s,
                inputs: None,
                sys: None,
            },
            job,
            s,
        },
        job,
        s,
        seen: HashMap::new(),
        sequential: HashMap::new(),
        progress,
        longest: HashMap::new(),
    };
    // Every mode at the configuration as given, in one experiment: its GEMM and collective alone
    // are the model's costs.
    let base_knobs = Knobs::of(&job.base).canonical();
    progress(&format!("{}: every mode as given", job.workload));
    let started = Instant::now();
    let first = How {
        first: true,
        settle: true,
        baselines: Baselines::All,
        reps: s.reps,
    };
    let base = p.m.rig.experiment(&job.base, &job.modes, s, first)?;
    // Each mode's share of that experiment, until one of its own measurements says better.
    let share = started.elapsed() / job.modes.len().max(1) as u32;
    for &m in &job.modes {
        p.longest.insert(m, share);
    }
    for &m in &job.modes {
        let got = measured(&base_knobs, &base, m);
        if let Some(t) = got.sequential_ms {
            p.sequential
                .entry(layout(&base_knobs))
                .or_insert_with(|| vec![t]);
        }
        p.seen.insert((m, base_knobs.clone()), got);
    }
    let costs = match &base {
        Ok(r) => Costs {
            gemm_ms: r.t_gemm_ms,
            comm_ms: r.t_comm_ms,
            pass_ms: 0.0,
        },
        Err(e) => {
            return Err(Error::invalid(
                "tune point",
                format!("{} as given", job.workload),
                format!("a configuration that runs ({e})"),
            ))
        }
    };
    // Each mode that ran as given, with the model fitted to it and the space it searches: the
    // model prunes the chunk axis to its best few, and the grid and the search share the space.
    let mut spaces: Vec<(ModeKind, Costs, Vec<Vec<space::Value>>)> = Vec::new();
    let mut not_run = Vec::new();
    for &mode in job.modes.iter().filter(|&&m| m != ModeKind::Sequential) {
        // Skipped or failed as given (a mode that cannot run here): nothing to tune, said.
        let given = &p.seen[&(mode, base_knobs.clone())];
        let Some(t) = given.median_ms else {
            not_run.push(NotRun {
                mode,
                why: match given
                    .error
                    .as_deref()
                    .map(|e| (e, e.strip_prefix("skipped: ")))
                {
                    Some((_, Some(why))) => format!("it cannot run here as given ({why})"),
                    Some((e, None)) => format!("as given, {e}"),
                    None => "as given, it gave no time".into(),
                },
            });
            continue;
        };
        let fitted = model::fit_pass(mode, &costs, job.base.ranks, job.base.chunks, t);
        let mut chunks = space::chunk_order(mode, &fitted, &job.base);
        chunks.truncate(s.chunk_tries.max(1));
        let axes = space::not_given(space::axes(mode, &job.base, &chunks, ctx), &job.given);
        spaces.push((mode, fitted, axes));
    }
    // The smallest spaces first: what a mode leaves of its share goes to the modes after it.
    spaces.sort_by_key(|(_, _, axes)| axes.iter().map(Vec::len).product::<usize>());
    let n_modes = spaces.len().max(1) as u32;
    let mut choices = Vec::new();
    for (i, (mode, fitted, axes)) in spaces.into_iter().enumerate() {
        // This mode's share of what is left.
        let left = deadline.saturating_duration_since(Instant::now());
        let mode_deadline = Instant::now() + left / (n_modes - i as u32);
        match p.choose(mode, &fitted, &axes, mode_deadline)? {
            Some(c) => choices.push((c, fitted)),
            None => not_run.push(NotRun {
                mode,
                why: "no configuration it measured gave a time that held when measured again"
                    .into(),
            }),
        }
    }
    choices.sort_by_key(|(c, _)| job.modes.iter().position(|&m| m == c.mode));
    let sequential_ms = p.sequential_ms();
    for (c, fitted) in &mut choices {
        p.pick(c, fitted);
        let warm = p.warm_ms(&layout(&c.knobs));
        judge(c, sequential_ms, warm);
    }
    let choices = choices.into_iter().map(|(c, _)| c).collect();
    Ok(Point {
        workload: job.workload.clone(),
        key: Key::of(&job.base, d.gpus.len()),
        sequential_ms,
        modes: choices,
        not_run,
    })
}

#[cfg(test)]
#[path = "search_tests.rs"]
mod tests;
