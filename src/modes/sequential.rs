//! Sequential mode, the paper's baseline: every rank's GEMM, then the collective (one pass per GEMM
//! stage, then one per step level: [`crate::lower::Lowered::sequential`]).

use super::{run_recording, Mode, Run, System};
use crate::error::Result;

pub struct Sequential;

impl Mode for Sequential {
    fn name(&self) -> &'static str {
        "sequential"
    }

    fn skip_reason(&self, _sys: &System) -> Option<String> {
        None
    }

    fn run(&self, sys: &mut System) -> Result<Run> {
        let t = run_recording(sys, |l| &l.sequential)?;
        let stages = sys.lowered.stages;
        let span = |r: &[(f64, f64)]| match (r.first(), r.last()) {
            (Some(a), Some(b)) => b.1 - a.0,
            _ => 0.0,
        };
        let passes: Vec<&[usize]> = sys
            .lowered
            .sequential
            .passes()
            .map(|p| &p.ops[..])
            .collect();
        let mut run = Run::from_passes(sys, self.name(), sys.grain(), &passes, &t);
        run.gemm_us = Some(span(&t[..stages]));
        run.comm_us = Some(span(&t[stages..]));
        Ok(run)
    }
}
