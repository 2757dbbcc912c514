//! Shader sources and their composition: a kernel from shaders/ plus, for kernels that write through
//! `put`, one snippet from shaders/put/ (build.rs validates every such pair with naga).

use crate::error::Result;
use crate::gpu::Gpu;

pub const GEMM: &str = include_str!("../shaders/gemm.wgsl");
pub const STEP: &str = include_str!("../shaders/step.wgsl");

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

/// Creates a shader module from `src` with `put`'s and `epilogue`'s snippets prepended when given,
/// the same composition build.rs validates.
///
/// `trusted` drops naga's runtime bounds checks and loop bounding: only for kernels whose own index
/// logic keeps every access in range, as the tests prove for each of them.
pub fn module(
    gpu: &Gpu,
    label: &str,
    src: &str,
    put: Option<Put>,
    epilogue: Option<Epilogue>,
    trusted: bool,
) -> Result<wgpu::ShaderModule> {
    let full = format!(
        "{}\n{}\n{}",
        put.map(Put::snippet).unwrap_or_default(),
        epilogue.map(Epilogue::snippet).unwrap_or_default(),
        src
    );
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
