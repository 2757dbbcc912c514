//! The tracked GEMM kernels (shaders/gemm.wgsl, shaders/gemm_coop.wgsl): which one an adapter and
//! dtype get, their pipelines and the params and job table they read.

use std::sync::OnceLock;

use crate::error::{Error, Result};
use crate::gpu::Gpu;
use crate::shaders::{self, AdapterPut, Epilogue, Put, Variant};
use crate::shapes::Dtype;

pub use crate::shapes::TILE;

mod fused;

pub use fused::{fused_put, FusedFamily, FusedPut};
pub use t3_core::kernels::gemm::{
    pack, pack_rows, GemmParams, Job, Padding, StoreMode, K_SLICE, TILE_N_MAX,
};

/// Which kernel computes the tiles.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Engine {
    /// One invocation per 8x8 block of C, FMAs on f32 (shaders/gemm.wgsl).
    Simt,
    /// Cooperative matrices, f16 x f16 -> f32 at 16x16x16 (shaders/gemm_coop.wgsl).
    Coop,
    /// NVIDIA's cooperative_matrix2 through SPIR-V passthrough (shaders/gemm_coopmat2.comp,
    /// src/coopmat2.rs): the tracked store and the untracked GEMM only, in `bench-gemm` and the
    /// tests; the other pipelines of its [`GemmKernel`] are the cooperative WGSL kernel's (same
    /// tiles and job table), so runs refuse it (`Kernels::with_put`).
    Coopmat2,
}

impl Engine {
    pub fn name(self) -> &'static str {
        match self {
            Engine::Simt => "simt",
            Engine::Coop => "coop",
            Engine::Coopmat2 => "coopmat2",
        }
    }

    /// "auto" (None), "simt" or "coop" (what a run takes: `--gemm-kernel`).
    /// [`Engine::parse_bench`] takes "coopmat2" too.
    pub fn parse(s: &str) -> Result<Option<Self>> {
        match s.trim().to_lowercase().as_str() {
            "auto" => Ok(None),
            "simt" => Ok(Some(Engine::Simt)),
            "coop" => Ok(Some(Engine::Coop)),
            _ => Err(Error::invalid("GEMM kernel", s, "auto, simt or coop")),
        }
    }

    /// As [`Engine::parse`], and "coopmat2" (`bench-gemm`, the tests).
    pub fn parse_bench(s: &str) -> Result<Option<Self>> {
        match s.trim().to_lowercase().as_str() {
            "coopmat2" => Ok(Some(Engine::Coopmat2)),
            _ => Engine::parse(s)
                .map_err(|_| Error::invalid("GEMM kernel", s, "auto, simt, coop or coopmat2")),
        }
    }

    /// The kernel for `dtype` on this adapter: `wanted`, checked, or the fastest available (the
    /// cooperative-matrix kernel for f16 where [`Gpu::has_coop_f16`], else SIMT; bf16 is SIMT).
    pub fn resolve(gpu: &Gpu, dtype: Dtype, wanted: Option<Engine>) -> Result<Engine> {
        let missing = |feature, needed_for: &str| Error::MissingFeature {
            adapter: gpu.info.name.clone(),
            feature,
            needed_for: needed_for.into(),
        };
        if dtype == Dtype::F16 && !gpu.has(wgpu::Features::SHADER_F16) {
            return Err(missing("SHADER_F16", "f16 GEMM operands (--dtype f16)"));
        }
        match (dtype, wanted) {
            (Dtype::F32, Some(Engine::Coop)) => Err(Error::invalid(
                "GEMM kernel",
                "coop with f32 operands",
                "simt or auto for f32 (cooperative matrices take f16: --dtype f16)",
            )),
            (Dtype::Bf16, Some(Engine::Coop)) => Err(Error::invalid(
                "GEMM kernel",
                "coop with bf16 operands",
                "simt or auto for bf16 (wgpu 30 offers no bf16 cooperative-matrix configuration on any \
                 adapter: its component types are f16, f32, i32 and u32; cooperative matrices take \
                 f16: --dtype f16)",
            )),
            (Dtype::F32 | Dtype::Bf16, Some(Engine::Coopmat2)) => Err(Error::invalid(
                "GEMM kernel",
                format!("coopmat2 with {} operands", dtype.name()),
                "f16 operands (--dtype f16): the coopmat2 kernel multiplies f16 x f16 -> f32",
            )),
            (Dtype::F16, Some(Engine::Coopmat2)) if !gpu.has_coopmat2() => Err(missing(
                "VK_NV_cooperative_matrix2",
                "the coopmat2 GEMM (workgroup-scope matrices with tensor addressing, through SPIR-V \
                 passthrough, on a Vulkan device opened with the extension; and what the coop \
                 kernel needs)",
            )),
            (Dtype::F16, Some(Engine::Coop)) if !gpu.has_coop_f16() => Err(missing(
                "EXPERIMENTAL_COOPERATIVE_MATRIX",
                "the cooperative-matrix GEMM (f16 x f16 -> f32 at 16x16x16, 32-wide subgroups)",
            )),
            (_, Some(e)) => Ok(e),
            (Dtype::F16, None) if gpu.has_coop_f16() => Ok(Engine::Coop),
            (_, None) => Ok(Engine::Simt),
        }
    }

    /// Output tile columns of one workgroup: BN in the engine's kernel, as build.rs reflected it.
    /// Tracker thresholds count tiles of this width.
    pub fn tile_n(self) -> usize {
        if self == Engine::Coopmat2 {
            return crate::coopmat2::TILE_N;
        }
        crate::reflect::interface(self.file(), "track").map_or(TILE_N_MAX, |i| i.tile[1] as usize)
    }

    /// Tile rows its workgroups walk down before moving one tile column right (`const GROUP` of
    /// gemm_coop.wgsl, `grouped`); 0: row-major (gemm.wgsl).
    pub fn tile_group(self) -> usize {
        match self {
            Engine::Simt => 0,
            Engine::Coop | Engine::Coopmat2 => 8,
        }
    }

    /// Its workgroups one NVIDIA multiprocessor holds at once: the cooperative kernel takes 236
    /// registers per invocation, 61440 of an SM's 65536 for its 256 (`cargo bench --bench
    /// pipelines`); the SIMT kernel two (a persistent grid of 2 per SM is wholly resident on an
    /// H100 and an H200).
    pub fn per_sm(self) -> u32 {
        match self {
            Engine::Simt => 2,
            Engine::Coop | Engine::Coopmat2 => 1,
        }
    }

    /// Its kernel's file under shaders/.
    pub fn file(self) -> &'static str {
        match self {
            Engine::Simt => "gemm.wgsl",
            Engine::Coop => "gemm_coop.wgsl",
            Engine::Coopmat2 => "gemm_coopmat2.comp",
        }
    }
}

