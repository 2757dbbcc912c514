//! The kernels an executor dispatches, and what lowering knows of a device and its GEMM kernel.

use crate::error::{Error, Result};
use crate::gather::GatherKernel;
use crate::gemm::{Engine, FusedPut, GemmKernel};
use crate::gpu::Gpu;
use crate::lower::{DeviceId, Target};
use crate::shapes::Dtype;
use crate::steps::StepKernel;

/// llvmpipe ends every loop of an invocation once all its loops together have iterated this often
/// (Mesa's gallivm, LP_MAX_TGSI_LOOP_ITERATIONS), whatever the shader says.
const LLVMPIPE_LOOP_LIMIT: u32 = 65535;

/// The loop cap of `gpu`'s driver, where it has one (llvmpipe).
pub(crate) fn loop_limit(gpu: &Gpu) -> Option<u32> {
    (gpu.info.device_type == wgpu::DeviceType::Cpu && gpu.info.driver == "llvmpipe")
        .then_some(LLVMPIPE_LOOP_LIMIT)
}

/// The device's kernels, made once and shared by every system on it.
pub struct Kernels {
    pub gemm: GemmKernel,
    pub step: StepKernel,
    pub gather: GatherKernel,
}

impl Kernels {
    /// The kernels of f32 runs.
    pub fn new(gpu: &Gpu) -> Result<Self> {
        Self::with(gpu, Dtype::F32, None)
    }

    /// The kernels of runs whose GEMM operands are `dtype`, computed by `engine` (None: the
    /// adapter's best, see [`Engine::resolve`]).
    pub fn with(gpu: &Gpu, dtype: Dtype, engine: Option<Engine>) -> Result<Self> {
        Self::with_put(gpu, dtype, engine, FusedPut::Auto)
    }

    /// As [`Kernels::with`], fused mode's put chosen by `put`.
    pub fn with_put(
        gpu: &Gpu,
        dtype: Dtype,
        engine: Option<Engine>,
        put: FusedPut,
    ) -> Result<Self> {
        Self::for_outputs(gpu, dtype, Dtype::F32, engine, put)
    }

    /// As [`Kernels::with_put`], the GEMM's plain stores and the steps' copies and adds moving
    /// outputs of type `out` (`Config::out_dtype`).
    pub fn for_outputs(
        gpu: &Gpu,
        dtype: Dtype,
        out: Dtype,
        engine: Option<Engine>,
        put: FusedPut,
    ) -> Result<Self> {
        if engine == Some(Engine::Coopmat2) {
            return Err(crate::Error::invalid(
                "GEMM kernel",
                "coopmat2",
                "auto, simt or coop (the coopmat2 kernel has only its tracked store and untracked \
                 GEMM so far: bench-gemm's --kernel coopmat2)",
            ));
        }
        Ok(Kernels {
            gemm: GemmKernel::for_outputs(gpu, dtype, out, engine, put)?,
            step: StepKernel::for_outputs(gpu, out)?,
            gather: GatherKernel::new(gpu)?,
        })
    }

    /// What lowering needs to know of `gpu` (as device `device`) and these kernels.
    pub fn target(&self, gpu: &Gpu, device: DeviceId) -> Target {
        target(gpu, self.gemm.engine, device)
    }
}

/// What lowering needs to know of `gpu` (as device `device`) and the `engine` of its GEMM kernel.
pub fn target(gpu: &Gpu, engine: Engine, device: DeviceId) -> Target {
    Target {
        device,
        tile_n: engine.tile_n(),
        tile_group: engine.tile_group(),
        max_workgroups_per_dim: gpu.max_workgroups_per_dim,
        uniform_align: u64::from(gpu.limits.min_uniform_buffer_offset_alignment).max(64),
        max_buffer: gpu.max_buffer,
        max_binding: gpu.max_binding,
        max_storage_buffers: gpu.limits.max_storage_buffers_per_shader_stage,
        host_mapped: gpu.has(wgpu::Features::MAPPABLE_PRIMARY_BUFFERS),
        loop_limit: loop_limit(gpu),
        in_order: gpu.info.device_type == wgpu::DeviceType::Cpu,
        sms: gpu.sms,
        gemm_per_sm: engine.per_sm(),
    }
}

/// What lowering a step alone needs to know of `gpu` (as device `device`): it reads no GEMM field.
pub fn step_target(gpu: &Gpu, device: DeviceId) -> Target {
    target(gpu, Engine::Simt, device)
}

/// The kernels an executor dispatches: a device's whole set, or a caller's one kernel for standalone
/// work ([`Executor::pooled`](super::Executor::pooled)): the tracked GEMM's (coopmat2's included, which no [`Kernels`] holds)
/// or the calibrated step's.
#[derive(Clone, Copy)]
pub enum KernelSet<'a> {
    All(&'a Kernels),
    Gemm(&'a GemmKernel),
    Step(&'a StepKernel),
}

impl<'a> KernelSet<'a> {
    pub(super) fn gemm(self) -> Result<&'a GemmKernel> {
        match self {
            KernelSet::All(k) => Ok(&k.gemm),
            KernelSet::Gemm(g) => Ok(g),
            KernelSet::Step(_) => Err(self.lacks("a GEMM")),
        }
    }

    pub(super) fn step(self) -> Result<&'a StepKernel> {
        match self {
            KernelSet::All(k) => Ok(&k.step),
            KernelSet::Step(s) => Ok(s),
            KernelSet::Gemm(_) => Err(self.lacks("a step")),
        }
    }

    pub(super) fn gather(self) -> Result<&'a GatherKernel> {
        match self {
            KernelSet::All(k) => Ok(&k.gather),
            _ => Err(self.lacks("a gather")),
        }
    }

    fn lacks(self, what: &str) -> Error {
        let held = match self {
            KernelSet::All(_) => "every kernel",
            KernelSet::Gemm(_) => "one GEMM kernel",
            KernelSet::Step(_) => "one step kernel",
        };
        Error::invalid(
            "recording",
            format!("one dispatching {what}"),
            format!("what this executor's kernels run (it holds {held})"),
        )
    }
}
