//! The timeline: GPU-timestamped intervals of one mode's run (GEMM chunks, steps, passes) and host trigger events on one time axis.

use serde::Serialize;

use crate::plan::{Kind, Plan};

/// Which row of a Gantt chart / which Chrome-trace thread an event belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(tag = "lane", rename_all = "snake_case")]
pub enum Lane {
    /// GEMM work (chunk production) of one rank.
    Gemm { rank: usize },
    /// Steps (copies and reduces) whose destination is this rank.
    Step { rank: usize },
    /// Host-side triggers (host mode only).
    Host,
    /// The host trigger loop waiting for a submission to complete and its counters to map (host
    /// mode only; host clock aligned to the GPU clock at the first submission).
    HostWait,
    /// The host link from device `from` to device `to`: waiting for both ends' maps, then the copy.
    HostLink { from: usize, to: usize },
}

/// What an interval is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    /// A GEMM producing (part of) a chunk.
    Gemm,
    /// A copy step (all-gather, or the landing half of a land-then-reduce).
    Copy,
    /// A reduce step (update into the destination, or the reduce half of land-then-reduce).
    Reduce,
    /// A host trigger decision: the instant a chunk was seen complete and its steps submitted.
    Trigger,
    /// The host waiting for a submission and its counters.
    Wait,
}

/// One interval on the timeline, in microseconds from the start of the mode's run.
#[derive(Clone, Debug, Serialize)]
pub struct Event {
    pub lane: Lane,
    pub kind: EventKind,
    /// Short label, e.g. "r2 c5" or "r1->r2 c5".
    pub name: String,
    pub rank: usize,
    pub chunk: Option<usize>,
    /// Schedule stage the event belongs to (GEMM production stage or step stage).
    pub stage: Option<usize>,
    pub start_us: f64,
    pub end_us: f64,
}

/// Everything one mode's (single, representative) repetition recorded.
#[derive(Clone, Debug, Serialize)]
pub struct Timeline {
    /// Mode name: "sequential", "host", "encoded", "fused".
    pub mode: String,
    /// What one GPU interval covers ("pass": timestamps at compute-pass boundaries; "submission"; "none").
    pub grain: String,
    pub ranks: usize,
    /// The device of each rank, where they run on several (empty on one).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub device_of: Vec<usize>,
    pub events: Vec<Event>,
}

impl Timeline {
    /// End of the last event, in microseconds (0 for an empty timeline).
    pub fn span_us(&self) -> f64 {
        self.events.iter().map(|e| e.end_us).fold(0.0, f64::max)
    }

    /// How long the GPU work (GEMM, copies, reduces; not the host's triggers and waits) went on
    /// after the last GEMM work ended, in microseconds: the collective's part that no GEMM work hid
    /// (at the timeline's grain: a pass holding GEMM work counts as GEMM work to its end). None where
    /// the timeline has no GEMM event, or one interval holds everything (fused mode's single
    /// dispatch without its progress clock: nothing there separates the GEMM from the steps).
    pub fn after_gemm_us(&self) -> Option<f64> {
        if self.grain.starts_with("dispatch") {
            return None;
        }
        let work = || {
            self.events
                .iter()
                .filter(|e| !matches!(e.kind, EventKind::Trigger | EventKind::Wait))
        };
        let last = work()
            .filter(|e| e.kind == EventKind::Gemm)
            .map(|e| e.end_us)
            .reduce(f64::max)?;
        let end = work().map(|e| e.end_us).fold(last, f64::max);
        Some(end - last)
    }

    /// The host links' lanes its events use, in order.
    pub fn link_lanes(&self) -> Vec<Lane> {
        let mut links: Vec<Lane> = self
            .events
            .iter()
            .map(|e| e.lane)
            .filter(|l| matches!(l, Lane::HostLink { .. }))
            .collect();
        links.sort();
        links.dedup();
        links
    }
}

