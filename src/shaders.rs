//! Shader sources and their composition: a kernel from shaders/ plus the snippets it needs (how it
//! writes, what a GEMM tile does when stored, the GEMM operands' type), put together by
//! [`compose`](crate::compose::compose) as build.rs validates them.

use crate::compose::compose;
use crate::error::Result;
use crate::gpu::Gpu;
use crate::shapes::Dtype;

/// The SIMT GEMM (f32 operands, or f16 converted on load).
pub const GEMM: &str = include_str!("../shaders/gemm.wgsl");
/// The cooperative-matrix GEMM (f16 operands on tensor cores).
pub const GEMM_COOP: &str = include_str!("../shaders/gemm_coop.wgsl");
pub const STEP: &str = include_str!("../shaders/step.wgsl");
/// What the GEMM kernels share: params, job table, guarded loads and stores.
const GEMM_JOBS: &str = include_str!("../shaders/gemm/jobs.wgsl");

/// The operands snippet of a GEMM over `dtype`.
fn operands(dtype: Dtype) -> &'static str {
    match dtype {
        Dtype::F32 => include_str!("../shaders/operands/f32.wgsl"),
        Dtype::F16 => include_str!("../shaders/operands/f16.wgsl"),
        Dtype::Bf16 => include_str!("../shaders/operands/bf16.wgsl"),
    }
}

/// How a kernel writes its destination element.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Put {
    /// Plain store.
    Store,
    /// Read-modify-write add; safe where wgpu's barriers keep other writers out (all but fused).
    Add,
    /// f32 atomic add (SHADER_FLOAT32_ATOMIC): update semantics.
    Atomic,
    /// Compare-exchange f32 add: update semantics without SHADER_FLOAT32_ATOMIC.
    Cas,
}

impl Put {
    fn snippet(self) -> &'static str {
        match self {
            Put::Store => include_str!("../shaders/put/store.wgsl"),
            Put::Add => include_str!("../shaders/put/add.wgsl"),
            Put::Atomic => include_str!("../shaders/put/atomic.wgsl"),
            Put::Cas => include_str!("../shaders/put/cas.wgsl"),
        }
    }

    /// Update semantics on this adapter: native f32 atomics where present, else the CAS fallback.
    pub fn update(gpu: &Gpu) -> Put {
        if gpu.has(wgpu::Features::SHADER_FLOAT32_ATOMIC) {
            Put::Atomic
        } else {
            Put::Cas
        }
    }
}

/// What a GEMM tile does once stored (shaders/epilogue/).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Epilogue {
    /// Bump the chunk's tracker counter.
    Track,
    /// Bump it and perform the transfers the increment triggers (fused mode; needs [`Put::Cas`]).
    Fused,
}

impl Epilogue {
    fn snippet(self) -> &'static str {
        match self {
            Epilogue::Track => include_str!("../shaders/epilogue/track.wgsl"),
            Epilogue::Fused => include_str!("../shaders/epilogue/fused.wgsl"),
        }
    }
}

/// The full source of kernel `src` with its snippets: for a GEMM kernel (`gemm`: its operands'
/// type) the operands and the shared job table, and `put`'s and `epilogue`'s when given. The same
/// composition build.rs validates.
pub fn source(
    src: &str,
    gemm: Option<Dtype>,
    put: Option<Put>,
    epilogue: Option<Epilogue>,
) -> String {
    compose(&[
        gemm.map(operands).unwrap_or_default(),
        put.map(Put::snippet).unwrap_or_default(),
        epilogue.map(Epilogue::snippet).unwrap_or_default(),
        gemm.map(|_| GEMM_JOBS).unwrap_or_default(),
        src,
    ])
}

/// Creates a shader module from [`source`]`(src, gemm, put, epilogue)`.
///
/// `trusted` drops naga's runtime bounds checks and loop bounding: only for kernels whose own index
/// logic keeps every access in range, as the tests prove for each of them.
pub fn module(
    gpu: &Gpu,
    label: &str,
    src: &str,
    gemm: Option<Dtype>,
    put: Option<Put>,
    epilogue: Option<Epilogue>,
    trusted: bool,
) -> Result<wgpu::ShaderModule> {
    let full = source(src, gemm, put, epilogue);
    let desc = wgpu::ShaderModuleDescriptor {
        label: Some(label),
        source: wgpu::ShaderSource::Wgsl(full.into()),
    };
    gpu.scoped(&format!("compiling shader {label}"), || {
        if trusted {
            // SAFETY: the kernel guards every global index itself (see the header of its .wgsl file);
            // tests/ run each edge shape with poisoned outputs, so an out-of-range access would show.
            unsafe {
                gpu.device
                    .create_shader_module_trusted(desc, wgpu::ShaderRuntimeChecks::unchecked())
            }
        } else {
            gpu.device.create_shader_module(desc)
        }
    })
}

