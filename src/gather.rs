//! The gather kernel (shaders/gather.wgsl): tracker counters copied into one buffer by a dispatch, so
//! a trigger loop reads a submission's counters back with one copy, not one per tracker buffer.

use crate::error::Result;
use crate::gpu::Gpu;
use crate::shaders::{self, Put, Variant};
pub use t3_core::kernels::gather::{GatherParams, PER_DISPATCH};

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
