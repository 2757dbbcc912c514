//! What the search measures on: a point to tune ([`Job`]), its devices and settings, and what
//! measures one configuration of it: the GPU through a [`Rig`] that keeps one system per layout
//! and lowers it again for every other knob ([`OnGpu`]), or a stand-in in the search's CPU tests
//! ([`Measure`]); and what one report says of a mode ([`measured`]).

use crate::config::Config;
use crate::error::{Error, Result};
use crate::experiment::{self, Baselines, Options, Report, Stability, Verify, MIN_WARMUP_S};
use crate::gpu::Gpu;
use crate::hostlink::Path;
use crate::modes::{Kernels, ModeKind, System};
use crate::ranks::Inputs;

use super::knobs::{Given, Knobs};
use super::table::Measured;

/// How each configuration is measured, and how widely the search goes.
#[derive(Clone, Copy, Debug)]
pub struct Settings {
    pub reps: usize,
    /// Least untimed rounds of each measurement (at least 1); the rest of a point's measurements
    /// warm up for these rounds alone where the GPU stayed busy.
    pub warmup: usize,
    /// Bound on a settling warm-up, seconds: a point's first measurement and a figure read on cold
    /// clocks measured again (each at least [`MIN_WARMUP_S`] on a GPU), a measurement after its
    /// system was built anew, and every confirmation warm up until their figures settle.
    pub warmup_s: f64,
    pub seed: u64,
    /// Measure every point of the space's grid instead of searching it.
    pub exhaustive: bool,
    /// Search a point whose first experiment leaves no room to overlap too (by default each mode
    /// stands as given there).
    pub search_no_room: bool,
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
            search_no_room: false,
            chunk_tries: 3,
        }
    }
}

/// One point to tune: its workload's name, its configuration as given, and the modes to tune.
pub struct Job {
    pub workload: String,
    pub base: Config,
    pub modes: Vec<ModeKind>,
    /// The knobs given as flags: searched along no axis (their values are in `base`).
    pub given: Given,
    /// Fused mode's own configuration as given, where the model gives it one
    /// ([`super::model::fused_defaults`]): what a run without a table runs fused mode at. It differs
    /// from `base` only in its chunk count and order (knobs the search moves).
    pub fused: Option<Config>,
}

impl Job {
    /// `mode`'s configuration as given: what a run without a table runs it at.
    pub fn config(&self, mode: ModeKind) -> &Config {
        self.own(mode).unwrap_or(&self.base)
    }

    /// `mode`'s configuration as given where it is its own, apart from the point's (fused mode's).
    pub fn own(&self, mode: ModeKind) -> Option<&Config> {
        self.fused.as_ref().filter(|_| mode == ModeKind::Fused)
    }
}

/// The devices a point runs on and how they are linked.
pub struct Devices<'a> {
    pub gpus: &'a [Gpu],
    pub kernels: &'a [Kernels],
    pub path: Path,
}

/// How one experiment of the tuner is measured.
#[derive(Clone, Copy, Debug)]
pub(super) struct How {
    pub warmup: Warmup,
    pub baselines: Baselines,
    pub reps: usize,
}

/// The warm-up before an experiment's timed rounds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Warmup {
    /// Its rounds alone: the GPU stayed busy since the last measurement, its clocks up.
    Rounds,
    /// Until the figures settle, bounded by the warm-up's seconds: after the GPU sat idle (a system
    /// built anew, fresh operands uploaded) its clocks are down, and a confirmation decides.
    Settle,
    /// At least [`MIN_WARMUP_S`] on a GPU, then until the figures settle: a point's first
    /// measurement, and a figure read on cold clocks measured again, where clocks still climbing
    /// slowly can pass for settled within a shorter warm-up.
    Long,
}

/// Whether `e` leaves the devices unusable (a wait past its bound, a lost device): the tuning stops.
pub(super) fn fatal(e: &Error) -> bool {
    matches!(e, Error::Timeout { .. } | Error::DeviceLost { .. })
}

/// What the tuner measures one point on: the point's operands, made once, and the system of the
/// configuration measured last, lowered again for the next where it keeps the same buffers (every
/// knob but the chunk count and the reduce), so that a measurement costs its runs, not an
/// allocation, an upload and fresh inputs; where it cannot be lowered again, the next system adopts
/// its operands (no allocation or upload of them).
pub(super) struct Rig<'a, 'b> {
    pub d: &'a Devices<'b>,
    /// Bound on a settling warm-up, seconds.
    pub settle_s: f64,
    pub inputs: Option<Inputs>,
    pub sys: Option<System<'b>>,
    /// Where the last experiment's time went, in words ([`Measure::took`]).
    pub took: Option<String>,
}