/// Kinds of binding a kernel's layout is made of, in binding order.
#[derive(Clone, Copy, Debug)]
pub enum Slot {
    Uniform,
    Read,
    ReadWrite,
}

/// A bind group layout with `slots` at bindings 0.. in order.
pub fn layout(gpu: &Gpu, label: &str, slots: &[Slot]) -> wgpu::BindGroupLayout {
    let entries: Vec<_> = slots
        .iter()
        .enumerate()
        .map(|(i, s)| wgpu::BindGroupLayoutEntry {
            binding: i as u32,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: match s {
                Slot::Uniform => wgpu::BindingType::Buffer {
                    ty: wgpu::BufferBindingType::Uniform,
                    has_dynamic_offset: false,
                    min_binding_size: None,
                },
                Slot::Read | Slot::ReadWrite => wgpu::BindingType::Buffer {
                    ty: wgpu::BufferBindingType::Storage {
                        read_only: matches!(s, Slot::Read),
                    },
                    has_dynamic_offset: false,
                    min_binding_size: None,
                },
            },
            count: None,
        })
        .collect();
    gpu.device
        .create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some(label),
            entries: &entries,
        })
}

/// A compute pipeline for `module`'s `main` with one bind group of `layout` and override `constants`.
pub fn pipeline(
    gpu: &Gpu,
    label: &str,
    layout: &wgpu::BindGroupLayout,
    module: &wgpu::ShaderModule,
    constants: &[(&str, f64)],
) -> Result<wgpu::ComputePipeline> {
    gpu.scoped(&format!("creating pipeline {label}"), || {
        let pl = gpu
            .device
            .create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                label: Some(label),
                bind_group_layouts: &[Some(layout)],
                immediate_size: 0,
            });
        gpu.device
            .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(label),
                layout: Some(&pl),
                module,
                entry_point: Some("main"),
                compilation_options: wgpu::PipelineCompilationOptions {
                    constants,
                    ..Default::default()
                },
                cache: None,
            })
    })
}

/// A bind group binding `buffers` (whole buffers or ranges) at 0.. in order.
pub fn bind(
    gpu: &Gpu,
    label: &str,
    layout: &wgpu::BindGroupLayout,
    buffers: &[wgpu::BindingResource<'_>],
) -> wgpu::BindGroup {
    let entries: Vec<_> = buffers
        .iter()
        .enumerate()
        .map(|(i, r)| wgpu::BindGroupEntry {
            binding: i as u32,
            resource: r.clone(),
        })
        .collect();
    gpu.device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some(label),
        layout,
        entries: &entries,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every kernel composition the library can create lowers to SPIR-V (the Vulkan path), including
    /// the cooperative-matrix GEMM on machines without cooperative matrices to run it.
    #[test]
    fn every_composition_lowers_to_spirv() {
        let puts = [Put::Store, Put::Add, Put::Atomic, Put::Cas];
        let mut sources = Vec::new();
        for put in puts {
            sources.push((format!("step {put:?}"), source(STEP, None, Some(put), None)));
            for (kernel, name, dtypes) in [
                (GEMM, "gemm", &Dtype::ALL[..]),
                (GEMM_COOP, "gemm_coop", &[Dtype::F16][..]),
            ] {
                for &d in dtypes {
                    for epilogue in [Epilogue::Track, Epilogue::Fused] {
                        if epilogue == Epilogue::Fused && put != Put::Cas {
                            continue;
                        }
                        sources.push((
                            format!("{name} {d:?} {put:?} {epilogue:?}"),
                            source(kernel, Some(d), Some(put), Some(epilogue)),
                        ));
                    }
                }
            }
        }
        // Steps with each put, GEMMs of every (kernel, dtype) with each put, fused ones with CAS.
        assert_eq!(sources.len(), 4 + 4 * 4 + 4);
        for (what, src) in sources {
            let module = naga::front::wgsl::parse_str(&src)
                .unwrap_or_else(|e| panic!("{what}: {}", e.emit_to_string(&src)));
            let info = naga::valid::Validator::new(
                naga::valid::ValidationFlags::all(),
                naga::valid::Capabilities::all(),
            )
            .validate(&module)
            .unwrap_or_else(|e| panic!("{what}: {}", e.emit_to_string(&src)));
            // Overrides take their defaults, as a pipeline without constants would.
            let (module, info) = naga::back::pipeline_constants::process_overrides(
                &module,
                &info,
                None,
                &Default::default(),
            )
            .unwrap_or_else(|e| panic!("{what}: overrides: {e}"));
            let words = naga::back::spv::write_vec(
                &module,
                &info,
                &naga::back::spv::Options::default(),
                None,
            )
            .unwrap_or_else(|e| panic!("{what}: SPIR-V: {e}"));
            assert_eq!(words[0], 0x0723_0203, "{what}: SPIR-V magic");
        }
    }
}
