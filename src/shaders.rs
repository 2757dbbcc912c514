//! Shader sources and their composition: a kernel from shaders/ plus the snippets it needs (how it
//! writes, what a GEMM tile does when stored, the GEMM operands' type), put together by
//! [`compose`](crate::compose::compose) as build.rs validates them.

use crate::compose::compose;
use crate::compositions::{self, Composition};
use crate::error::{Error, Result};
use crate::gpu::Gpu;
use crate::reflect::{self, Access};
use crate::shapes::Dtype;
pub use t3_core::kernels::Put;

/// The put an adapter's features choose (the core's [`Put`] knows no adapter).
pub trait AdapterPut {
    /// Update semantics on this adapter: native f32 atomics where present, else the CAS fallback.
    fn update(gpu: &Gpu) -> Put;
}

impl AdapterPut for Put {
    fn update(gpu: &Gpu) -> Put {
        if gpu.has(wgpu::Features::SHADER_FLOAT32_ATOMIC) {
            Put::Atomic
        } else {
            Put::Cas
        }
    }
}

/// What a GEMM tile does once stored (shaders/epilogue/; fused mode's in shaders/fused/).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Epilogue {
    /// Bump the chunk's tracker counter.
    Track,
    /// Bump it and perform the transfers the increment triggers (fused mode; needs a windowed put).
    Fused,
    /// Bump it, in fused mode's bindings (fused mode whose spares trigger: shaders/fused/watched.wgsl).
    Watched,
}

impl Epilogue {
    /// Every epilogue, in declaration order.
    pub const ALL: [Epilogue; 3] = [Epilogue::Track, Epilogue::Fused, Epilogue::Watched];

    /// Its name in src/compositions.rs (its snippet: `compositions::epilogue_file`).
    pub fn name(self) -> &'static str {
        match self {
            Epilogue::Track => "track",
            Epilogue::Fused => "fused",
            Epilogue::Watched => "watched",
        }
    }
}

/// One composition of a kernel (file under shaders/) with its snippets: the GEMM operands' type
/// (GEMM kernels), how it writes, and what a stored GEMM tile does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Variant {
    pub kernel: &'static str,
    pub gemm: Option<Dtype>,
    pub put: Put,
    pub epilogue: Option<Epilogue>,
}

impl Variant {
    /// Its entry in src/compositions.rs, or an error naming it where it is not declared there.
    fn composition(&self) -> Result<Composition> {
        // A put into four windows is composed with its epilogue's four-window twin, whose
        // bindings are reflected apart (src/compositions.rs, `FUSED_PUTS4`).
        let epilogue = match (self.epilogue, self.put) {
            (Some(Epilogue::Fused), Put::Four(_)) => "fused4",
            (Some(Epilogue::Watched), Put::Four(_)) => "watched4",
            (e, _) => e.map_or("", Epilogue::name),
        };
        let c = Composition {
            kernel: self.kernel,
            operands: self.gemm.map(Dtype::name),
            put: self.put.name(),
            epilogue,
        };
        if compositions::all().contains(&c) {
            Ok(c)
        } else {
            Err(Error::invalid(
                "shader composition",
                c.parts().join(" + "),
                "one declared in src/compositions.rs (and so validated by build.rs)",
            ))
        }
    }

    /// Its bindings and workgroup memory, as build.rs reflected them.
    pub fn interface(&self) -> Result<&'static reflect::Interface> {
        let c = self.composition()?;
        reflect::interface(c.kernel, c.epilogue).ok_or_else(|| {
            Error::invalid(
                "shader composition",
                c.parts().join(" + "),
                "a reflected one",
            )
        })
    }

    /// The full source: the snippets and the kernel (`kernel_src` in place of the kernel file's,
    /// for experiments), composed as build.rs validates them.
    pub fn source(&self, kernel_src: Option<&str>) -> Result<String> {
        Ok(composed(&self.composition()?, kernel_src))
    }
}

/// The source of declared composition `c` (`kernel_src` in place of its kernel file's), composed
/// as build.rs validates it.
pub fn composed(c: &Composition, kernel_src: Option<&str>) -> String {
    let parts = c.parts();
    let last = parts.len() - 1;
    let srcs: Vec<&str> = parts
        .iter()
        .enumerate()
        .map(|(i, p)| match (i == last, kernel_src) {
            (true, Some(k)) => k,
            _ => reflect::source(p).unwrap_or_default(),
        })
        .collect();
    compose(&srcs)
}