/// Timeline events for op indices that ran in one pass over [start, end] µs: one event per lane
/// and kind, of the ops' schedule stage where they share one (sequential's one GEMM pass holds
/// every stage).
pub fn pass_events(plan: &Plan, ops: &[usize], start: f64, end: f64) -> Vec<Event> {
    let mut groups: Vec<(Lane, EventKind, usize, Vec<usize>)> = Vec::new();
    for &i in ops {
        let op = &plan.ops[i];
        let (lane, kind, rank) = match op.kind {
            Kind::Gemm => (
                Lane::Gemm { rank: op.dst.rank },
                EventKind::Gemm,
                op.dst.rank,
            ),
            Kind::Copy { .. } => (
                Lane::Step { rank: op.dst.rank },
                EventKind::Copy,
                op.dst.rank,
            ),
            Kind::Reduce { .. } => (
                Lane::Step { rank: op.dst.rank },
                EventKind::Reduce,
                op.dst.rank,
            ),
        };
        match groups.iter_mut().find(|g| g.0 == lane && g.1 == kind) {
            Some(g) => g.3.push(i),
            None => groups.push((lane, kind, rank, vec![i])),
        }
    }
    groups
        .into_iter()
        .map(|(lane, kind, rank, group)| {
            let chunks: Vec<usize> = group.iter().map(|&i| plan.ops[i].dst.chunk).collect();
            let stage = plan.ops[group[0]].stage;
            let stage = group
                .iter()
                .all(|&i| plan.ops[i].stage == stage)
                .then_some(stage);
            (lane, kind, rank, chunks, stage)
        })
        .map(|(lane, kind, rank, chunks, stage)| Event {
            lane,
            kind,
            name: format!(
                "r{rank} {} c{}",
                match kind {
                    EventKind::Gemm => "gemm",
                    EventKind::Copy => "copy",
                    _ => "reduce",
                },
                chunks
                    .iter()
                    .map(|c| c.to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            ),
            rank,
            chunk: (chunks.len() == 1).then(|| chunks[0]),
            stage,
            start_us: start,
            end_us: end,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(kind: EventKind, start_us: f64, end_us: f64) -> Event {
        Event {
            lane: match kind {
                EventKind::Gemm => Lane::Gemm { rank: 0 },
                _ => Lane::Step { rank: 0 },
            },
            kind,
            name: String::new(),
            rank: 0,
            chunk: None,
            stage: None,
            start_us,
            end_us,
        }
    }

    #[test]
    fn a_pass_event_has_its_ops_stage_only_where_they_share_one() {
        use crate::schedule::{Collective, Schedule};
        use crate::shapes::Chunking;
        // Two ranks, two chunks each, all-reduce: each rank's GEMM makes two stages.
        let ch = Chunking::new(32, 2, 2).unwrap();
        let plan = Plan::new(
            &Schedule::new(Collective::AllReduce, &ch),
            &ch,
            8,
            128,
            crate::plan::ReduceVia::Update,
        );
        let gemm = |stage: Option<usize>| -> Vec<usize> {
            (0..plan.ops.len())
                .filter(|&i| plan.ops[i].kind == Kind::Gemm && plan.ops[i].dst.rank == 0)
                .filter(|&i| stage.is_none_or(|s| plan.ops[i].stage == s))
                .collect()
        };
        let stages = |ops: &[usize]| -> Vec<Option<usize>> {
            pass_events(&plan, ops, 0.0, 1.0)
                .iter()
                .map(|e| e.stage)
                .collect()
        };
        assert_eq!(stages(&gemm(Some(1))), vec![Some(1)]);
        // Sequential's one GEMM pass holds both stages: its event names none.
        assert_eq!(gemm(None).len(), 2 * gemm(Some(0)).len());
        assert_eq!(stages(&gemm(None)), vec![None]);
    }

    #[test]
    fn after_gemm_is_what_runs_past_the_last_gemm_work() {
        let mut t = Timeline {
            mode: "host".into(),
            grain: "pass".into(),
            ranks: 2,
            device_of: Vec::new(),
            events: vec![
                event(EventKind::Gemm, 0.0, 40.0),
                event(EventKind::Reduce, 10.0, 30.0),
                event(EventKind::Gemm, 40.0, 70.0),
                event(EventKind::Copy, 60.0, 95.0),
                event(EventKind::Trigger, 96.0, 97.0),
            ],
        };
        // The host's trigger after the last copy is no GPU work.
        assert_eq!(t.after_gemm_us(), Some(25.0));
        // Steps all hidden: nothing after.
        t.events.truncate(3);
        assert_eq!(t.after_gemm_us(), Some(0.0));
        // One dispatch holding everything: nothing separates the GEMM from the steps.
        t.grain = "dispatch (one fused dispatch holds every tile)".into();
        assert_eq!(t.after_gemm_us(), None);
        // No GEMM on the timeline: nothing to measure from.
        t.grain = "pass".into();
        t.events.retain(|e| e.kind != EventKind::Gemm);
        assert_eq!(t.after_gemm_us(), None);
    }
}
