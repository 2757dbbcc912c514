//! Modes: how triggers are realised. Each mode runs recordings of the same lowered plan on the
//! [`System`]'s executor; adding a mode means one new file here and one entry in [`all`].

mod encoded;
mod fused;
mod host;
pub mod progress;
mod sequential;
mod system;
mod trigger_loop;

pub use crate::config::mode::Trigger;
pub use crate::config::{Config, ModeKind, StepLead};
use crate::error::Result;
pub use crate::executor::Kernels;
use crate::timeline::{pass_events, Timeline};
pub use system::{run_everywhere, run_recording, Part, System};

pub use encoded::Encoded;
pub use fused::Fused;
pub use host::{Host, IN_FLIGHT};
pub use sequential::Sequential;

/// One way of running the plan.
pub trait Mode {
    fn kind(&self) -> ModeKind;
    fn name(&self) -> &'static str {
        self.kind().name()
    }
    /// Why this mode cannot run here (a one-line reason), or None.
    fn skip_reason(&self, sys: &System) -> Option<String>;
    /// One repetition: reset the trackers, run the whole plan, return its timing and timeline.
    fn run(&self, sys: &mut System) -> Result<Run>;
    /// Its own sequential run, where its efficiency has a baseline of its own rather than the shared
    /// sequential run's: one repetition, returning its passes' spans (the first its GEMM, the rest its
    /// transfers).
    fn own_sequential(&self) -> Option<OwnSequential> {
        None
    }
}

/// One repetition of a mode's own sequential run ([`Mode::own_sequential`]).
pub type OwnSequential = fn(&mut System) -> Result<Vec<(f64, f64)>>;

/// Every mode's runner, in report order.
pub fn all() -> Vec<Box<dyn Mode>> {
    ModeKind::ALL.into_iter().map(runner).collect()
}

/// Mode names accepted on the command line.
pub fn names() -> Vec<&'static str> {
    ModeKind::names().to_vec()
}

/// The runner of mode `kind`.
pub fn runner(kind: ModeKind) -> Box<dyn Mode> {
    match kind {
        ModeKind::Sequential => Box::new(Sequential),
        ModeKind::Host => Box::new(Host::default()),
        ModeKind::Encoded => Box::new(Encoded),
        ModeKind::Fused => Box::new(Fused),
    }
}

/// First start to last end of the intervals `t` (µs; 0 for none): what passes in order took.
pub fn span(t: &[(f64, f64)]) -> f64 {
    match (t.first(), t.last()) {
        (Some(a), Some(b)) => b.1 - a.0,
        _ => 0.0,
    }
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
    /// What crossed between devices ahead of the fence (host mode across devices, with the flag
    /// handoff or the device's trigger).
    pub early_landings: Option<EarlyLandings>,
}

/// What crossed ahead of the fence in one run: the flag handoff's waiting landings, how many landed
/// every workgroup and how many gave up (their chunks then landed after their senders' fences); with
/// `--host-loop trigger=device`, the sends that waited in the kernel beside the GEMM making their
/// chunks, how many of those gave up (and went again as the host triggers), and the chunks landed
/// ahead of their puts beside GEMM work.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct EarlyLandings {
    pub landed: usize,
    pub gave_up: usize,
    pub watched: usize,
    pub watch_gave_up: usize,
    pub ahead: usize,
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
            events.extend(pass_events(&sys.plan, ops.as_ref(), t[k].0, t[k].1));
        }
        Run {
            total_us: span(t),
            gemm_us: None,
            comm_us: None,
            timeline: Timeline {
                mode: mode.into(),
                grain,
                ranks: sys.config.ranks,
                device_of: if sys.parts.len() > 1 {
                    (0..sys.config.ranks)
                        .map(|r| sys.placement.device(r))
                        .collect()
                } else {
                    Vec::new()
                },
                events,
            },
            trigger_latency_us: vec![],
            op_spans: op_spans(sys.plan.ops.len(), passes, t),
            early_landings: None,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tracked_modes_are_marked_apart_from_planned_ones() {
        let marks: Vec<(&str, Trigger)> = all()
            .iter()
            .map(|m| (m.name(), m.kind().trigger()))
            .collect();
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
