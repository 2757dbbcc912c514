//! What the step kernel (shaders/step.wgsl) reads, and the link model that bounds the workgroups a
//! step may occupy.

use bytemuck::{Pod, Zeroable};

/// Invocations per step workgroup (workgroup_size in shaders/step.wgsl).
pub const STEP_WG: u32 = 256;

/// `StepParams` in shaders/step.wgsl (its layout checked against naga's reflection: src/reflect.rs).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct StepParams {
    pub len4: u32,
    pub src_off4: u32,
    pub dst_off4: u32,
    pub n_wg: u32,
    pub dispatch_x: u32,
    pub counter: u32,
    pub done_slot: u32,
    pub bump: u32,
    pub has_acc: u32,
    /// The waiting landing's and the watching send's (`WAIT`, `WATCH` in shaders/step.wgsl): loads
    /// a workgroup makes before it gives up (0 elsewhere).
    pub spins: u32,
    /// The watching send's: the value of its source's counter (word 0 of `counters`, the source's
    /// tracker) once the GEMM made the chunk.
    pub mark: u32,
    /// The watching send's: the unit of `dst` (past the chunk, in its slot) that a workgroup giving
    /// up marks for the host to see.
    pub status4: u32,
}

/// Gate loads a waiting landing's workgroup makes before it gives up: about seconds on a GPU, far
/// past any GEMM stage it waits beside, since the host raises every gate once the sender's
/// submission completed, flag or not; a bound so that no wait hangs (the run's timeout is the
/// host's).
pub const LANDING_SPINS: u32 = 1 << 24;

/// Most workgroups a link budget may name: a dispatch's limit per dimension on every adapter
/// (WebGPU's default); a budget above a chunk's need is the need, so larger ones only mislead.
pub const MAX_LINK_WORKGROUPS: u32 = 65535;

/// The emulated interconnect: how many workgroups one step may use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum Link {
    /// One vec4 per invocation: as many workgroups as the chunk needs.
    Unthrottled,
    /// At most this many workgroups, each striding over the chunk (NCCL-channel style).
    Workgroups(u32),
}

impl Link {
    /// Workgroups a step over `len4` vec4s gets.
    pub fn workgroups(self, len4: u32) -> u32 {
        let need = len4.div_ceil(STEP_WG).max(1);
        match self {
            Link::Unthrottled => need,
            Link::Workgroups(w) => need.min(w.max(1)),
        }
    }

    /// The workgroups it caps a step at (None: unthrottled).
    pub fn cap(self) -> Option<u32> {
        match self {
            Link::Unthrottled => None,
            Link::Workgroups(w) => Some(w),
        }
    }

    /// This budget, or `w` workgroups where it is unthrottled: what a kernel gets whose work, unlike
    /// a step between ranks of one device, has a cost of its own that bounds it (a step crossing
    /// devices through host memory).
    pub fn or_workgroups(self, w: u32) -> Link {
        match self {
            Link::Unthrottled => Link::Workgroups(w),
            given => given,
        }
    }

    pub fn describe(self) -> String {
        match self {
            Link::Unthrottled => "unthrottled".into(),
            Link::Workgroups(w) => format!("{w} workgroups"),
        }
    }
}
