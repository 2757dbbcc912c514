//! What reading back costs: the staging pool keeps what its cap allows and no more; a sampled check
//! reads all its rows of a device in one submission, with the same rows and error as a read per row;
//! the pass timer's values come back with the timed submission (reading them submits nothing), over
//! series of several submissions whose resolves do not start on a 256-byte boundary.
//!
//! Each test opens its own device: the submissions counted are then its own, whatever runs beside it.

mod common;

use t3_wgpu::devices::{DeviceSpec, Devices};
use t3_wgpu::experiment::{check, sample, Verify};
use t3_wgpu::gpu::Gpu;
use t3_wgpu::hostlink::Path;
use t3_wgpu::modes::{Config, Host, Kernels, Mode, Sequential, System};
use t3_wgpu::plan::{Buf, Loc};
use t3_wgpu::ranks::{finished, Inputs};
use t3_wgpu::readback::{STAGING_BUDGET, STAGING_PER_SIZE};
use t3_wgpu::reference::rel_to_scale;
use t3_wgpu::schedule::Collective;
use t3_wgpu::shapes::Shape;
use t3_wgpu::steps::Link;
use t3_wgpu::timestamps::Timestamps;

/// A device of its own, or None (skipped as the shared one would be) without an adapter.
fn own_gpu() -> Option<Gpu> {
    common::gpu()?;
    Some(Gpu::new(&common::gpu_options()).unwrap())
}

fn config(ranks: usize, chunks: usize, collective: Collective) -> Config {
    Config {
        chunks,
        collective,
        link: Link::Workgroups(3),
        ..Config::new(Shape::new(70, 29, 11).unwrap(), ranks)
    }
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

/// Every sampled row read alone, as `check` used to: the reference the batched read must equal.
fn rows_one_by_one(sys: &System, inputs: &Inputs) -> (Vec<Vec<f32>>, f64) {
    let (shape, coll, ch) = (sys.config.shape, sys.config.collective, &sys.chunking);
    let mut worst = 0f64;
    let mut rows = Vec::new();
    for (p, x, r) in sample(&finished(coll, ch), ch, inputs.seed, 64) {
        let got = sys.read_rows(p, x, r.clone()).unwrap();
        let row = ch.rows(x).start + r.start;
        let want = inputs.expected_row(shape, coll, ch, row);
        let scale = inputs.magnitude_row(shape, coll, ch, row);
        worst = worst.max(rel_to_scale(&got, &want, &scale));
        rows.push(got);
    }
    (rows, worst)
}

/// Runs `config` on `gpus` under sequential mode, then checks a 64-row sample: one submission per
/// device for its counters and one for its rows; the rows and the error equal a read per row; a
/// sampled row made wrong is caught.
fn sampled_check(gpus: &[Gpu], config: Config) {
    let kernels: Vec<Kernels> = gpus.iter().map(|g| Kernels::new(g).unwrap()).collect();
    let mut sys = System::on_devices(gpus, &kernels, config, Path::Mapped).unwrap();
    let what = format!(
        "{} ranks {} chunks {} on {} devices",
        sys.config.collective,
        sys.config.ranks,
        sys.config.chunks,
        gpus.len()
    );
    let c = sys.config.clone();
    let inputs = Inputs::random(
        c.shape,
        c.dtype,
        c.collective,
        &sys.chunking,
        common::seed(&what),
    );
    sys.upload(&inputs);
    sys.poison();
    Sequential.run(&mut sys).unwrap();

    let before: Vec<u64> = gpus.iter().map(Gpu::submissions).collect();
    let (err, trackers_ok) = check(&sys, &inputs, Verify::Sample(64)).unwrap();
    let made: Vec<u64> = gpus
        .iter()
        .zip(&before)
        .map(|(g, b)| g.submissions() - b)
        .collect();
    assert!(trackers_ok, "{what}: a tracker missed its threshold");
    assert!(err <= 1e-5, "{what}: rel error {err}");
    let sampled = sample(
        &finished(c.collective, &sys.chunking),
        &sys.chunking,
        inputs.seed,
        64,
    );
    // Per device, its counters' readback and its rows' (none where it holds no sampled row).
    let want: Vec<u64> = (0..gpus.len())
        .map(|d| 1 + u64::from(sampled.iter().any(|s| sys.placement.device(s.0) == d)))
        .collect();
    assert_eq!(
        made, want,
        "{what}: submissions per device during a 64-row check"
    );

    let batched = sys.read_rows_of(&sampled).unwrap();
    let (alone, alone_err) = rows_one_by_one(&sys, &inputs);
    assert_eq!(
        batched.iter().map(|r| r.len()).collect::<Vec<_>>(),
        alone.iter().map(|r| r.len()).collect::<Vec<_>>(),
        "{what}"
    );
    for (k, (a, b)) in batched.iter().zip(&alone).enumerate() {
        assert!(
            a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits()),
            "{what}: sampled row {k} {:?} differs from its own read",
            sampled[k]
        );
    }
    assert_eq!(
        err.to_bits(),
        alone_err.to_bits(),
        "{what}: {err} vs {alone_err}"
    );

    // One sampled row made wrong (on its own device, in its own buffer) fails the check.
    let (p, x, r) = sampled[sampled.len() / 2].clone();
    let part = sys.part_of(p);
    let loc = Loc {
        rank: p,
        chunk: x,
        buf: Buf::Out,
    };
    let n = c.shape.n;
    let wrong: Vec<f32> = alone[sampled.len() / 2].iter().map(|v| v + 1.0).collect();
    part.gpu.queue.write_buffer(
        &part.ranks.locs[&loc].data,
        (r.start * n * 4) as u64,
        bytemuck::cast_slice(&wrong),
    );
    let (err, _) = check(&sys, &inputs, Verify::Sample(64)).unwrap();
    assert!(
        err > 1e-3,
        "{what}: a wrong sampled row went unseen ({err})"
    );
}