impl<'b> Rig<'_, 'b> {
    /// One experiment of `modes` at `config`, measured `how`; a configuration that cannot run is
    /// `Ok(Err(why))`, and a mode that cannot run it is skipped with its reason in the report (as
    /// fused mode with the direct all-reduce, which the point's other modes still tune). The first
    /// of a point times every baseline but the untracked GEMM ([`Baselines::Costs`]: its GEMM and
    /// collective alone are the model's costs); the rest time sequential beside the mode
    /// ([`Baselines::Sequential`]) and check only the mode.
    pub(super) fn experiment(
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
                warmup_s: if how.warmup == Warmup::Rounds {
                    0.0
                } else {
                    s.warmup_s
                },
                min_warmup_s: if how.warmup == Warmup::Long {
                    MIN_WARMUP_S
                } else {
                    0.0
                },
                retries: 1,
                ..Default::default()
            },
            baselines: how.baselines,
        };
        let started = web_time::Instant::now();
        let (built_s, r) = self.measure(opts);
        let took = started.elapsed().as_secs_f64();
        self.took = Some(match &r {
            Ok(r) => {
                let t = r.took;
                let attempts = match r.attempts {
                    1 => String::new(),
                    n => format!(" in {n} attempts"),
                };
                format!(
                    "took {took:.1} s: built {built_s:.1} s, pipelines {:.1} s, checks {:.1} s, \
                     warm-up {:.1} s, reps {:.1} s{attempts}",
                    t.pipelines_s, t.checks_s, t.warmup_s, t.reps_s
                )
            }
            Err(_) => format!("took {took:.1} s (built {built_s:.1} s), failed"),
        });
        match r {
            Ok(r) => Ok(Ok(r)),
            Err(e) if fatal(&e) => Err(e),
            Err(e) => Ok(Err(e.to_string())),
        }
    }

    /// [`Self::experiment`]'s measurement, and the seconds spent making its system: building it and
    /// uploading its inputs, or lowering the last one again.
    fn measure(&mut self, opts: Options) -> (f64, Result<Report>) {
        let started = web_time::Instant::now();
        let built = self.build(opts);
        let built_s = started.elapsed().as_secs_f64();
        let r = built.and_then(|opts| {
            let (Some(sys), Some(inputs)) = (self.sys.as_mut(), self.inputs.as_ref()) else {
                unreachable!("made by build")
            };
            experiment::measure(sys, inputs, &opts)
        });
        (built_s, r)
    }

    /// The system `opts` runs on: the last one lowered again where it keeps its buffers, else one
    /// built anew on the last one's operands where they fit, else with the point's inputs uploaded;
    /// `opts` as the measurement then runs (its warm-up raised after a build).
    fn build(&mut self, mut opts: Options) -> Result<Options> {
        let kept = match self.sys.as_mut() {
            Some(sys) => sys.relower(opts.config.clone(), &opts.modes).is_ok(),
            None => false,
        };
        if !kept {
            // The GPU idled while the system was built: warm up until the figures settle.
            opts.stability.warmup_s = opts.stability.warmup_s.max(self.settle_s);
            // The last configuration's buffers go before the next one's are made, but its operands,
            // which hold the point's inputs already: the next takes them where they fit (their
            // upload is most of a build on the largest points).
            let operands = self.sys.take().map(System::into_operands);
            let sys = experiment::build_adopting(
                self.d.gpus,
                self.d.kernels,
                &opts,
                self.d.path,
                operands.unwrap_or_default(),
            )?;
            let inputs = self.inputs.get_or_insert_with(|| {
                Inputs::random(
                    opts.config.shape,
                    opts.config.dtype,
                    opts.config.collective,
                    &sys.chunking,
                    opts.seed,
                )
            });
            if !sys.adopted_operands() {
                sys.upload(inputs);
            }
            self.sys = Some(sys);
        }
        Ok(opts)
    }
}

/// What one report says of `mode` at `knobs`.
pub(super) fn measured(
    knobs: &Knobs,
    r: &std::result::Result<Report, String>,
    mode: ModeKind,
) -> Measured {
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
pub(super) trait Measure {
    /// `mode` at `knobs`, measured `how`.
    fn measure(&mut self, mode: ModeKind, knobs: &Knobs, how: How) -> Result<Measured>;

    /// Where the last measurement's time went, in words, once.
    fn took(&mut self) -> Option<String> {
        None
    }
}

/// The GPU's measurements of one point's configurations.
pub(super) struct OnGpu<'a, 'b> {
    pub rig: Rig<'a, 'b>,
    pub job: &'a Job,
    pub s: &'a Settings,
}

impl Measure for OnGpu<'_, '_> {
    fn measure(&mut self, mode: ModeKind, knobs: &Knobs, how: How) -> Result<Measured> {
        let r = match knobs.apply(&self.job.base) {
            Ok(c) => self.rig.experiment(&c, &[mode], self.s, how)?,
            Err(e) => Err(e.to_string()),
        };
        Ok(measured(knobs, &r, mode))
    }

    fn took(&mut self) -> Option<String> {
        self.rig.took.take()
    }
}
