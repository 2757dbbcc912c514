//! Encoded mode: the triggers decided ahead from the plan's dependencies and encoded in one
//! submission. Pass L holds GEMM stage L and then every step whose inputs were completed by earlier
//! passes; those ops touch disjoint buffers (the plan guarantees it), so wgpu puts no barrier between
//! them and the GPU runs the steps in the slots the GEMM leaves free. No host round trip.
//!
//! Where a step lands: a direct reduce-scatter step of stage s shares the pass of GEMM stage s+1. A
//! ring step of stage s updates the chunk its destination produces at stage s+1 (T3's stagger), and
//! an update may only follow that GEMM's stores, so it shares the pass of GEMM stage s+2; the last
//! ring step runs after the last GEMM stage (plan.rs, `steps_overlap_later_gemm_stages`).

use super::{grain, run_passes, Mode, Run, System};
use crate::error::Result;
use crate::gemm::StoreMode;

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
        Ok(Run::from_passes(sys, self.name(), grain(sys), &passes, &t))
    }
}