/// The GEMM's layout and pipelines for one operand type, made once per device.
pub struct GemmKernel {
    pub dtype: Dtype,
    /// Element type of the outputs its plain stores write (tracked, untracked, on the grid): f32, or
    /// 2-byte elements packed two to a word. Update and fused mode's GEMMs store f32.
    pub out: Dtype,
    pub engine: Engine,
    pub layout: wgpu::BindGroupLayout,
    store: wgpu::ComputePipeline,
    update: wgpu::ComputePipeline,
    untracked: wgpu::ComputePipeline,
    /// Plain stores, tracked, on a persistent grid (`GRID`: workgroups loop over tiles).
    grid: wgpu::ComputePipeline,
    update_put: Put,
    /// Fused mode's family into two windows of one buffer, made with the kernel, and into four of
    /// two, made on first use (where a packed output passes what one buffer holds).
    fused: FusedFamily,
    fused4: OnceLock<FusedFamily>,
    /// The WGSL kernel file its modules are made from, and the `--kernel-wgsl` source replacing it.
    wgsl: (&'static str, Option<String>),
    /// The tracked GEMM's own module (plain stores, B and C in one binding each): the watched GEMM
    /// where the packed output and B each fit one binding.
    store_module: wgpu::ShaderModule,
    /// Its put ([`fused_put`]).
    pub fused_put: Put,
}

/// `cell`'s pipeline, made by `make` on first use.
fn made_once(
    cell: &OnceLock<wgpu::ComputePipeline>,
    make: impl FnOnce() -> Result<wgpu::ComputePipeline>,
) -> Result<&wgpu::ComputePipeline> {
    if let Some(p) = cell.get() {
        return Ok(p);
    }
    let p = make()?;
    Ok(cell.get_or_init(|| p))
}

impl GemmKernel {
    /// Fused mode's family of layout and pipelines: into two windows of one buffer, or into four of
    /// two (`four`; an error where the adapter cannot bind them).
    pub fn fused_family(&self, gpu: &Gpu, four: bool) -> Result<&FusedFamily> {
        if !four {
            return Ok(&self.fused);
        }
        if let Some(f) = self.fused4.get() {
            return Ok(f);
        }
        let put = self.fused_put_of(true);
        let f = FusedFamily::new(gpu, self.wgsl.0, self.dtype, put, self.wgsl.1.as_deref())?;
        Ok(self.fused4.get_or_init(|| f))
    }

