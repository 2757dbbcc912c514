//! What reading back costs: the staging pool keeps what its cap allows and no more.
//!
//! Each test opens its own device: what it counts is then its own, whatever runs beside it.

mod common;

use t3_wgpu::gpu::{Gpu, GpuOptions};
use t3_wgpu::readback::{STAGING_BUDGET, STAGING_PER_SIZE};

/// A device of its own, or None (skipped as the shared one would be) without an adapter.
fn own_gpu() -> Option<Gpu> {
    common::gpu()?;
    Some(Gpu::new(&GpuOptions::default()).unwrap())
}

#[test]
fn the_staging_pool_keeps_no_more_than_its_cap() {
    let Some(gpu) = own_gpu() else { return };
    let largest = 2 * STAGING_BUDGET;
    let usage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC;
    let src = gpu.buffer("pool source", largest, usage).unwrap();
    // Every power of two from 4 bytes to twice the budget, read once each.
    let sizes: Vec<u64> = (2..=largest.trailing_zeros()).map(|s| 1u64 << s).collect();
    for &bytes in &sizes {
        let got = gpu.read("a size", &src, 0, bytes).unwrap();
        assert_eq!(got.len() as u64, bytes);
    }
    let kept = gpu.staging_kept();
    let total: u64 = kept.iter().sum();
    assert!(
        total <= STAGING_BUDGET,
        "{total} bytes of staging kept, budget {STAGING_BUDGET}: {kept:?}"
    );
    assert!(
        kept.iter().all(|&s| s <= STAGING_BUDGET),
        "a buffer past the budget kept: {kept:?}"
    );
    assert!(!kept.is_empty(), "the pool keeps nothing");

    // Many reads of one size in flight at once, all handed back: the per-size cap holds.
    let in_flight = STAGING_PER_SIZE + 5;
    let pending: Vec<_> = (0..in_flight)
        .map(|_| {
            let mut enc = gpu.device.create_command_encoder(&Default::default());
            let (staging, bytes) = gpu.encode_read(&mut enc, &[(&src, 0, 1000)]);
            gpu.submit("one of many reads", vec![enc.finish()]).unwrap();
            gpu.map_later("one of many reads", staging, bytes)
        })
        .collect();
    let deadline = web_time::Instant::now() + gpu.timeout;
    for p in pending {
        assert_eq!(gpu.await_read(p, deadline).unwrap().len(), 1000);
    }
    let kept = gpu.staging_kept();
    let of_1024 = kept.iter().filter(|&&s| s == 1024).count();
    assert_eq!(of_1024, STAGING_PER_SIZE, "{kept:?}");
    assert!(kept.iter().sum::<u64>() <= STAGING_BUDGET, "{kept:?}");
}
