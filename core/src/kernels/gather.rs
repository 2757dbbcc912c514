//! What the gather kernel (shaders/gather.wgsl) reads: how many trackers a dispatch gathers and
//! where they land.

use bytemuck::{Pod, Zeroable};

/// Trackers one dispatch gathers (the kernel's bindings t0..t6).
pub const PER_DISPATCH: usize = 7;

/// `GatherParams` in shaders/gather.wgsl (its layout checked against naga's reflection: src/reflect.rs).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct GatherParams {
    /// Trackers this dispatch reads (at most [`PER_DISPATCH`]).
    pub count: u32,
    /// Element of the output the first one lands at.
    pub at: u32,
    pub _pad: [u32; 2],
}
