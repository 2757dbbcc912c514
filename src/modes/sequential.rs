//! Sequential mode, the paper's baseline: every rank's GEMM, then the collective (one pass of every
//! GEMM op, then one per step level: [`crate::lower::Lowered::sequential`]; on several devices the
//! trigger loop with each device's GEMM in one submission and every step gated on every GEMM, over
//! the same host links as host mode).

use super::trigger_loop::{self, Gate};
use super::{host, run_recording, span, Mode, Run, System};
use crate::config::ModeKind;
use crate::error::Result;

pub struct Sequential;

impl Mode for Sequential {
    fn kind(&self) -> ModeKind {
        ModeKind::Sequential
    }

    fn skip_reason(&self, _sys: &System) -> Option<String> {
        None
    }

    fn run(&self, sys: &mut System) -> Result<Run> {
        if sys.parts.len() > 1 {
            // Steps between devices need the host between their halves: the trigger loop, with
            // every step held until every GEMM completed.
            let wait = trigger_loop::default_wait(sys);
            return trigger_loop::run(sys, host::IN_FLIGHT, Gate::AfterGemms, wait, self.name());
        }
        let t = run_recording(sys, |l| &l.sequential)?;
        let passes: Vec<&[usize]> = sys.parts[0]
            .lowered
            .sequential
            .passes()
            .map(|p| &p.ops[..])
            .collect();
        let mut run = Run::from_passes(sys, self.name(), sys.grain(), &passes, &t);
        // The leading passes of GEMM work alone (one since the GEMM went in one pass).
        let lowered = &sys.parts[0].lowered;
        let gemm = passes
            .iter()
            .take_while(|p| {
                p.iter()
                    .all(|&i| lowered.ops[i].as_ref().is_some_and(|o| o.gemm))
            })
            .count()
            .min(t.len());
        run.gemm_us = Some(span(&t[..gemm]));
        run.comm_us = Some(span(&t[gemm..]));
        Ok(run)
    }
}
