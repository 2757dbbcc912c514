//! The step kernel (shaders/step.wgsl): the copy and reduce pipelines one step of a collective uses,
//! and the link model that bounds the workgroups a step may occupy.

use crate::error::Result;
use crate::gpu::Gpu;
use crate::lower::Wait;
use crate::shaders::{self, AdapterPut, Put, Variant};
use crate::shapes::Dtype;
pub use t3_core::kernels::step::{Link, StepParams, MAX_LINK_WORKGROUPS, STEP_WG};

/// Step pipelines, made once per device: each put without and with the second source (`acc`; see
/// `ACC` in shaders/step.wgsl for why they are two pipelines). The copy and the add move outputs of
/// type `out` (2-byte ones packed, shaders/put/packed.wgsl); the update is f32's.
pub struct StepKernel {
    pub layout: wgpu::BindGroupLayout,
    /// Element type of the outputs its copy and add move.
    pub out: Dtype,
    copy: [wgpu::ComputePipeline; 2],
    add: [wgpu::ComputePipeline; 2],
    update: [wgpu::ComputePipeline; 2],
    /// The copy that waits for its gate first (`WAIT`): host mode's landing ahead of its chunk; and
    /// the one that waits for its source's counter (`WATCH`): the send the device triggers.
    waiting_copy: wgpu::ComputePipeline,
    watching_copy: wgpu::ComputePipeline,
}

impl StepKernel {
    /// Pipelines for f32 outputs.
    pub fn new(gpu: &Gpu) -> Result<Self> {
        Self::for_outputs(gpu, Dtype::F32)
    }

    /// Pipelines whose copy and add move outputs of type `out`.
    pub fn for_outputs(gpu: &Gpu, out: Dtype) -> Result<Self> {
        let variant = |put| Variant {
            kernel: "step.wgsl",
            gemm: None,
            put,
            epilogue: None,
        };
        let layout = shaders::layout(gpu, "step layout", variant(Put::Store).interface()?);
        // Each put's pipelines without and with `acc`, and the copy's that wait for a gate or a mark.
        type Made = (
            [wgpu::ComputePipeline; 2],
            Option<[wgpu::ComputePipeline; 2]>,
        );
        let make = |put: Put, waiting: bool| -> Result<Made> {
            let label = format!("step ({put:?})");
            let m = shaders::module(gpu, &label, &variant(put), None, false)?;
            let with = |acc: bool, wait: Wait| {
                let label = format!(
                    "step ({put:?}{}{})",
                    if acc { ", acc" } else { "" },
                    match wait {
                        Wait::No => "",
                        Wait::Gate => ", waiting",
                        Wait::Mark => ", watching",
                    }
                );
                shaders::pipeline(
                    gpu,
                    &label,
                    &layout,
                    &m,
                    &[
                        ("ACC", f64::from(u8::from(acc))),
                        ("WAIT", f64::from(u8::from(wait == Wait::Gate))),
                        ("WATCH", f64::from(u8::from(wait == Wait::Mark))),
                    ],
                )
            };
            let waits = waiting
                .then(|| {
                    Ok::<_, crate::Error>([with(false, Wait::Gate)?, with(false, Wait::Mark)?])
                })
                .transpose()?;
            Ok(([with(false, Wait::No)?, with(true, Wait::No)?], waits))
        };
        let (copy, waiting) = make(Put::store(out), true)?;
        let [waiting_copy, watching_copy] = waiting.expect("made with its waiting copies");
        Ok(StepKernel {
            copy,
            waiting_copy,
            watching_copy,
            add: make(Put::add(out), false)?.0,
            update: make(Put::update(gpu), false)?.0,
            layout,
            out,
        })
    }

    /// The pipeline for `put` (Store copies, Add reduces, both at the kernel's output type;
    /// Atomic/Cas reduce f32 with update semantics), with the second source where `acc` (a step whose
    /// params have `has_acc` set); `wait`: the copy that waits for its gate first (a landing ahead
    /// of its chunk) or for its source's mark (the send the device triggers), neither with `acc`
    /// nor another put.
    pub fn pipeline(&self, put: Put, acc: bool, wait: Wait) -> &wgpu::ComputePipeline {
        if wait != Wait::No {
            debug_assert!(
                matches!(put, Put::Store | Put::StorePacked(_)) && !acc,
                "only copies wait"
            );
            return match wait {
                Wait::Gate => &self.waiting_copy,
                _ => &self.watching_copy,
            };
        }
        let pair = match put {
            Put::Store | Put::StorePacked(_) => &self.copy,
            Put::Add | Put::AddPacked(_) => &self.add,
            Put::Atomic
            | Put::Cas
            | Put::CasWindows
            | Put::AtomicWindows
            | Put::StoreWindows
            | Put::CoherentWindows => &self.update,
            Put::Word | Put::PlainWindows | Put::Four(_) => {
                unreachable!("no step writes words or fused mode's windows: {put:?}")
            }
        };
        &pair[usize::from(acc)]
    }
}