/// Checks `variant` composed with a user's kernel source `src` (read from `path`, given as `flag`)
/// with naga, so that an error names the user's file and line rather than the composed shader's
/// (the kernel is composed last, its `enable` directives hoisted to the top).
pub fn check_kernel_source(
    variant: &Variant,
    src: &str,
    flag: &'static str,
    path: &str,
) -> Result<()> {
    let full = variant.source(Some(src))?;
    // The kernel's lines but its `enable`s, as they lie at the end of the composed source.
    let body: Vec<usize> = src
        .lines()
        .enumerate()
        .filter(|(_, l)| !crate::compose::is_enable(l))
        .map(|(i, _)| i + 1)
        .collect();
    let start = full.lines().count() + 1 - body.len();
    let located = |at: Option<naga::SourceLocation>, message: String| {
        let at = match at.map(|l| l.line_number as usize) {
            // Past the kernel's last line: its end (an unclosed brace or comment).
            Some(line) if line >= start => match body.get(line - start) {
                Some(own) => format!("{path} line {own}"),
                None => format!("{path} at its end"),
            },
            Some(line) => format!("{path} (line {line} of the snippets composed before it)"),
            None => path.to_string(),
        };
        Error::invalid(
            flag,
            format!("{at}: {message}"),
            "a WGSL kernel that composes with the library's snippets (docs/modes.md#operand-types)",
        )
    };
    let module = naga::front::wgsl::parse_str(&full)
        .map_err(|e| located(e.location(&full), e.message().to_string()))?;
    naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::all(),
    )
    .validate(&module)
    .map_err(|e| {
        let mut message = e.as_inner().to_string();
        let mut cause = std::error::Error::source(e.as_inner());
        while let Some(c) = cause {
            message += &format!(": {c}");
            cause = c.source();
        }
        located(e.location(&full), message)
    })?;
    Ok(())
}

/// Creates a shader module from `variant`'s source (`kernel_src` replacing the kernel's own).
///
/// `trusted` drops naga's runtime bounds checks and loop bounding: only for kernels whose own index
/// logic keeps every access in range, as the tests prove for each of them.
pub fn module(
    gpu: &Gpu,
    label: &str,
    variant: &Variant,
    kernel_src: Option<&str>,
    trusted: bool,
) -> Result<wgpu::ShaderModule> {
    module_from_source(gpu, label, variant.source(kernel_src)?, trusted)
}

/// Creates a shader module from a whole composed source (tests that rewrite a composition, e.g.
/// to emulate cooperative matrices); `trusted` as in [`module`].
pub fn module_from_source(
    gpu: &Gpu,
    label: &str,
    full: String,
    trusted: bool,
) -> Result<wgpu::ShaderModule> {
    let desc = wgpu::ShaderModuleDescriptor {
        label: Some(label),
        source: wgpu::ShaderSource::Wgsl(full.into()),
    };
    gpu.scoped(&format!("compiling shader {label}"), || {
        if trusted {
            // SAFETY: the kernel guards every output index itself and reads its operands only inside
            // their padded layout (see the header of its .wgsl file and shaders/gemm/jobs.wgsl);
            // tests/ run each edge shape with poisoned outputs, and src/gemm.rs's
            // `unguarded_reads_stay_inside_the_padding` models every operand read against the padding.
            unsafe {
                gpu.device
                    .create_shader_module_trusted(desc, wgpu::ShaderRuntimeChecks::unchecked())
            }
        } else {
            gpu.device.create_shader_module(desc)
        }
    })
}

