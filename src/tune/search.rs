//! The search: per mode, short measurements of the configurations the model ranks first, one knob
//! at a time from the best so far (or every point of the grid, `exhaustive`), within a deadline;
//! the fastest measured is the choice, and a mode still slower than sequential falls back.

use std::collections::HashMap;
use std::time::Duration;

use web_time::Instant;

use crate::config::Config;
use crate::error::{Error, Result};
use crate::experiment::{self, Options, Report, Stability, Verify, MIN_WARMUP_S};
use crate::gpu::Gpu;
use crate::hostlink::Path;
use crate::modes::{Kernels, ModeKind};

use super::knobs::Given;
use super::knobs::Knobs;
use super::model::{self, Costs};
use super::space::{self, Context};
use super::table::{Choice, Key, Measured, Point};

/// How each configuration is measured, and how widely the search goes.
#[derive(Clone, Copy, Debug)]
pub struct Settings {
    pub reps: usize,
    pub warmup: usize,
    /// Bound on each measurement's warm-up, seconds.
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

/// Most configurations of one mode the exhaustive grid measures.
pub const MAX_GRID: usize = 4096;

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

/// One experiment of `modes` at `config`; a configuration that cannot run is `Ok(Err(why))`.
fn experiment(
    d: &Devices,
    config: &Config,
    modes: &[ModeKind],
    s: &Settings,
    first: bool,
) -> Result<std::result::Result<Report, String>> {
    if let Err(e) = config
        .validate()
        .and_then(|()| modes.iter().try_for_each(|&m| config.check_mode(m)))
    {
        return Ok(Err(e.to_string()));
    }
    let opts = Options {
        config: config.clone(),
        modes: modes.to_vec(),
        reps: s.reps,
        warmup: s.warmup,
        seed: s.seed,
        verify: Some(Verify::Sample(8)),
        stability: Stability {
            warmup_s: s.warmup_s,
            // The pipelines are built once for the whole tuning: only the first measurement
            // waits for the driver's optimised builds.
            min_warmup_s: if first { MIN_WARMUP_S } else { 0.0 },
            retries: 1,
            ..Default::default()
        },
    };
    match experiment::prepare_on(d.gpus, d.kernels, &opts, d.path)
        .and_then(|(mut sys, inputs)| experiment::measure(&mut sys, &inputs, &opts))
    {
        Ok(r) => Ok(Ok(r)),
        Err(e) if fatal(&e) => Err(e),
        Err(e) => Ok(Err(e.to_string())),
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
    let wrong =
        m.trackers_ok == Some(false) || m.max_rel_error.is_some_and(|e| e.is_nan() || e > 1e-4);
    if wrong {
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

/// The tuner of one point: what it measured so far, and its bounds.
struct Point1<'a, 'b> {
    d: &'a Devices<'b>,
    job: &'a Job,
    s: &'a Settings,
    seen: HashMap<(ModeKind, Knobs), Measured>,
    first: bool,
    progress: &'a dyn Fn(&str),
    /// The longest one measurement of each mode took so far: a measurement is started only where
    /// one that long still ends before the deadline, so that the budget bounds the end of the
    /// tuning, not the start of its last measurement.
    longest: HashMap<ModeKind, Duration>,
}

impl Point1<'_, '_> {
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
        let started = Instant::now();
        let r = match knobs.apply(&self.job.base) {
            Ok(c) => experiment(self.d, &c, &[mode], self.s, self.first)?,
            Err(e) => Err(e.to_string()),
        };
        self.first = false;
        let took = started.elapsed();
        let longest = self.longest.entry(mode).or_default();
        *longest = (*longest).max(took);
        let m = measured(knobs, &r, mode);
        self.seen.insert(key, m.clone());
        Ok(m)
    }

    /// Whether one more measurement of `mode` ends before `deadline`, as long as its longest so far.
    fn fits(&self, mode: ModeKind, deadline: Instant) -> bool {
        Instant::now() + self.longest.get(&mode).copied().unwrap_or_default() <= deadline
    }

    /// The fastest of `mode`'s measurements.
    fn best(&self, mode: ModeKind) -> Option<Measured> {
        self.seen
            .iter()
            .filter(|((m, _), _)| *m == mode)
            .filter_map(|(_, v)| v.median_ms.map(|t| (t, v)))
            .min_by(|a, b| a.0.total_cmp(&b.0))
            .map(|(_, v)| v.clone())
    }
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
        d,
        job,
        s,
        seen: HashMap::new(),
        first: true,
        progress,
        longest: HashMap::new(),
    };
    // Every mode at the configuration as given, in one experiment: its GEMM and collective alone
    // are the model's costs.
    let base_knobs = Knobs::of(&job.base);
    progress(&format!("{}: every mode as given", job.workload));
    let started = Instant::now();
    let base = experiment(d, &job.base, &job.modes, s, true)?;
    p.first = false;
    // Each mode's share of that experiment, until one of its own measurements says better.
    let share = started.elapsed() / job.modes.len().max(1) as u32;
    for &m in &job.modes {
        p.longest.insert(m, share);
    }
    for &m in &job.modes {
        let got = measured(&base_knobs, &base, m);
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
    let modes: Vec<ModeKind> = job
        .modes
        .iter()
        .copied()
        .filter(|&m| m != ModeKind::Sequential)
        .collect();
    let n_modes = modes.len().max(1) as u32;
    let mut choices = Vec::new();
    for (i, &mode) in modes.iter().enumerate() {
        // This mode's share of what is left.
        let left = deadline.saturating_duration_since(Instant::now());
        let mode_deadline = Instant::now() + left / (n_modes - i as u32);
        let at_base = p.seen[&(mode, base_knobs.clone())].clone();
        let Some(t) = at_base.median_ms else {
            // Skipped or failed as given (a mode that cannot run here): nothing to tune.
            continue;
        };
        let fitted = model::fit_pass(mode, &costs, job.base.ranks, job.base.chunks, t);
        let chunks = space::chunk_order(mode, &fitted, &job.base);
        let axes = space::not_given(space::axes(mode, &job.base, &chunks, ctx), &job.given);
        if s.exhaustive {
            for k in space::grid(&space::start(&job.base, &axes), &axes, MAX_GRID) {
                if !p.fits(mode, mode_deadline) {
                    break;
                }
                p.measure(mode, &k)?;
            }
        } else {
            // One knob at a time from the best so far, every axis once per round; chunk counts as
            // the model ranks them. A configuration already measured costs nothing.
            let limits: Vec<usize> = axes
                .iter()
                .enumerate()
                .map(|(a, axis)| {
                    if a == 0 {
                        s.chunk_tries.min(axis.len())
                    } else {
                        axis.len()
                    }
                })
                .collect();
            for (a, v) in space::rounds(&limits) {
                let mut k = p.best(mode).map_or(base_knobs.clone(), |b| b.knobs);
                axes[a][v].set(&mut k);
                if p.seen.contains_key(&(mode, k.clone())) {
                    continue;
                }
                if !p.fits(mode, mode_deadline) {
                    break;
                }
                p.measure(mode, &k)?;
            }
        }
        let Some(best) = p.best(mode) else { continue };
        let mut alternatives: Vec<Measured> = p
            .seen
            .iter()
            .filter(|((m, _), _)| *m == mode)
            .map(|(_, v)| v.clone())
            .collect();
        alternatives.sort_by(|a, b| {
            let t = |m: &Measured| m.median_ms.unwrap_or(f64::INFINITY);
            t(a).total_cmp(&t(b))
        });
        choices.push(Choice {
            mode,
            model_ms: Some(model::predict_ms(
                mode,
                &fitted,
                job.base.ranks,
                best.knobs.chunks,
            )),
            given_ms: at_base.median_ms,
            knobs: best.knobs,
            median_ms: best.median_ms.unwrap_or(f64::NAN),
            speedup: f64::NAN,
            fallback: false,
            alternatives,
        });
    }
    // Every speedup against the fastest sequential run measured at this point: a configuration that
    // slows sequential down does not make a mode look faster.
    let sequential_ms = p
        .seen
        .values()
        .filter_map(|m| m.sequential_ms)
        .fold(f64::INFINITY, f64::min);
    for c in &mut choices {
        c.speedup = sequential_ms / c.median_ms;
        c.fallback = c.median_ms > sequential_ms;
    }
    Ok(Point {
        workload: job.workload.clone(),
        key: Key::of(&job.base, d.gpus.len()),
        sequential_ms,
        modes: choices,
    })
}
