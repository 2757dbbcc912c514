//! Modes: how triggers are realised. Each mode runs recordings of the same lowered plan on the
//! [`System`]'s executor; adding a mode means one new file here and one entry in [`all`].

mod encoded;
mod fused;
mod host;
mod sequential;

pub use crate::config::{Config, StepLead};
use crate::error::{Error, Result};
use crate::executor::Executor;
pub use crate::executor::Kernels;
use crate::gpu::Gpu;
use crate::lower::{lower, Lowered, Recording};
use crate::plan::Plan;
use crate::ranks::Ranks;
use crate::schedule::Schedule;
use crate::shapes::Chunking;
use crate::timeline::{pass_events, Timeline};

pub use encoded::Encoded;
pub use fused::Fused;
pub use host::Host;
pub use sequential::Sequential;

/// One way of running the plan.
pub trait Mode {
    fn name(&self) -> &'static str;
    /// Why this mode cannot run here (a one-line reason), or None.
    fn skip_reason(&self, sys: &System) -> Option<String>;
    /// One repetition: reset the trackers, run the whole plan, return its timing and timeline.
    fn run(&self, sys: &mut System) -> Result<Run>;
}

/// Every mode, in report order.
pub fn all() -> Vec<Box<dyn Mode>> {
    vec![
        Box::new(Sequential),
        Box::new(Host::default()),
        Box::new(Encoded),
        Box::new(Fused),
    ]
}

/// When a mode decides that a step may start: the report marks the modes that track chunk completion
/// at run time (T3's trigger) apart from those whose order is fixed before anything runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Trigger {
    /// No overlap: every step after every GEMM (sequential).
    None,
    /// Planned ahead: the order of GEMMs and steps is encoded before the run (encoded).
    Planned,
    /// Tracked at run time: a chunk's counter reaching its threshold starts its steps (host, fused).
    Tracked,
}

impl Trigger {
    /// Of the mode named `mode` (by name, so each mode's file stays as it is).
    pub fn of(mode: &str) -> Trigger {
        match mode {
            "host" | "fused" => Trigger::Tracked,
            "encoded" => Trigger::Planned,
            _ => Trigger::None,
        }
    }

    /// Its word in the report's table and CSV.
    pub fn name(self) -> &'static str {
        match self {
            Trigger::None => "none",
            Trigger::Planned => "planned",
            Trigger::Tracked => "tracked",
        }
    }
}

/// Mode names accepted on the command line.
pub fn names() -> Vec<&'static str> {
    all().iter().map(|m| m.name()).collect()
}

/// What one repetition measured.
#[derive(Clone, Debug)]
pub struct Run {
    /// First GPU activity to last, microseconds (host clock where the adapter has no timestamps).
    pub total_us: f64,
    /// GEMM-only and step-only time where the mode separates them (sequential), microseconds.
    pub gemm_us: Option<f64>,
    pub comm_us: Option<f64>,
    pub timeline: Timeline,
    /// Host trigger latencies (chunk complete on the GPU clock -> its steps submitted), microseconds.
    pub trigger_latency_us: Vec<f64>,
    /// For each plan op, the (start, end) µs of the interval that contains it at the timeline's grain.
    pub op_spans: Vec<(f64, f64)>,
}

impl Run {
    /// A run made of `passes` (op indices) that took `t` (µs intervals): its total, one timeline event
    /// per lane and pass, and each op's span. Modes add what only they know.
    pub fn from_passes(
        sys: &System,
        mode: &str,
        grain: String,
        passes: &[impl AsRef<[usize]>],
        t: &[(f64, f64)],
    ) -> Run {
        let mut events = Vec::new();
        for (k, ops) in passes.iter().enumerate() {
            events.extend(pass_events(
                &sys.plan,
                ops.as_ref(),
                t[k].0,
                t[k].1,
                Some(k),
            ));
        }
        Run {
            total_us: t.last().map(|l| l.1).unwrap_or(0.0) - t.first().map(|f| f.0).unwrap_or(0.0),
            gemm_us: None,
            comm_us: None,
            timeline: Timeline {
                mode: mode.into(),
                grain,
                ranks: sys.config.ranks,
                events,
            },
            trigger_latency_us: vec![],
            op_spans: op_spans(sys.plan.ops.len(), passes, t),
        }
    }
}

