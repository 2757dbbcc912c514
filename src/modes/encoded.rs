//! Encoded mode: the triggers decided ahead from the plan's dependencies and encoded in one
//! submission. Pass L holds GEMM stage L and then every step whose inputs were completed by earlier
//! passes; those ops touch disjoint buffers (the plan guarantees it), so wgpu puts no barrier between
//! them and the GPU runs the steps in the slots the GEMM leaves free. No host round trip.
//!
//! Where a step lands: a direct reduce-scatter step of stage s shares the pass of GEMM stage s+1. A
//! ring step of stage s updates the chunk its destination produces at stage s+1 (T3's stagger), and
//! an update may only follow that GEMM's stores, so it shares the pass of GEMM stage s+2; the last
//! ring step runs after the last GEMM stage (plan.rs, `steps_overlap_later_gemm_stages`).

use super::{run_recording, Mode, Run, System};
use crate::config::ModeKind;
use crate::error::Result;

pub struct Encoded;

impl Mode for Encoded {
    fn kind(&self) -> ModeKind {
        ModeKind::Encoded
    }

    fn skip_reason(&self, sys: &System) -> Option<String> {
        (sys.parts.len() > 1).then(|| {
            "encoded mode runs on one device: its submission cannot hold the host's copies between \
             devices"
                .to_string()
        })
    }

    fn run(&self, sys: &mut System) -> Result<Run> {
        let t = run_recording(sys, |l| &l.encoded)?;
        let passes: Vec<&[usize]> = sys.parts[0]
            .lowered
            .encoded
            .passes()
            .map(|p| &p.ops[..])
            .collect();
        Ok(Run::from_passes(sys, self.name(), sys.grain(), &passes, &t))
    }
}
