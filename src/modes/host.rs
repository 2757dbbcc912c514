//! Host mode: the pipelined host-side trigger loop (src/modes/trigger_loop/, on one device or
//! several). GEMM work goes out stage by stage with up to [`IN_FLIGHT`] submissions queued per
//! device (--host-loop in-flight), so the GPU does not wait for a decision. What a GEMM produces is
//! tracked; a step that waits only for steps already queued on its device follows them in queue
//! order (in a later pass of the same submission), so a collective's chain costs no host round trip
//! per step: each submission ends with a copy of the tracker counters that its own ops bumped and
//! that can still make a step ready (trigger_loop/rules.rs: `wanted`) into a pooled readback buffer
//! that maps when it completes; while the next submission runs the host decides which steps' inputs
//! reached their marks (`ready`: T3's threshold, checked by the CPU) and sends them with the next GEMM
//! stage. wgpu cannot map a buffer while GPU work uses it, so the host sees counters at submission
//! grain; the loop records each trigger's latency and its own waits, on the GPU clock by the offset
//! the submissions bound (trigger_loop/timeline.rs: `align`).

use super::trigger_loop::{self, Gate};
use super::{Mode, Run, System};
use crate::config::host::{HostGrain, HostWait};
use crate::config::ModeKind;
use crate::error::Result;

/// Submissions the loop keeps queued on a device (--host-loop in-flight overrides): one running while
/// the host decides the next from the counters of the one before. Two is the least that hides a
/// decision; each more hides a slower decision (or a shorter GEMM stage) but delays every step by
/// one more stage, since steps go with the first submission after the counters that made them ready.
pub const IN_FLIGHT: usize = 2;

/// The host trigger loop; `in_flight`: submissions kept queued per device, `wait`: how it waits on
/// the devices, `grain`: GEMM work per submission (each None: the system's `Config::host`, else its
/// default: `IN_FLIGHT` (2), spin on GPUs and block on CPU adapters, a stage).
#[derive(Clone, Copy, Debug, Default)]
pub struct Host {
    pub in_flight: Option<usize>,
    pub wait: Option<HostWait>,
    pub grain: Option<HostGrain>,
}

impl Mode for Host {
    fn kind(&self) -> ModeKind {
        ModeKind::Host
    }

    fn skip_reason(&self, _sys: &System) -> Option<String> {
        None
    }

    fn run(&self, sys: &mut System) -> Result<Run> {
        let knobs = sys.config.host;
        let depth = self
            .in_flight
            .or(knobs.in_flight)
            .map_or(IN_FLIGHT, |n| n.max(1));
        let wait = self.wait.unwrap_or(trigger_loop::default_wait(sys));
        let grain = self.grain.or(knobs.grain).unwrap_or(HostGrain::Stage);
        trigger_loop::run(sys, depth, Gate::Tracked(grain), wait, self.name())
    }
}