    /// Fused mode's pipelines made so far, both families: two with the kernel (its GEMM per tile, B
    /// in one window and in two), the rest on first use.
    pub fn pipelines_made(&self) -> usize {
        self.fused.made() + self.fused4.get().map_or(0, FusedFamily::made)
    }

    /// Fused mode's put in family `four` ([`GemmKernel::fused_family`]): its four-window twin there.
    pub fn fused_put_of(&self, four: bool) -> Put {
        match self.fused_put.four() {
            Some(twin) if four => twin,
            _ => self.fused_put,
        }
    }

    /// The fused GEMM of family `four` ([`GemmKernel::fused_family`]) for a packed B in two windows
    /// (`split_b`) or in one, per tile or on the persistent grid (`grid`); the watched one where
    /// `watched` (the tracked GEMM itself where neither B nor the output spans two windows:
    /// `split_c`).
    pub fn fused(
        &self,
        gpu: &Gpu,
        [split_b, split_c, grid, watched]: [bool; 4],
        four: bool,
    ) -> Result<&wgpu::ComputePipeline> {
        self.fused_family(gpu, four)?.pipeline(
            gpu,
            &self.store_module,
            [split_b, split_c, grid, watched],
        )
    }

    /// Fused mode's spare pipeline of family `four`, watching where `watch` and landing where
    /// `land` too ([`FusedFamily`]).
    pub fn spares(
        &self,
        gpu: &Gpu,
        watch: bool,
        land: bool,
        four: bool,
    ) -> Result<&wgpu::ComputePipeline> {
        self.fused_family(gpu, four)?.spares(gpu, watch, land)
    }

    /// The f32 kernel.
    pub fn new(gpu: &Gpu) -> Result<Self> {
        Self::with(gpu, Dtype::F32, None)
    }

    /// The kernel for `dtype` operands: `engine`, or the adapter's best (see [`Engine::resolve`]).
    ///
    /// For shader-level experiments, the device's [`crate::settings::KernelFiles`] (`--kernel-wgsl
    /// simt=FILE,coop=FILE`) replace that engine's kernel source with FILE (composed with the same snippets, so it must keep the
    /// kernel's bindings, define `INVOCATIONS` and `compute_tile(w, t)` and call `tile_done`: the
    /// entry point, with fused mode's spares and the persistent grid, is shaders/gemm/jobs.wgsl's);
    /// every GEMM built on that device then runs the experiment.
    pub fn with(gpu: &Gpu, dtype: Dtype, engine: Option<Engine>) -> Result<Self> {
        Self::with_put(gpu, dtype, engine, FusedPut::Auto)
    }

    /// As [`GemmKernel::with`], fused mode's put chosen by `put`.
    pub fn with_put(
        gpu: &Gpu,
        dtype: Dtype,
        engine: Option<Engine>,
        put: FusedPut,
    ) -> Result<Self> {
        Self::for_outputs(gpu, dtype, Dtype::F32, engine, put)
    }

