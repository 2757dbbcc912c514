//! The step kernel (shaders/step.wgsl): the copy and reduce pipelines one step of a collective uses,
//! and the link model that bounds the workgroups a step may occupy.

use bytemuck::{Pod, Zeroable};

use crate::error::Result;
use crate::gpu::Gpu;
use crate::shaders::{self, Put, Variant};

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
    pub _pad: [u32; 3],
}

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

    pub fn describe(self) -> String {
        match self {
            Link::Unthrottled => "unthrottled".into(),
            Link::Workgroups(w) => format!("{w} workgroups"),
        }
    }
}

/// Step pipelines, made once per device: each put without and with the second source (`acc`; see
/// `ACC` in shaders/step.wgsl for why they are two pipelines).
pub struct StepKernel {
    pub layout: wgpu::BindGroupLayout,
    copy: [wgpu::ComputePipeline; 2],
    add: [wgpu::ComputePipeline; 2],
    update: [wgpu::ComputePipeline; 2],
}

impl StepKernel {
    pub fn new(gpu: &Gpu) -> Result<Self> {
        let variant = |put| Variant {
            kernel: "step.wgsl",
            gemm: None,
            put,
            epilogue: None,
        };
        let layout = shaders::layout(gpu, "step layout", variant(Put::Store).interface()?);
        let make = |put: Put| -> Result<[wgpu::ComputePipeline; 2]> {
            let label = format!("step ({put:?})");
            let m = shaders::module(gpu, &label, &variant(put), None, false)?;
            let with = |acc: bool| {
                let label = format!("step ({put:?}{})", if acc { ", acc" } else { "" });
                shaders::pipeline(
                    gpu,
                    &label,
                    &layout,
                    &m,
                    &[("ACC", f64::from(u8::from(acc)))],
                )
            };
            Ok([with(false)?, with(true)?])
        };
        Ok(StepKernel {
            copy: make(Put::Store)?,
            add: make(Put::Add)?,
            update: make(Put::update(gpu))?,
            layout,
        })
    }

    /// The pipeline for `put` (Store copies, Add reduces, Atomic/Cas reduce with update semantics),
    /// with the second source where `acc` (a step whose params have `has_acc` set).
    pub fn pipeline(&self, put: Put, acc: bool) -> &wgpu::ComputePipeline {
        let pair = match put {
            Put::Store => &self.copy,
            Put::Add => &self.add,
            Put::Atomic
            | Put::Cas
            | Put::CasWindows
            | Put::AtomicWindows
            | Put::StoreWindows
            | Put::CoherentWindows => &self.update,
            Put::Word | Put::PlainWindows => {
                unreachable!("no step writes words or the watched GEMM's windows: {put:?}")
            }
        };
        &pair[usize::from(acc)]
    }

    /// A bind group for one step over whole buffers `src` -> `dst` (no tracker bump, no second
    /// source) at `link`: what calibration and the step benchmark time. Returns it with its
    /// workgroup count; the params buffer lives as long as the bind group needs it.
    pub fn bind_standalone(
        &self,
        gpu: &Gpu,
        dst: &wgpu::Buffer,
        src: &wgpu::Buffer,
        counters: &wgpu::Buffer,
        len4: u32,
        link: Link,
    ) -> (wgpu::BindGroup, u32) {
        let n_wg = link.workgroups(len4);
        let params = StepParams {
            len4,
            n_wg,
            dispatch_x: gpu.fold(n_wg).0,
            ..Default::default()
        };
        let pbuf = gpu.init_buffer(
            "standalone step params",
            bytemuck::bytes_of(&params),
            wgpu::BufferUsages::UNIFORM,
        );
        let bg = shaders::bind(
            gpu,
            "standalone step",
            &self.layout,
            &[
                dst.as_entire_binding(),
                pbuf.as_entire_binding(),
                src.as_entire_binding(),
                counters.as_entire_binding(),
                src.as_entire_binding(),
            ],
        );
        (bg, n_wg)
    }

    /// Records a step bound by [`StepKernel::bind_standalone`] (its params' `has_acc` is 0, so the
    /// pipeline without the second source).
    pub fn dispatch(
        &self,
        gpu: &Gpu,
        pass: &mut wgpu::ComputePass<'_>,
        put: Put,
        bg: &wgpu::BindGroup,
        n_wg: u32,
    ) {
        gpu.dispatch(pass, self.pipeline(put, false), bg, n_wg);
    }
}
