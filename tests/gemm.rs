//! The tracked GEMM against the f64 reference: edge shapes, chunk counts, stagger orders, update mode;
//! f32 operands, f16 ones (whichever f16 kernel the adapter gets: cooperative matrices or SIMT) and
//! bf16 ones (SIMT).

mod common;

use t3_wgpu::gemm::{Engine, GemmKernel, StoreMode};
use t3_wgpu::gpu::{Gpu, GpuOptions};
use t3_wgpu::reference::{gemm, rel_frobenius, Rng};
use t3_wgpu::shapes::{Dtype, Shape};
use t3_wgpu::tracked::TrackedGemm;
use t3_wgpu::Error;

fn check(
    gpu: &Gpu,
    kernel: &GemmKernel,
    m: usize,
    n: usize,
    k: usize,
    chunks: usize,
    order: Option<Vec<usize>>,
) {
    check_on(gpu, kernel, (m, n, k), chunks, order, None);
}

/// `check`, the tracked store on a persistent grid of `grid` workgroups where given.
fn check_on(
    gpu: &Gpu,
    kernel: &GemmKernel,
    (m, n, k): (usize, usize, usize),
    chunks: usize,
    order: Option<Vec<usize>>,
    grid: Option<u32>,
) {
    let shape = Shape::new(m, n, k).unwrap();
    let d = kernel.dtype;
    let what = format!(
        "{m}x{n}x{k} chunks {chunks} {} ({}) grid {grid:?}",
        d.name(),
        kernel.engine.name()
    );
    let mut rng = Rng::new(common::seed(&format!("gemm {what}")));
    // Operands as the kernel holds them, so the reference multiplies exactly what the device does.
    let mut fill =
        |len: usize| -> Vec<f32> { rng.fill(len).into_iter().map(|v| d.round(v)).collect() };
    let a = fill(m * k);
    let b = fill(k * n);
    let mut g = match grid {
        None => TrackedGemm::new(gpu, kernel, shape, chunks, order),
        Some(w) => TrackedGemm::on_grid(gpu, kernel, shape, chunks, w),
    }
    .unwrap();
    g.upload(&a, &b).unwrap();
    g.fill_c(f32::NAN).unwrap();
    g.run(StoreMode::Store, true).unwrap();
    let c = g.read_c().unwrap();
    let err = rel_frobenius(&c, &gemm(&a, &b, m, n, k));
    assert!(err <= tolerance(d), "{what}: rel error {err}");
    assert_eq!(
        g.read_counters().unwrap(),
        g.lowering.thresholds,
        "{what}: tracker"
    );
}

/// Relative error allowed. f16 and bf16 operands are rounded before the reference sees them, so every
/// kernel accumulates exact products in f32; the f16 bound leaves room for tensor cores' accumulation
/// order and rounding and is still ten times tighter than the 1e-2 the performance issue asks; bf16
/// runs on the SIMT kernel, whose f32 accumulation is the f32 GEMM's.
fn tolerance(d: Dtype) -> f64 {
    match d {
        Dtype::F32 | Dtype::Bf16 => 1e-5,
        Dtype::F16 => 1e-3,
    }
}

/// The `dtype` kernel the adapter gets, or None (skipped, said on stderr) where it has none (f16
/// without SHADER_F16).
fn typed_kernel(gpu: &Gpu, dtype: Dtype) -> Option<GemmKernel> {
    match GemmKernel::with(gpu, dtype, None) {
        Ok(k) => {
            eprintln!("{} GEMM kernel: {}", dtype.name(), k.engine.name());
            Some(k)
        }
        Err(e @ Error::MissingFeature { .. }) => {
            eprintln!("SKIPPED {}: {e}", dtype.name());
            None
        }
        Err(e) => panic!("{e}"),
    }
}

/// Ragged shapes (the guarded scalar loads) and shapes whose K and N are multiples of 4 (the
/// cooperative kernel's vector loads), with chunk counts that do and do not divide M; a stagger
/// order and a tall shape of many workgroups.
fn reduced_precision_cases(dtype: Dtype) {
    let Some(gpu) = common::gpu() else { return };
    let Some(kernel) = typed_kernel(gpu, dtype) else {
        return;
    };
    for &(m, n, k, chunks) in &[
        (1, 1, 1, 1),
        (17, 33, 65, 1),
        (129, 7, 300, 2),
        (2, 2, 9, 1),
        (131, 129, 17, 3),
        (128, 128, 32, 1),
        (130, 132, 36, 2),
        (300, 260, 100, 7),
        (257, 64, 48, 2),
    ] {
        check(gpu, &kernel, m, n, k, chunks, None);
    }
    check(gpu, &kernel, 301, 96, 40, 6, Some(vec![5, 0, 4, 1, 3, 2]));
    check(gpu, &kernel, 600, 300, 129, 1, None);
}