    /// As [`GemmKernel::with_put`], its plain stores writing outputs of type `out`.
    pub fn for_outputs(
        gpu: &Gpu,
        dtype: Dtype,
        out: Dtype,
        engine: Option<Engine>,
        put: FusedPut,
    ) -> Result<Self> {
        let engine = Engine::resolve(gpu, dtype, engine)?;
        if engine != Engine::Coopmat2 {
            return Self::wgsl(gpu, dtype, out, engine, put);
        }
        if out != Dtype::F32 {
            return Err(Error::invalid(
                "GEMM kernel",
                format!("coopmat2 storing {} outputs", out.name()),
                "coopmat2 with f32 outputs (--out-dtype f32), or auto, simt or coop",
            ));
        }
        Self::coopmat2(gpu, dtype, crate::coopmat2::spirv()?)
    }

    /// The coopmat2 kernel from `spirv` (tracked, untracked): the committed build, or a variant's
    /// (bench-gemm's `--coopmat2-spv`). The cooperative WGSL kernel's, its tracked store and
    /// untracked GEMM replaced.
    pub fn coopmat2(gpu: &Gpu, dtype: Dtype, spirv: [Vec<u32>; 2]) -> Result<Self> {
        let engine = Engine::resolve(gpu, dtype, Some(Engine::Coopmat2))?;
        let mut k = Self::wgsl(gpu, dtype, Dtype::F32, Engine::Coop, FusedPut::Auto)?;
        let [store, untracked] = coopmat2_pipelines(gpu, &k.layout, spirv)?;
        (k.engine, k.store, k.untracked) = (engine, store, untracked);
        Ok(k)
    }

    /// The kernel of a WGSL `engine`, its plain stores writing outputs of type `out`.
    fn wgsl(gpu: &Gpu, dtype: Dtype, out: Dtype, engine: Engine, put: FusedPut) -> Result<Self> {
        let file = match engine {
            Engine::Simt => ("--kernel-wgsl simt", &gpu.kernels.simt),
            // coopmat2's other pipelines are the cooperative WGSL kernel's.
            Engine::Coop | Engine::Coopmat2 => ("--kernel-wgsl coop", &gpu.kernels.coop),
        };
        let src = match file {
            (what, Some(path)) => Some(crate::files::read_text(path, what, 1 << 20)?),
            _ => None,
        };
        let variant = |put, epilogue| Variant {
            kernel: engine.file(),
            gemm: Some(dtype),
            put,
            epilogue: Some(epilogue),
        };
        let tracked = variant(Put::Store, Epilogue::Track);
        let fused_put = fused_put(gpu, put)?;
        // A replacement kernel checked as composed before the device sees it, so that its errors
        // name the user's file and line: tracked, and fused mode's, made with the kernel (their
        // epilogues ask more of it, e.g. no more invocations than the fused epilogue serves).
        if let ((what, Some(path)), Some(text)) = (file, &src) {
            for v in [tracked, variant(fused_put, Epilogue::Fused)] {
                shaders::check_kernel_source(&v, text, what, path)?;
            }
        }
        let layout = shaders::layout(gpu, "gemm layout", tracked.interface()?);
        let update_put = Put::update(gpu);
        let module = |put: Put| {
            let label = format!("gemm ({} {}, {put:?})", engine.name(), dtype.name());
            shaders::module(
                gpu,
                &label,
                &variant(put, Epilogue::Track),
                src.as_deref(),
                true,
            )
        };
        let store_module = module(Put::Store)?;
        let update_module = module(update_put)?;
        // The plain stores' own module where they write 2-byte outputs (the tracked f32 module stays
        // fused mode's watched GEMM).
        let out_module = match out {
            Dtype::F32 => None,
            half => Some(module(Put::store(half))?),
        };
        let make = |put: Put, track: bool, grid: bool| -> Result<wgpu::ComputePipeline> {
            let label = format!(
                "gemm ({} {}, {put:?}{}{})",
                engine.name(),
                dtype.name(),
                if track { "" } else { ", untracked" },
                if grid { ", persistent grid" } else { "" }
            );
            let m = match (put, &out_module) {
                (Put::StorePacked(_), Some(m)) => m,
                (Put::Store, _) => &store_module,
                _ => &update_module,
            };
            shaders::pipeline(
                gpu,
                &label,
                &layout,
                m,
                &[
                    ("TRACK", f64::from(u8::from(track))),
                    ("GRID", f64::from(u8::from(grid))),
                ],
            )
        };
        let fused = FusedFamily::new(gpu, engine.file(), dtype, fused_put, src.as_deref())?;
        // The fused GEMM per tile, B in one window and in two, made with the kernel: a driver that
        // cannot build it fails here, before any mode runs (the rest on first use).
        for split_b in [false, true] {
            fused.pipeline(gpu, &store_module, [split_b, false, false, false])?;
        }
        Ok(GemmKernel {
            dtype,
            engine,
            fused,
            fused4: OnceLock::new(),
            wgsl: (engine.file(), src),
            fused_put,
            store: make(Put::store(out), true, false)?,
            update: make(update_put, true, false)?,
            untracked: make(Put::store(out), false, false)?,
            grid: make(Put::store(out), true, true)?,
            store_module,
            out,
            update_put,
            layout,
        })
    }