#[test]
fn a_sampled_check_reads_its_rows_in_one_submission() {
    let Some(gpu) = own_gpu() else { return };
    sampled_check(
        std::slice::from_ref(&gpu),
        config(4, 2, Collective::ReduceScatter),
    );
    sampled_check(
        std::slice::from_ref(&gpu),
        config(3, 1, Collective::AllReduce),
    );
}

#[test]
fn a_sampled_check_reads_once_per_device() {
    if common::gpu().is_none() {
        return;
    }
    let devs = Devices::open(&DeviceSpec::Count(2), &common::gpu_options()).unwrap();
    sampled_check(&devs.gpus, config(4, 2, Collective::AllGather));
}

#[test]
fn timed_passes_are_read_without_a_submission_of_their_own() {
    let Some(gpu) = own_gpu() else { return };
    if !gpu.has(wgpu::Features::TIMESTAMP_QUERY) {
        eprintln!("SKIPPED: the adapter has no timestamp queries");
        return;
    }
    // A series of submissions whose passes straddle the 256-byte boundaries (16 pairs) resolves.
    let mut timer = Timestamps::new(&gpu, 64);
    timer.reset();
    let mut last = None;
    for passes in [5, 13, 20, 1] {
        let mut enc = gpu.device.create_command_encoder(&Default::default());
        for _ in 0..passes {
            enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("timed"),
                timestamp_writes: timer.pass(),
            });
        }
        timer.encode_resolve(&mut enc);
        last = Some(gpu.submit("timed passes", vec![enc.finish()]).unwrap());
    }
    gpu.wait(last, "timed passes", gpu.timeout).unwrap();
    let before = gpu.submissions();
    let ticks = timer.ticks(&gpu).unwrap();
    assert_eq!(
        gpu.submissions(),
        before,
        "reading the timestamps submitted"
    );
    assert_eq!(ticks.len(), 39);
    assert!(timer.covered());
    // Unresolved values read as zero (the readback buffer starts zeroed); a pass ends after it
    // begins.
    assert!(ticks.iter().all(|&(a, b)| a > 0 && a <= b), "{ticks:?}");

    // The modes' timer: one submission per recording, the passes' spans from the GPU clock.
    let kernels = Kernels::new(&gpu).unwrap();
    let mut sys = System::new(&gpu, &kernels, config(4, 2, Collective::ReduceScatter)).unwrap();
    let c = sys.config.clone();
    let inputs = Inputs::random(c.shape, c.dtype, c.collective, &sys.chunking, 3);
    sys.upload(&inputs);
    let before = gpu.submissions();
    let run = Sequential.run(&mut sys).unwrap();
    assert_eq!(
        gpu.submissions() - before,
        1,
        "sequential: {}",
        run.timeline.grain
    );
    assert!(
        run.timeline.grain.contains("GPU timestamps"),
        "{}",
        run.timeline.grain
    );
    assert!(run.total_us > 0.0);
    // Host mode reads its spans once after every submission: each resolved its own passes.
    let run = Host::default().run(&mut sys).unwrap();
    let grain = &run.timeline.grain;
    assert!(
        grain.contains("GPU timestamps") && grain.contains("aligned"),
        "{grain}"
    );
    let (err, ok) = check(&sys, &inputs, Verify::Full).unwrap();
    assert!(ok && err <= 1e-5, "host: {err}");
}
