//! Encoded mode: the triggers decided ahead from the plan's dependencies and encoded in one
//! submission. Pass L holds GEMM stage L and then every step whose inputs were completed by earlier
//! passes; those ops touch disjoint buffers (the plan guarantees it), so wgpu puts no barrier between
//! them and the GPU runs the steps in the slots the GEMM leaves free. No host round trip.

use super::{grain, run_passes, Mode, Run, System};
use crate::error::Result;
use crate::gemm::StoreMode;
use crate::timeline::Timeline;

pub struct Encoded;

impl Mode for Encoded {
    fn name(&self) -> &'static str {
        "encoded"
    }

    fn skip_reason(&self, _sys: &System) -> Option<String> {
        None
    }

    fn run(&self, sys: &System) -> Result<Run> {
        let mut passes: Vec<Vec<usize>> = vec![Vec::new(); sys.plan.levels];
        // GEMM dispatches first within a pass: encoded after them, steps overlap the GEMM's tail;
        // encoded before, they delay it by their whole duration (measured on an H200, DESIGN.md).
        for i in sys.gemm_ops().chain(sys.step_ops()) {
            passes[sys.plan.ops[i].level].push(i);
        }
        passes.retain(|p| !p.is_empty());
        let t = run_passes(sys, &passes, StoreMode::Store, "encoded")?;
        let mut events = Vec::new();
        for (k, ops) in passes.iter().enumerate() {
            events.extend(sys.pass_events(ops, t[k].0, t[k].1, Some(k)));
        }
        let total = t.last().map(|l| l.1).unwrap_or(0.0) - t.first().map(|f| f.0).unwrap_or(0.0);
        Ok(Run {
            total_us: total,
            gemm_us: None,
            comm_us: None,
            timeline: Timeline {
                mode: self.name().into(),
                grain: grain(sys),
                ranks: sys.config.ranks,
                events,
            },
            trigger_latency_us: vec![],
            op_spans: super::op_spans(sys.plan.ops.len(), &passes, &t),
        })
    }
}