    pub fn pipeline(&self, mode: StoreMode) -> &wgpu::ComputePipeline {
        match mode {
            StoreMode::Store => &self.store,
            StoreMode::Update => &self.update,
            StoreMode::Untracked => &self.untracked,
        }
    }

    /// The tracked GEMM with plain stores on a persistent grid (`GemmParams::grid_wg` workgroups).
    pub fn grid_pipeline(&self) -> &wgpu::ComputePipeline {
        &self.grid
    }

    /// Which `put` realises [`StoreMode::Update`] on this adapter.
    pub fn update_put(&self) -> Put {
        self.update_put
    }
}

/// The coopmat2 kernel's pipelines on `layout` (the tracked GEMM's) from `spirv`, tracked and
/// untracked; the caller checked [`crate::gpu::Gpu::has_coopmat2`]. Here, not in src/coopmat2.rs:
/// opening a device needs that module, below the GPU context.
fn coopmat2_pipelines(
    gpu: &Gpu,
    layout: &wgpu::BindGroupLayout,
    spirv: [Vec<u32>; 2],
) -> Result<[wgpu::ComputePipeline; 2]> {
    let [tracked, untracked] = spirv;
    let make = |label: &str, words: Vec<u32>| {
        let module = gpu.scoped(&format!("creating the {label}'s module"), || {
            // SAFETY: the SPIR-V is the committed output of the pinned glslang (scripts/coopmat2),
            // validated by spirv-val when it was made (or a variant the same script built, which
            // bench-gemm checks against the f64 reference before timing it); it uses only what the device was opened with
            // (the extension, its features, f16, 16-bit storage, the Vulkan memory model), and its
            // bindings are `layout`'s (the tracked GEMM's, tests/coopmat2.rs checks the results
            // against the f64 reference). Every read it makes lies inside the operands' padding.
            unsafe {
                gpu.device.create_shader_module_passthrough(
                    wgpu::ShaderModuleDescriptorPassthrough {
                        label: Some(label),
                        entry_points: std::borrow::Cow::Borrowed(&[
                            wgpu::PassthroughShaderEntryPoint {
                                name: std::borrow::Cow::Borrowed("main"),
                                workgroup_size: (256, 1, 1),
                            },
                        ]),
                        spirv: Some(std::borrow::Cow::Owned(words)),
                        ..Default::default()
                    },
                )
            }
        })?;
        shaders::pipeline(gpu, label, layout, &module, &[])
    };
    Ok([
        make("gemm (coopmat2 f16, tracked)", tracked)?,
        make("gemm (coopmat2 f16, untracked)", untracked)?,
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_coopmat2_tile_is_the_hosts() {
        let src = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("shaders/gemm_coopmat2.comp"),
        )
        .unwrap();
        assert!(src.contains(&format!("const uint BN = {};", crate::coopmat2::TILE_N)));
        assert!(src.contains(&format!("const uint BM = {};", crate::shapes::TILE)));
        assert!(src.contains(&format!(
            "const uint GROUP = {};",
            Engine::Coop.tile_group()
        )));
        assert!(src.contains("const uint BK = 32;") && K_SLICE == 32);
    }

    #[test]
    fn tiles_follow_the_engine_width() {
        assert_eq!(crate::shapes::tiles(200, 300, Engine::Simt.tile_n()), 2 * 3);
        assert_eq!(crate::shapes::tiles(200, 300, Engine::Coop.tile_n()), 2 * 2);
        assert_eq!(crate::shapes::tiles(1, 1, Engine::Coop.tile_n()), 1);
    }

    /// Both kernels read their operands unguarded: every tile reads BM rows of A from its first row
    /// (which lies inside the rank's rows), K rounded up to whole BK slices, and BN columns of B from
    /// its first column. The padding must hold every such read, on edge shapes and for a tile starting
    /// at any row (chunks start anywhere), or a kernel reads past its buffer.
    #[test]
    fn the_tile_group_is_the_cooperative_kernels() {
        let coop = crate::reflect::source("gemm_coop.wgsl").unwrap();
        let group = format!("const GROUP: u32 = {}u;", Engine::Coop.tile_group());
        assert!(coop.contains(&group), "gemm_coop.wgsl lacks `{group}`");
        let simt = crate::reflect::source("gemm.wgsl").unwrap();
        assert!(!simt.contains("GROUP") && Engine::Simt.tile_group() == 0);
    }

    #[test]
    fn unguarded_reads_stay_inside_the_padding() {
        for engine in [Engine::Simt, Engine::Coop] {
            let [bm, bn, bk] = crate::reflect::interface(engine.file(), "track")
                .expect("reflected kernel")
                .tile
                .map(|v| v as usize);
            assert!(
                K_SLICE.is_multiple_of(bk),
                "{engine:?}: BK {bk} divides the K padding"
            );
            for (rows, k, n) in [
                (1, 1, 1),
                (1, 31, 1),
                (130, 33, 257),
                (1000, 532, 4256),
                (7, 64, 512),
            ] {
                let l = Padding::new(rows, k, n);
                let (a_len, b_len) = (l.a_rows * l.lda, l.b_rows * l.ldb);
                let k_read = k.next_multiple_of(bk);
                // The last tile row of A's last row band, and the last tile column of B.
                let a_last = (rows - 1 + bm - 1) * l.lda + k_read - 1;
                let col0 = (n - 1) / bn * bn;
                let b_last = (k_read - 1) * l.ldb + col0 + bn - 1;
                // Inside each row's zeros too (a read past them would take the next row's values).
                assert!(
                    k_read <= l.lda && k_read <= l.b_rows,
                    "{engine:?} K {k}: {l:?}"
                );
                assert!(col0 + bn <= l.ldb, "{engine:?} N {n}: {l:?}");
                assert!(
                    a_last < a_len,
                    "{engine:?} {rows}x{k}: A read {a_last} of {a_len}"
                );
                assert!(
                    b_last < b_len,
                    "{engine:?} {k}x{n}: B read {b_last} of {b_len}"
                );
            }
        }
    }

    #[test]
    fn layout_pads_with_zeros_past_every_edge() {
        let l = Padding::new(2, 3, 130);
        assert_eq!((l.lda, l.ldb, l.a_rows, l.b_rows), (32, 256, 2 + TILE, 32));
        let a: Vec<f32> = (1..=6).map(|v| v as f32).collect();
        let packed: Vec<f32> = bytemuck::pod_collect_to_vec(&l.pack_a(Dtype::F32, &a, 3));
        assert_eq!(packed.len(), l.a_rows * l.lda);
        assert_eq!(l.bytes(Dtype::F32).0, (packed.len() * 4) as u64);
        assert_eq!(&packed[..4], &[1.0, 2.0, 3.0, 0.0]);
        assert_eq!(&packed[32..35], &[4.0, 5.0, 6.0]);
        let nonzero = packed.iter().filter(|&&v| v != 0.0).count();
        assert_eq!(nonzero, 6, "only A's own elements are nonzero");
        let b = vec![1.0f32; 3 * 130];
        let packed = l.pack_b(Dtype::F16, &b, 130);
        assert_eq!(packed.len() as u64, l.bytes(Dtype::F16).1);
        let halves: Vec<u16> = bytemuck::pod_collect_to_vec(&packed);
        let ones = halves.iter().filter(|&&h| h == 0x3c00).count();
        assert_eq!(
            (ones, halves[129], halves[130], halves[256]),
            (390, 0x3c00, 0, 0x3c00)
        );
    }
}
