//! Shared test setup: one GPU context per test binary, the options every test opens devices with
//! (T3_KERNEL_WGSL), the T3_REQUIRE_GPU rule and T3_SOAK's case counts.
#![allow(dead_code)]

pub mod cli;

use std::sync::OnceLock;

use t3_wgpu::gpu::{Gpu, GpuOptions};

static GPU: OnceLock<Option<Gpu>> = OnceLock::new();

/// The options every test opens its devices with: the environment's (WGPU_*, T3_TIMEOUT_S, T3_SMS),
/// and the GEMM kernel files `T3_KERNEL_WGSL` names (what `t3 --kernel-wgsl` takes), so that a
/// kernel variant's tests run on it (scripts/device-run.sh coopvar).
pub fn gpu_options() -> GpuOptions {
    let kernels = match std::env::var("T3_KERNEL_WGSL") {
        Ok(v) => t3_wgpu::settings::KernelFiles::parse(&v)
            .unwrap_or_else(|e| panic!("T3_KERNEL_WGSL: {e}")),
        Err(_) => Default::default(),
    };
    t3_wgpu::settings::with_environment(GpuOptions {
        kernels,
        ..Default::default()
    })
    .expect("the environment's GPU settings")
}

/// The shared GPU, or None (test skipped, said on stderr) when there is no adapter.
/// With T3_REQUIRE_GPU=1 a missing adapter fails the test instead.
pub fn gpu() -> Option<&'static Gpu> {
    GPU.get_or_init(|| match Gpu::new(&gpu_options()) {
        Ok(g) => {
            eprintln!("adapter: {}", g.describe());
            Some(g)
        }
        Err(e) => {
            if std::env::var("T3_REQUIRE_GPU").is_ok_and(|v| v == "1") {
                panic!("T3_REQUIRE_GPU=1 but no GPU adapter: {e}");
            }
            eprintln!("SKIPPED: no GPU adapter ({e})");
            None
        }
    })
    .as_ref()
}

/// A fresh seed per call, printed so a failure can be replayed.
pub fn seed(label: &str) -> u64 {
    let s = t3_wgpu::reference::fresh_seed() ^ (label.len() as u64).wrapping_mul(0x9E37);
    eprintln!("{label}: seed {s}");
    s
}

/// The kernels of `dtype` on the test GPU ([`gpu`]), made once per test binary so that each pipeline
/// compiles once, not once per test case (lavapipe takes seconds a pipeline where Mesa's shader cache
/// is empty), or None (test skipped, said on stderr) where the adapter cannot run them (f16 without
/// SHADER_F16).
pub fn kernels(
    gpu: &'static Gpu,
    dtype: t3_wgpu::shapes::Dtype,
) -> Option<&'static t3_wgpu::modes::Kernels> {
    use t3_wgpu::shapes::Dtype;
    static KERNELS: [OnceLock<Option<t3_wgpu::modes::Kernels>>; 3] = [const { OnceLock::new() }; 3];
    let slot = match dtype {
        Dtype::F32 => 0,
        Dtype::F16 => 1,
        Dtype::Bf16 => 2,
    };
    KERNELS[slot]
        .get_or_init(|| match t3_wgpu::modes::Kernels::with(gpu, dtype, None) {
            Ok(k) => {
                eprintln!("{} GEMM kernel: {}", dtype.name(), k.gemm.engine.name());
                Some(k)
            }
            Err(e @ t3_wgpu::Error::MissingFeature { .. }) => {
                eprintln!("SKIPPED {}: {e}", dtype.name());
                None
            }
            Err(e) => panic!("{e}"),
        })
        .as_ref()
}

/// Most devices [`devices`] opens.
pub const DEVICES: usize = 8;

/// Four devices on the test adapter (N devices of one adapter share nothing: every step between them
/// goes through the host link) with their f32 kernels, opened once per test binary; None (tests
/// skipped, said on stderr) where there is no adapter.
pub fn devices() -> Option<&'static (t3_wgpu::devices::Devices, Vec<t3_wgpu::modes::Kernels>)> {
    use t3_wgpu::devices::{DeviceSpec, Devices};
    type Set = (Devices, Vec<t3_wgpu::modes::Kernels>);
    static SET: OnceLock<Option<Set>> = OnceLock::new();
    SET.get_or_init(
        || match Devices::open(&DeviceSpec::Count(DEVICES), &gpu_options()) {
            Ok(d) => {
                eprintln!("{}", d.describe().join("; "));
                let k = d
                    .gpus
                    .iter()
                    .map(|g| t3_wgpu::modes::Kernels::new(g).unwrap())
                    .collect();
                Some((d, k))
            }
            Err(e) => {
                if std::env::var("T3_REQUIRE_GPU").is_ok_and(|v| v == "1") {
                    panic!("T3_REQUIRE_GPU=1 but no devices: {e}");
                }
                eprintln!("SKIPPED: no GPU adapter ({e})");
                None
            }
        },
    )
    .as_ref()
}

/// The mode table of a report's text: where its overlap efficiency column ends, and its rows.
pub fn mode_rows(text: &str) -> (usize, Vec<&str>) {
    let header = text.lines().find(|l| l.starts_with("mode ")).unwrap();
    let eff = header.find("overlap eff").unwrap() + "overlap eff".len();
    let rows = text
        .lines()
        .skip_while(|l| !l.starts_with("mode "))
        .skip(1)
        .take_while(|l| !l.is_empty())
        .collect();
    (eff, rows)
}

/// Cases a property test runs: `ci` (a few, for the suite), or `T3_SOAK=N` of them (a long soak).
pub fn cases(ci: u32) -> u32 {
    match std::env::var("T3_SOAK") {
        Err(_) => ci,
        Ok(v) => v
            .trim()
            .parse()
            .ok()
            .filter(|&n| n > 0)
            .unwrap_or_else(|| panic!("T3_SOAK={v:?}: a number of cases, at least 1")),
    }
}