#[test]
fn f16_operands_match_reference() {
    reduced_precision_cases(Dtype::F16);
}

#[test]
fn bf16_operands_match_reference() {
    reduced_precision_cases(Dtype::Bf16);
}

#[test]
fn kernel_choice_is_checked() {
    let Some(gpu) = common::gpu() else { return };
    let e = GemmKernel::with(gpu, Dtype::F32, Some(Engine::Coop))
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("coop") && e.contains("f16"), "{e}");
    if !gpu.has_coop_f16() && gpu.has(wgpu::Features::SHADER_F16) {
        let e = GemmKernel::with(gpu, Dtype::F16, Some(Engine::Coop))
            .err()
            .unwrap();
        assert!(matches!(e, Error::MissingFeature { .. }), "{e}");
    }
    // No adapter gets bf16 cooperative matrices through wgpu 30; auto is SIMT, everywhere.
    let e = GemmKernel::with(gpu, Dtype::Bf16, Some(Engine::Coop))
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("coop") && e.contains("bf16"), "{e}");
    let k = GemmKernel::with(gpu, Dtype::Bf16, None).unwrap();
    assert_eq!(k.engine, Engine::Simt);
    check(gpu, &k, 70, 45, 33, 2, None);
    // SIMT is always there for f32, and for f16 wherever SHADER_F16 is.
    let k = GemmKernel::with(gpu, Dtype::F32, Some(Engine::Simt)).unwrap();
    assert_eq!(k.engine, Engine::Simt);
    if gpu.has(wgpu::Features::SHADER_F16) {
        let k = GemmKernel::with(gpu, Dtype::F16, Some(Engine::Simt)).unwrap();
        check(gpu, &k, 70, 45, 33, 2, None);
    }
}

#[test]
fn edge_shapes_match_reference() {
    let Some(gpu) = common::gpu() else { return };
    let kernel = GemmKernel::new(gpu).unwrap();
    for &(m, n, k) in &[
        (1, 1, 1),
        (17, 33, 65),
        (129, 7, 300),
        (1, 513, 3),
        (2, 2, 9),
        (128, 128, 8),
        (131, 129, 17),
    ] {
        check(gpu, &kernel, m, n, k, 1, None);
    }
}

#[test]
fn many_workgroups_match_reference() {
    let Some(gpu) = common::gpu() else { return };
    let kernel = GemmKernel::new(gpu).unwrap();
    // 5 x 3 tiles of 128, with ragged edges on both axes.
    check(gpu, &kernel, 600, 300, 129, 1, None);
}

#[test]
fn tracker_counts_every_chunk() {
    let Some(gpu) = common::gpu() else { return };
    let kernel = GemmKernel::new(gpu).unwrap();
    // Chunk counts that do and do not divide M; chunks smaller and larger than a tile.
    for &(m, chunks) in &[(300, 3), (300, 7), (257, 2), (9, 9), (1000, 13)] {
        check(gpu, &kernel, m, 70, 33, chunks, None);
    }
}

#[test]
fn staggered_orders_give_same_result() {
    let Some(gpu) = common::gpu() else { return };
    let kernel = GemmKernel::new(gpu).unwrap();
    let mut rng = Rng::new(common::seed("stagger"));
    let chunks = 6;
    let mut order: Vec<usize> = (0..chunks).collect();
    for i in (1..chunks).rev() {
        order.swap(i, rng.below(i + 1));
    }
    check(gpu, &kernel, 301, 90, 40, chunks, Some(order));
    check(
        gpu,
        &kernel,
        301,
        90,
        40,
        chunks,
        Some((0..chunks).rev().collect()),
    );
}

#[test]
fn update_mode_accumulates() {
    let Some(gpu) = common::gpu() else { return };
    let kernel = GemmKernel::new(gpu).unwrap();
    let (m, n, k) = (77, 150, 45);
    let mut rng = Rng::new(common::seed("update"));
    let mut g = TrackedGemm::new(gpu, &kernel, Shape::new(m, n, k).unwrap(), 4, None).unwrap();
    let (a1, b1, a2, b2) = (
        rng.fill(m * k),
        rng.fill(k * n),
        rng.fill(m * k),
        rng.fill(k * n),
    );
    g.fill_c(0.0).unwrap();
    g.upload(&a1, &b1).unwrap();
    g.run(StoreMode::Update, true).unwrap();
    g.upload(&a2, &b2).unwrap();
    g.run(StoreMode::Update, false).unwrap();
    let want: Vec<f64> = gemm(&a1, &b1, m, n, k)
        .iter()
        .zip(gemm(&a2, &b2, m, n, k))
        .map(|(x, y)| x + y)
        .collect();
    let err = rel_frobenius(&g.read_c().unwrap(), &want);
    assert!(
        err <= 1e-5,
        "update rel error {err} (put {:?})",
        kernel.update_put()
    );
    let twice: Vec<u32> = g.lowering.thresholds.iter().map(|t| 2 * t).collect();
    assert_eq!(g.read_counters().unwrap(), twice);
}

