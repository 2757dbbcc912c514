//! Sequential mode, the paper's baseline: every rank's GEMM, then the collective.

use super::{grain, run_passes, Mode, Run, System};
use crate::error::Result;
use crate::gemm::StoreMode;

pub struct Sequential;

/// The sequential passes: one per GEMM stage, then one per step level (the finest grain that keeps
/// the order: a step level only after every GEMM).
pub fn passes(sys: &System) -> (Vec<Vec<usize>>, usize) {
    let stages = sys.schedule.gemm_stages();
    let mut passes: Vec<Vec<usize>> = vec![Vec::new(); stages];
    for i in sys.gemm_ops() {
        passes[sys.plan.ops[i].stage].push(i);
    }
    let mut levels: Vec<Vec<usize>> = vec![Vec::new(); sys.plan.levels];
    for i in sys.step_ops() {
        levels[sys.plan.ops[i].level].push(i);
    }
    passes.extend(levels.into_iter().filter(|l| !l.is_empty()));
    (passes, stages)
}

impl Mode for Sequential {
    fn name(&self) -> &'static str {
        "sequential"
    }

    fn skip_reason(&self, _sys: &System) -> Option<String> {
        None
    }

    fn run(&self, sys: &System) -> Result<Run> {
        let (passes, stages) = passes(sys);
        let t = run_passes(sys, &passes, StoreMode::Store, "sequential")?;
        let span = |r: &[(f64, f64)]| match (r.first(), r.last()) {
            (Some(a), Some(b)) => b.1 - a.0,
            _ => 0.0,
        };
        let mut run = Run::from_passes(sys, self.name(), grain(sys), &passes, &t);
        run.gemm_us = Some(span(&t[..stages]));
        run.comm_us = Some(span(&t[stages..]));
        Ok(run)
    }
}
