//! The gather kernel (shaders/gather.wgsl): tracker counters copied into one buffer by a dispatch, so
//! a trigger loop reads a submission's counters back with one copy, not one per tracker buffer.

use bytemuck::{Pod, Zeroable};

use crate::error::Result;
use crate::gpu::Gpu;
use crate::shaders::{self, Put, Variant};

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

/// The gather pipeline, made once per device.
pub struct GatherKernel {
    pub layout: wgpu::BindGroupLayout,
    pub pipeline: wgpu::ComputePipeline,
}

impl GatherKernel {
    pub fn new(gpu: &Gpu) -> Result<Self> {
        let variant = Variant {
            kernel: "gather.wgsl",
            gemm: None,
            put: Put::Word,
            epilogue: None,
        };
        let layout = shaders::layout(gpu, "gather layout", variant.interface()?);
        let m = shaders::module(gpu, "gather", &variant, None, false)?;
        let pipeline = shaders::pipeline(gpu, "gather", &layout, &m, &[])?;
        Ok(GatherKernel { layout, pipeline })
    }
}