/// Each op's span from the passes it ran in.
pub fn op_spans(n_ops: usize, passes: &[impl AsRef<[usize]>], t: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let mut spans = vec![(f64::NAN, f64::NAN); n_ops];
    for (ops, &span) in passes.iter().zip(t) {
        for &i in ops.as_ref() {
            spans[i] = span;
        }
    }
    spans
}

/// A plan lowered and bound to the ranks' buffers on one device: recordings made once, run many times.
pub struct System<'a> {
    pub gpu: &'a Gpu,
    pub kernels: &'a Kernels,
    pub config: Config,
    pub chunking: Chunking,
    pub plan: Plan,
    pub lowered: Lowered,
    pub ranks: Ranks,
    exec: Executor<'a>,
}

impl<'a> System<'a> {
    pub fn new(gpu: &'a Gpu, kernels: &'a Kernels, config: Config) -> Result<Self> {
        if kernels.gemm.dtype != config.dtype {
            return Err(Error::invalid(
                "kernels",
                format!("GEMM kernels for {} operands", kernels.gemm.dtype.name()),
                format!("those of the run's {} operands", config.dtype.name()),
            ));
        }
        let chunking = Chunking::new(config.shape.m, config.ranks, config.chunks)?;
        let schedule = Schedule::new(config.collective, &chunking);
        let target = kernels.target(gpu, 0);
        let plan = Plan::new(
            &schedule,
            &chunking,
            config.shape.n,
            target.tile_n,
            config.via,
        );
        let lowered = lower(&config, &chunking, &schedule, &plan, target);
        let ranks = Ranks::new(
            gpu,
            config.shape,
            config.dtype,
            config.collective,
            &chunking,
            &plan,
        )?;
        let passes = (plan.ops.len() + plan.levels + 8) as u32;
        let exec = Executor::new(gpu, kernels, &ranks, &lowered, passes)?;
        Ok(System {
            gpu,
            kernels,
            config,
            chunking,
            plan,
            lowered,
            ranks,
            exec,
        })
    }

    /// Device memory held: the ranks' buffers, plus the executor's pooled ones (fused mode's packed
    /// copies once it ran).
    pub fn device_bytes(&self) -> u64 {
        self.ranks.allocated + self.exec.allocated()
    }

    /// The bound on waiting for the whole plan.
    pub fn timeout(&self) -> std::time::Duration {
        self.gpu
            .timeout_for(self.config.total_flops(), self.plan.step_bytes() as f64)
    }

    /// The grain string for timelines of pass-structured modes.
    pub fn grain(&self) -> String {
        let t = &self.exec.timer;
        if t.gpu_clock() && t.covered() {
            "pass (GPU timestamps at compute-pass boundaries)".into()
        } else if t.gpu_clock() {
            "submission (host clock: more passes than the timestamp query set holds)".into()
        } else {
            "submission (host clock; adapter has no timestamp queries)".into()
        }
    }
}

/// Runs the recording `pick` chooses as one submission with a timestamp per pass; returns the
/// passes' intervals in µs (a host-clock estimate where there are no timestamps).
pub fn run_recording(
    sys: &mut System,
    pick: impl Fn(&Lowered) -> &Recording,
) -> Result<Vec<(f64, f64)>> {
    let bound = sys.timeout();
    let rec = pick(&sys.lowered);
    sys.exec.timer.reset();
    let done = sys
        .exec
        .submit(&sys.ranks, &sys.lowered, rec.label, &rec.commands, bound)?;
    let passes = rec.passes().count();
    let mut t = sys.exec.timer.spans_us(sys.gpu)?;
    if t.len() < passes || !sys.exec.timer.covered() {
        // No (or not enough) timestamps: spread the host time evenly, and say so in the grain.
        let host_us = (done.done - done.started).as_secs_f64() * 1e6;
        let each = host_us / passes.max(1) as f64;
        t = (0..passes)
            .map(|i| (i as f64 * each, (i + 1) as f64 * each))
            .collect();
    }
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tracked_modes_are_marked_apart_from_planned_ones() {
        let marks: Vec<(&str, Trigger)> =
            names().into_iter().map(|n| (n, Trigger::of(n))).collect();
        assert_eq!(
            marks,
            [
                ("sequential", Trigger::None),
                ("host", Trigger::Tracked),
                ("encoded", Trigger::Planned),
                ("fused", Trigger::Tracked),
            ]
        );
    }
}
