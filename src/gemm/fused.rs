//! Fused mode's put as the caller chooses it, what it gives on an adapter, and its families of
//! layout and pipelines (the fused and watched GEMMs', the spares').

use std::sync::OnceLock;

use super::made_once;
use crate::error::{Error, Result};
use crate::gpu::Gpu;
use crate::shaders::{self, Epilogue, Put, Variant};
use crate::shapes::Dtype;

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

/// Fused mode's bind group layout, modules and pipelines for one family of its puts: into two
/// windows of one buffer, or into four of two ([`Put::four`]: where a packed output passes what one
/// buffer holds; ten storage bindings, so apart). The pipelines are made on first use.
pub struct FusedFamily {
    /// The fused GEMM's bindings: the GEMM's, the forward table, the output's further windows and
    /// B's second.
    pub layout: wgpu::BindGroupLayout,
    put: Put,
    module: wgpu::ShaderModule,
    /// The fused GEMM, by split B + 2 x grid.
    fused: [OnceLock<wgpu::ComputePipeline>; 4],
    /// The spare pipeline (shaders/fused/spares.wgsl), by watch + land.
    spares: [OnceLock<wgpu::ComputePipeline>; 3],
    /// Fused mode's watched GEMM (the tracker alone, its spares triggering: `--fused trigger`),
    /// by split B + 2 x grid.
    watched_module: wgpu::ShaderModule,
    watched: [OnceLock<wgpu::ComputePipeline>; 4],
    /// The tracked GEMM itself on this layout, per tile and on the grid: the watched GEMM where
    /// the packed output and B each fit one binding.
    watched_plain: [OnceLock<wgpu::ComputePipeline>; 2],
}

impl FusedFamily {
    /// The family of `put` for the GEMM kernel in `file` (`src` in place of its source) on `dtype`
    /// operands.
    pub(super) fn new(
        gpu: &Gpu,
        file: &'static str,
        dtype: Dtype,
        put: Put,
        src: Option<&str>,
    ) -> Result<Self> {
        let variant = |put, epilogue| Variant {
            kernel: file,
            gemm: Some(dtype),
            put,
            epilogue: Some(epilogue),
        };
        let fv = variant(put, Epilogue::Fused);
        let layout = shaders::layout(gpu, "fused gemm layout", fv.interface()?);
        // Trusted, as every GEMM (naga's bounds checks slow the fused GEMM markedly): the
        // epilogue's indices from data come from tables lowering checked (`check_table` in
        // core/src/lower/fused.rs) or from its own atomics, clamped where they index.
        let module = shaders::module(gpu, "fused gemm", &fv, src, true)?;
        // The watched GEMM binds what the fused GEMM binds (its forward table unread), so it runs
        // on the fused layout beside the same spares.
        let plain = match put {
            Put::Four(_) => Put::PlainWindows.four().unwrap_or(Put::PlainWindows),
            _ => Put::PlainWindows,
        };
        let watched_module = shaders::module(
            gpu,
            "watched gemm",
            &variant(plain, Epilogue::Watched),
            src,
            true,
        )?;
        Ok(FusedFamily {
            layout,
            put,
            module,
            fused: Default::default(),
            spares: Default::default(),
            watched_module,
            watched: Default::default(),
            watched_plain: Default::default(),
        })
    }

    /// How many of its pipelines are made.
    pub(super) fn made(&self) -> usize {
        let cells = self.fused.iter().chain(&self.spares).chain(&self.watched);
        cells
            .chain(&self.watched_plain)
            .filter(|c| c.get().is_some())
            .count()
    }

    /// The output's windows in a label.
    fn windows(&self) -> &'static str {
        match self.put {
            Put::Four(_) => ", output in four windows",
            _ => "",
        }
    }

    /// The fused GEMM for a packed B in two windows (`split_b`) or in one, per tile or on the
    /// persistent grid (`grid`); the watched one (the tracker alone) where `watched`: where neither
    /// B nor the output spans two windows (`split_c`), the tracked GEMM itself (`store_module`) on
    /// this layout (the windowed stores' code slows the f32 SIMT GEMM).
    pub(super) fn pipeline(
        &self,
        gpu: &Gpu,
        store_module: &wgpu::ShaderModule,
        [split_b, split_c, grid, watched]: [bool; 4],
    ) -> Result<&wgpu::ComputePipeline> {
        let grid_label = if grid { ", persistent grid" } else { "" };
        if watched && !split_b && !split_c {
            return made_once(&self.watched_plain[usize::from(grid)], || {
                let label = format!("watched gemm (the tracked GEMM, one window each{grid_label})");
                shaders::pipeline(
                    gpu,
                    &label,
                    &self.layout,
                    store_module,
                    &[("TRACK", 1.0), ("GRID", f64::from(u8::from(grid)))],
                )
            });
        }
        let at = usize::from(split_b) + 2 * usize::from(grid);
        let (cell, module) = if watched {
            (&self.watched[at], &self.watched_module)
        } else {
            (&self.fused[at], &self.module)
        };
        made_once(cell, || {
            let label = format!(
                "{} gemm (B in {} window{grid_label}{})",
                if watched { "watched" } else { "fused" },
                if split_b { "two" } else { "one" },
                self.windows()
            );
            shaders::pipeline(
                gpu,
                &label,
                &self.layout,
                module,
                &[
                    ("B_WINDOWS", f64::from(u8::from(split_b))),
                    ("GRID", f64::from(u8::from(grid))),
                ],
            )
        })
    }

    /// Fused mode's spare workgroups as a pipeline of their own (shaders/fused/spares.wgsl), on the
    /// fused GEMM's layout; watching the counters as the trigger where `watch`, landing the ring's
    /// last hops where `land` too (only the watching spares land).
    pub(super) fn spares(
        &self,
        gpu: &Gpu,
        watch: bool,
        land: bool,
    ) -> Result<&wgpu::ComputePipeline> {
        let land = land && watch;
        made_once(&self.spares[usize::from(watch) + usize::from(land)], || {
            let v = Variant {
                kernel: "fused/spares.wgsl",
                gemm: None,
                put: self.put,
                epilogue: Some(Epilogue::Fused),
            };
            // Trusted as the fused GEMM is, for the same reason (its epilogue's indices).
            let m = shaders::module(gpu, "fused spares", &v, None, true)?;
            let label = match (watch, land) {
                (true, true) => "fused spares (watching, landing)",
                (true, false) => "fused spares (watching)",
                _ => "fused spares",
            };
            let label = format!("{label}{}", self.windows());
            shaders::pipeline(
                gpu,
                &label,
                &self.layout,
                &m,
                &[
                    ("WATCH", f64::from(u8::from(watch))),
                    ("LAND", f64::from(u8::from(land))),
                ],
            )
        })
    }
}
