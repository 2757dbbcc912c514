//! Shared test setup: one GPU context per test binary, and the T3_REQUIRE_GPU rule.
#![allow(dead_code)]

use std::sync::OnceLock;

use t3_wgpu::gpu::{Gpu, GpuOptions};

static GPU: OnceLock<Option<Gpu>> = OnceLock::new();

/// The shared GPU, or None (test skipped, said on stderr) when there is no adapter.
/// With T3_REQUIRE_GPU=1 a missing adapter fails the test instead.
pub fn gpu() -> Option<&'static Gpu> {
    GPU.get_or_init(|| match Gpu::new(&GpuOptions::default()) {
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