/// The standalone GEMM on a persistent grid (the gemm bench's `--grid`): grids of one workgroup,
/// a few, one per tile and more than the tiles, each workgroup then looping over several tiles of
/// a ragged shape (f32: 3 x 5 tiles; f16 where the adapter has it).
#[test]
fn grid_store_covers_every_tile() {
    let Some(gpu) = common::gpu() else { return };
    let kernel = GemmKernel::new(gpu).unwrap();
    for grid in [1, 4, 15, 40] {
        check_on(gpu, &kernel, (300, 600, 37), 3, None, Some(grid));
    }
    if let Some(k16) = typed_kernel(gpu, Dtype::F16) {
        check_on(gpu, &k16, (300, 600, 37), 2, None, Some(3));
    }
    let g = TrackedGemm::on_grid(gpu, &kernel, Shape::new(300, 600, 37).unwrap(), 3, 40).unwrap();
    assert_eq!(
        g.grid_wg(),
        Some(g.lowering.total_wg),
        "at most a workgroup per tile"
    );
    let e = TrackedGemm::on_grid(gpu, &kernel, Shape::new(8, 8, 8).unwrap(), 1, 0)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("grid") && e.contains('0'), "{e}");
}

#[test]
fn bad_input_is_a_typed_error() {
    assert!(matches!(Shape::new(0, 4, 4), Err(Error::Invalid { .. })));
    let Some(gpu) = common::gpu() else { return };
    let kernel = GemmKernel::new(gpu).unwrap();
    let s = Shape::new(8, 8, 8).unwrap();
    let e = TrackedGemm::new(gpu, &kernel, s, 9, None)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains('9') && e.contains("8 output rows"), "{e}");
    let e = TrackedGemm::new(gpu, &kernel, s, 2, Some(vec![1, 1]))
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("permutation"), "{e}");
    // A buffer over the (lowered) binding limit is refused before any GPU work, naming the limit.
    let small = Gpu::new(&GpuOptions {
        limit_override: Some(1024),
        ..common::gpu_options()
    })
    .unwrap();
    let k2 = GemmKernel::new(&small).unwrap();
    let e = TrackedGemm::new(&small, &k2, Shape::new(64, 64, 1).unwrap(), 1, None)
        .err()
        .unwrap();
    assert!(matches!(e, Error::TooLarge { limit: 1024, .. }), "{e}");
    assert!(
        e.to_string().contains("max_storage_buffer_binding_size")
            || e.to_string().contains("max_buffer_size")
    );
}

#[test]
fn forced_timeout_is_an_error_naming_the_work() {
    if common::gpu().is_none() {
        return;
    }
    // A bound far below what any adapter needs for a 512³ GEMM.
    let gpu = Gpu::new(&GpuOptions {
        timeout: Some(std::time::Duration::from_nanos(1)),
        ..common::gpu_options()
    })
    .unwrap();
    let kernel = GemmKernel::new(&gpu).unwrap();
    let s = Shape::new(512, 512, 512).unwrap();
    let mut g = TrackedGemm::new(&gpu, &kernel, s, 1, None).unwrap();
    let e = g.run(StoreMode::Store, true).unwrap_err();
    assert!(matches!(e, Error::Timeout { .. }), "{e}");
    assert!(e.to_string().contains("tracked gemm 512x512x512"), "{e}");
}

#[test]
fn workgroups_fold_into_two_dimensions() {
    if common::gpu().is_none() {
        return;
    }
    // With at most 3 workgroups per dimension, 4 x 3 tiles need a 2-D dispatch.
    let gpu = Gpu::new(&GpuOptions {
        dispatch_limit: Some(3),
        ..common::gpu_options()
    })
    .unwrap();
    assert_eq!(gpu.fold(12), (3, 4));
    assert_eq!(gpu.fold(10), (3, 4));
    let kernel = GemmKernel::new(&gpu).unwrap();
    check(&gpu, &kernel, 500, 300, 20, 3, None);
}
