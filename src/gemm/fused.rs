//! Fused mode's put as the caller chooses it, what it gives on an adapter, and the fused (or
//! watched) GEMM's pipeline.

use crate::error::{Error, Result};
use crate::gpu::Gpu;
use crate::shaders::{self, Put};

/// Fused mode's put as the caller chooses it (`--fused put` at the binary's edge): store | coherent
/// | atomic | cas | auto. store: tiles stored plainly behind the gates as relaxed atomic stores
/// (faster than coherent on most TP-8 presets with the triggering epilogue: see BENCHMARKS.md).
/// coherent = a `@coherent` output where the adapter has MEMORY_DECORATION_COHERENT (16-byte stores
/// and loads: 4x fewer operations for the spares that move the pieces), atomic = native f32 atomic
/// adds (SHADER_FLOAT32_ATOMIC), cas = compare-exchange adds: variants one device run can time
/// beside each other. Auto: coherent where it can be and the multiprocessors are known (fused mode's
/// paying defaults, `FusedTuning::paying`), else store.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FusedPut {
    #[default]
    Auto,
    Store,
    Coherent,
    Atomic,
    Cas,
}

impl FusedPut {
    /// Its word (`--fused put`'s value).
    pub fn name(self) -> &'static str {
        match self {
            FusedPut::Auto => "auto",
            FusedPut::Store => "store",
            FusedPut::Coherent => "coherent",
            FusedPut::Atomic => "atomic",
            FusedPut::Cas => "cas",
        }
    }
}

/// The put `choice` gives on `gpu` (an error where the adapter lacks what it needs).
pub fn fused_put(gpu: &Gpu, choice: FusedPut) -> Result<Put> {
    let atomic = gpu.has(wgpu::Features::SHADER_FLOAT32_ATOMIC);
    let coherent = gpu.has(wgpu::Features::MEMORY_DECORATION_COHERENT);
    match choice {
        FusedPut::Coherent if coherent => Ok(Put::CoherentWindows),
        FusedPut::Auto if coherent && gpu.sms.is_some() => Ok(Put::CoherentWindows),
        FusedPut::Auto | FusedPut::Store => Ok(Put::StoreWindows),
        FusedPut::Cas => Ok(Put::CasWindows),
        FusedPut::Atomic if atomic => Ok(Put::AtomicWindows),
        FusedPut::Coherent | FusedPut::Atomic => Err(Error::invalid(
            "--fused put",
            choice.name(),
            match (coherent, atomic) {
                (true, true) => "coherent, store, atomic, cas or auto",
                (true, false) => "coherent, store, cas or auto (no SHADER_FLOAT32_ATOMIC here)",
                (false, true) => {
                    "store, atomic, cas or auto (no MEMORY_DECORATION_COHERENT here)"
                }
                (false, false) => "store, cas or auto (no SHADER_FLOAT32_ATOMIC or MEMORY_DECORATION_COHERENT here)",
            },
        )),
    }
}

/// The fused GEMM's pipeline from its module (or the watched GEMM's: `watched`): packed B in two
/// windows (`split_b`) or one, on the persistent grid or a workgroup per tile.
pub(super) fn fused_pipeline(
    gpu: &Gpu,
    layout: &wgpu::BindGroupLayout,
    module: &wgpu::ShaderModule,
    split_b: bool,
    grid: bool,
    watched: bool,
) -> Result<wgpu::ComputePipeline> {
    let label = format!(
        "{} gemm (B in {} window{})",
        if watched { "watched" } else { "fused" },
        if split_b { "two" } else { "one" },
        if grid { ", persistent grid" } else { "" }
    );
    shaders::pipeline(
        gpu,
        &label,
        layout,
        module,
        &[
            ("B_WINDOWS", f64::from(u8::from(split_b))),
            ("GRID", f64::from(u8::from(grid))),
        ],
    )
}
