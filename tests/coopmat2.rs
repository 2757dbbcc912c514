//! The coopmat2 GEMM (VK_NV_cooperative_matrix2 through SPIR-V passthrough) against the f64 reference
//! on adapters that offer it, tracked and untracked, on edge shapes and stagger orders; refused
//! plainly, with a typed error naming the extension, everywhere else (lavapipe, CI).

mod common;

use t3_wgpu::executor::Kernels;
use t3_wgpu::gemm::{Engine, GemmKernel, StoreMode};
use t3_wgpu::gpu::Gpu;
use t3_wgpu::reference::{gemm, rel_frobenius, Rng};
use t3_wgpu::shapes::{Dtype, Shape};
use t3_wgpu::tracked::TrackedGemm;
use t3_wgpu::Error;

/// As tests/gemm.rs's f16 bound: operands rounded to f16 before the reference sees them, products
/// exact, f32 accumulation in the tensor cores' order.
const TOLERANCE: f64 = 1e-3;

/// The kernel, or None (skipped, said on stderr) where the adapter lacks the extension: then the
/// refusal is the typed one, naming it.
fn kernel(gpu: &Gpu) -> Option<GemmKernel> {
    match GemmKernel::with(gpu, Dtype::F16, Some(Engine::Coopmat2)) {
        Ok(k) => Some(k),
        Err(Error::MissingFeature { feature, .. }) if !gpu.has_coopmat2() => {
            assert!(
                feature == "VK_NV_cooperative_matrix2" || feature == "SHADER_F16",
                "{feature}"
            );
            eprintln!("SKIPPED: {} lacks {feature}", gpu.info.name);
            None
        }
        Err(e) => panic!("{e}"),
    }
}

fn check(
    gpu: &Gpu,
    k: &GemmKernel,
    (m, n, kk): (usize, usize, usize),
    chunks: usize,
    order: Option<Vec<usize>>,
) {
    let shape = Shape::new(m, n, kk).unwrap();
    let what = format!("coopmat2 {m}x{n}x{kk} chunks {chunks} order {order:?}");
    let mut rng = Rng::new(common::seed(&what));
    let mut fill = |len: usize| -> Vec<f32> {
        rng.fill(len)
            .into_iter()
            .map(|v| Dtype::F16.round(v))
            .collect()
    };
    let a = fill(m * kk);
    let b = fill(kk * n);
    let want = gemm(&a, &b, m, n, kk);
    let mut g = TrackedGemm::new(gpu, k, shape, chunks, order).unwrap();
    g.upload(&a, &b).unwrap();
    // Tracked last: its counters are the ones read (every run clears them first).
    for mode in [StoreMode::Untracked, StoreMode::Store] {
        g.fill_c(f32::NAN).unwrap();
        g.run(mode, true).unwrap();
        let err = rel_frobenius(&g.read_c().unwrap(), &want);
        assert!(err <= TOLERANCE, "{what} {mode:?}: rel error {err}");
    }
    assert_eq!(
        g.read_counters().unwrap(),
        g.lowering.thresholds,
        "{what}: tracker"
    );
}

/// Ragged shapes (every edge of the clamped store, K not a whole 64-deep step), a shape of whole
/// tiles, chunks that do and do not divide M, a stagger order, several tile rows and columns.
#[test]
fn coopmat2_matches_reference() {
    let Some(gpu) = common::gpu() else { return };
    let Some(k) = kernel(gpu) else { return };
    assert_eq!(k.engine, Engine::Coopmat2);
    for &(shape, chunks) in &[
        ((1, 1, 1), 1),
        ((17, 33, 65), 1),
        ((2, 2, 9), 1),
        ((131, 129, 17), 3),
        ((128, 256, 64), 1),
        ((130, 260, 96), 2),
        ((300, 520, 100), 7),
        ((1100, 300, 129), 3),
    ] {
        check(gpu, &k, shape, chunks, None);
    }
    check(gpu, &k, (301, 96, 40), 6, Some(vec![5, 0, 4, 1, 3, 2]));
}

/// Without the extension: refused with the typed error naming it; f32 or bf16 operands refused
/// everywhere (the kernel multiplies f16); and no run takes it (only its tracked store and
/// untracked GEMM exist).
#[test]
fn coopmat2_is_refused_plainly() {
    let Some(gpu) = common::gpu() else { return };
    for d in [Dtype::F32, Dtype::Bf16] {
        let e = GemmKernel::with(gpu, d, Some(Engine::Coopmat2))
            .err()
            .expect("refused");
        assert!(
            e.to_string().contains("coopmat2") && e.to_string().contains("f16"),
            "{e}"
        );
    }
    if !gpu.has_coopmat2() {
        let e = GemmKernel::with(gpu, Dtype::F16, Some(Engine::Coopmat2))
            .err()
            .expect("refused");
        assert!(matches!(e, Error::MissingFeature { .. }), "{e}");
        let said = e.to_string();
        assert!(said.contains(&gpu.info.name), "{said}");
        if gpu.has(wgpu::Features::SHADER_F16) {
            assert!(said.contains("VK_NV_cooperative_matrix2"), "{said}");
        }
    }
    let e = Kernels::with(gpu, Dtype::F16, Some(Engine::Coopmat2))
        .err()
        .expect("refused");
    assert!(e.to_string().contains("coopmat2"), "{e}");
    assert_eq!(
        Engine::parse_bench("CoopMat2").unwrap(),
        Some(Engine::Coopmat2)
    );
    assert!(
        Engine::parse("coopmat2").is_err(),
        "a run's --gemm-kernel does not take it yet"
    );
    let e = Engine::parse_bench("coopmat3").unwrap_err().to_string();
    assert!(e.contains("coopmat3") && e.contains("coopmat2"), "{e}");
}

/// The one opening path (src/vkdevice.rs) enables each extension the adapter offers, the zero-copy
/// link's beside coopmat2's: neither takes the other's place.
#[test]
fn the_device_has_every_extension_its_adapter_offers() {
    let Some(gpu) = common::gpu() else { return };
    use t3_wgpu::hostlink::shared;
    assert_eq!(
        shared::can_import(&gpu.device),
        shared::adapter_can_import(&gpu.adapter),
        "{}: VK_EXT_external_memory_host",
        gpu.info.name
    );
    let needs = wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX
        | wgpu::Features::PASSTHROUGH_SHADERS
        | wgpu::Features::SHADER_F16;
    let offered = t3_wgpu::coopmat2::offer(&gpu.adapter).is_some_and(|o| o.features.suffice());
    assert_eq!(
        t3_wgpu::coopmat2::device_ready(&gpu.device),
        offered && gpu.has(needs),
        "{}: VK_NV_cooperative_matrix2",
        gpu.info.name
    );
    eprintln!(
        "{}: external_memory_host {}, cooperative_matrix2 {}",
        gpu.info.name,
        shared::can_import(&gpu.device),
        t3_wgpu::coopmat2::device_ready(&gpu.device)
    );
}
