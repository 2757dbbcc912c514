//! Fused mode: the device-side trigger, T3's transparency. One dispatch covers every rank's
//! staggered production (all ranks' buffers packed, one binding per role or two windows of one for
//! the output, so the whole plan is one usage scope); the workgroup whose counter increment completes
//! a chunk, a GEMM tile's or an incoming transfer's, publishes that chunk's transfer on a device-side
//! queue, split into the link's pieces, which any workgroup claims and performs with update
//! semantics (shaders/epilogue/fused.wgsl). Nothing waits on another workgroup. The packing and the
//! variants (T3_FUSED_*) are lowered in src/lower/fused.rs.

use super::{run_recording, Mode, Run, System};
use crate::config::ModeKind;
use crate::error::{Error, Result};
use crate::timeline::{pass_events, Timeline};

pub struct Fused;

impl Mode for Fused {
    fn kind(&self) -> ModeKind {
        ModeKind::Fused
    }

    fn skip_reason(&self, sys: &System) -> Option<String> {
        sys.parts[0].lowered.fused.as_ref().err().cloned()
    }

    fn run(&self, sys: &mut System) -> Result<Run> {
        if let Err(reason) = &sys.parts[0].lowered.fused {
            return Err(Error::invalid(
                "mode",
                "fused",
                format!("a mode this configuration supports ({reason})"),
            ));
        }
        let t = run_recording(sys, |l| l.fused.as_ref().expect("checked above"))?;
        let (start, end) = t.first().copied().unwrap_or_default();
        let grain = if sys.parts[0].exec.timer.covered() {
            "dispatch (one fused dispatch holds every tile, trigger and transfer; WGSL has no clock to split it)"
        } else {
            "submission (host clock)"
        };
        let all: Vec<usize> = (0..sys.plan.ops.len()).collect();
        Ok(Run {
            total_us: end - start,
            gemm_us: None,
            comm_us: None,
            timeline: Timeline {
                mode: self.name().into(),
                grain: grain.into(),
                ranks: sys.config.ranks,
                device_of: Vec::new(),
                events: pass_events(&sys.plan, &all, start, end, Some(0)),
            },
            trigger_latency_us: vec![],
            op_spans: vec![(start, end); sys.plan.ops.len()],
        })
    }
}