/// The bind group layout of an interface: its bindings at 0.. in order.
pub fn layout(gpu: &Gpu, label: &str, interface: &reflect::Interface) -> wgpu::BindGroupLayout {
    let slots = interface.bindings;
    let entries: Vec<_> = slots
        .iter()
        .enumerate()
        .map(|(i, s)| wgpu::BindGroupLayoutEntry {
            binding: i as u32,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: match s {
                Access::Uniform => wgpu::BindingType::Buffer {
                    ty: wgpu::BufferBindingType::Uniform,
                    has_dynamic_offset: false,
                    min_binding_size: None,
                },
                Access::Read | Access::ReadWrite => wgpu::BindingType::Buffer {
                    ty: wgpu::BufferBindingType::Storage {
                        read_only: *s == Access::Read,
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

/// A bind group of `layout` binding `named` (whole buffers or ranges), each named by its role, at
/// 0.. in the order of `roles` (a [`Group`]'s, checked against the WGSL by reflection).
pub fn bind(
    gpu: &Gpu,
    label: &str,
    layout: &wgpu::BindGroupLayout,
    roles: &[&str],
    named: &[(&str, wgpu::BindingResource<'_>)],
) -> wgpu::BindGroup {
    let given: Vec<&str> = named.iter().map(|(r, _)| *r).collect();
    assert_eq!(given, roles, "{label}: bound out of its roles' order");
    let entries: Vec<_> = named
        .iter()
        .enumerate()
        .map(|(i, (_, r))| wgpu::BindGroupEntry {
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

    /// Every composition declared lowers to SPIR-V (the Vulkan path), including the
    /// cooperative-matrix GEMM on machines without cooperative matrices to run it.
    #[test]
    fn every_composition_lowers_to_spirv() {
        for c in compositions::all() {
            let what = c.parts().join(" + ");
            let src = composed(&c, None);
            let module = naga::front::wgsl::parse_str(&src)
                .unwrap_or_else(|e| panic!("{what}: {}", e.emit_to_string(&src)));
            let info = naga::valid::Validator::new(
                naga::valid::ValidationFlags::all(),
                naga::valid::Capabilities::all(),
            )
            .validate(&module)
            .unwrap_or_else(|e| panic!("{what}: {}", e.emit_to_string(&src)));
            // Each pipeline the library makes of it, with its override values.
            for set in c.overrides() {
                let constants: naga::back::PipelineConstants =
                    set.iter().map(|&(k, v)| (k.to_string(), v)).collect();
                let (module, info) = naga::back::pipeline_constants::process_overrides(
                    &module, &info, None, &constants,
                )
                .unwrap_or_else(|e| panic!("{what}: overrides {constants:?}: {e}"));
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

    /// Every variant the kernels make is declared (so validated at build time); others are refused.
    #[test]
    fn variants_are_declared_compositions() {
        let windows = Variant {
            kernel: "step.wgsl",
            gemm: None,
            put: Put::CasWindows,
            epilogue: None,
        };
        assert!(
            windows.source(None).is_err(),
            "only fused mode's GEMM takes {windows:?}"
        );
        for put in Put::ALL {
            if put == Put::Word {
                let gather = Variant {
                    kernel: "gather.wgsl",
                    gemm: None,
                    put,
                    epilogue: None,
                };
                assert!(gather.interface().is_ok() && gather.source(None).is_ok());
                continue;
            }
            if matches!(
                put,
                Put::CasWindows | Put::AtomicWindows | Put::StoreWindows | Put::CoherentWindows
            ) {
                for (kernel, gemm) in [("gemm.wgsl", Dtype::F32), ("gemm_coop.wgsl", Dtype::F16)] {
                    let v = Variant {
                        kernel,
                        gemm: Some(gemm),
                        put,
                        epilogue: Some(Epilogue::Fused),
                    };
                    assert!(v.source(None).is_ok(), "{v:?}");
                    let four = Variant {
                        put: put.four().unwrap(),
                        ..v
                    };
                    assert!(four.source(None).is_ok(), "{four:?}");
                    assert_eq!(four.interface().unwrap().bindings.len(), 11, "{four:?}");
                }
                continue;
            }
            if put == Put::PlainWindows {
                // Only the watched GEMM writes through it, and it only through that.
                for (kernel, gemm) in [("gemm.wgsl", Dtype::F32), ("gemm_coop.wgsl", Dtype::F16)] {
                    let v = Variant {
                        kernel,
                        gemm: Some(gemm),
                        put,
                        epilogue: Some(Epilogue::Watched),
                    };
                    assert!(v.source(None).is_ok(), "{v:?}");
                    let four = Variant {
                        put: put.four().unwrap(),
                        ..v
                    };
                    assert!(four.source(None).is_ok(), "{four:?}");
                    for epilogue in [Epilogue::Track, Epilogue::Fused] {
                        let other = Variant {
                            epilogue: Some(epilogue),
                            ..v
                        };
                        assert!(other.source(None).is_err(), "{other:?}");
                    }
                }
                continue;
            }
            let step = Variant {
                kernel: "step.wgsl",
                gemm: None,
                put,
                epilogue: None,
            };
            assert!(step.interface().is_ok() && step.source(None).is_ok());
            for (kernel, dtypes) in [
                ("gemm.wgsl", &Dtype::ALL[..]),
                ("gemm_coop.wgsl", &[Dtype::F16][..]),
            ] {
                for &gemm in dtypes {
                    let v = Variant {
                        kernel,
                        gemm: Some(gemm),
                        put,
                        epilogue: Some(Epilogue::Track),
                    };
                    assert!(v.source(None).is_ok(), "{v:?}");
                    let fused = Variant {
                        epilogue: Some(Epilogue::Fused),
                        ..v
                    };
                    assert!(fused.source(None).is_err(), "{fused:?}");
                }
            }
        }
        let coop_f32 = Variant {
            kernel: "gemm_coop.wgsl",
            gemm: Some(Dtype::F32),
            put: Put::Store,
            epilogue: Some(Epilogue::Track),
        };
        let e = coop_f32.source(None).unwrap_err().to_string();
        assert!(
            e.contains("operands/f32.wgsl") && e.contains("compositions.rs"),
            "{e}"
        );
    }
}
