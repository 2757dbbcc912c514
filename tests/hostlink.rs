//! The link between devices opened on one adapter (several "GPUs" that share nothing on lavapipe):
//! random chunks written by a sender's step kernel arrive bit-exact in a receiver's poisoned buffer, on
//! every path (zero-copy where the devices import host memory, mapped, staged), at odd sizes, over
//! reused buffers; bad input and a lost device are errors.

use t3_wgpu::devices::{DeviceSpec, Devices};
use t3_wgpu::executor::{step_target, Executor, Handed, KernelSet};
use t3_wgpu::gpu::Gpu;
use t3_wgpu::hostlink::calibration::{calibrate, Options};
use t3_wgpu::hostlink::{CopyLane, CopyPool, HostLink, Path};
use t3_wgpu::lower::{lower_step, LinkBox, StepEnd, StepSpec};
use t3_wgpu::reference::Rng;
use t3_wgpu::shaders::Put;
use t3_wgpu::shapes::{Dtype, Shape};
use t3_wgpu::steps::{Link, StepKernel};
use t3_wgpu::Error;

mod common;

/// `n` devices on the test adapter, or None (test skipped, said on stderr) where there is none.
fn open(n: usize) -> Option<Devices> {
    match Devices::open(&DeviceSpec::Count(n), &common::gpu_options()) {
        Ok(d) => {
            eprintln!("{}", d.describe().join("; "));
            Some(d)
        }
        Err(e) => {
            if std::env::var("T3_REQUIRE_GPU").is_ok_and(|v| v == "1") {
                panic!("T3_REQUIRE_GPU=1 but no devices: {e}");
            }
            eprintln!("SKIPPED: no GPU adapter ({e})");
            None
        }
    }
}

/// One device's side of the tests: its step pipelines, a source, a destination and tracker counters.
struct End {
    kernel: StepKernel,
    src: wgpu::Buffer,
    dst: wgpu::Buffer,
    counters: wgpu::Buffer,
}

impl End {
    fn new(gpu: &Gpu, bytes: u64) -> End {
        use wgpu::BufferUsages as U;
        let usage = U::STORAGE | U::COPY_DST | U::COPY_SRC;
        End {
            kernel: StepKernel::new(gpu).unwrap(),
            src: gpu.buffer("test src", bytes, usage).unwrap(),
            dst: gpu.buffer("test dst", bytes, usage).unwrap(),
            counters: gpu.buffer("test counters", 16, usage).unwrap(),
        }
    }

    /// Encodes one copy step `src` -> `dst` over `len` f32s at a 3-workgroup link (so that workgroups
    /// stride), through an executor handed the buffers.
    fn step(
        &self,
        gpu: &Gpu,
        enc: &mut wgpu::CommandEncoder,
        dst: &wgpu::Buffer,
        src: &wgpu::Buffer,
        len: usize,
    ) {
        let spec = StepSpec {
            label: "test step",
            dst: StepEnd::Pool,
            src: StepEnd::Pool,
            bytes: len.div_ceil(4) as u64 * 16,
            puts: &[Put::Store],
            links: &[Link::Workgroups(3)],
        };
        let step = lower_step(&spec, step_target(gpu, 0));
        let handed = Handed {
            pool: vec![
                (step.dst, dst),
                (step.src, src),
                (step.counters, &self.counters),
            ],
            ..Default::default()
        };
        let kernels = KernelSet::Step(&self.kernel);
        let mut exec = Executor::pooled(gpu, kernels, &step.lowered, handed).unwrap();
        let rec = step.recording(0, 0);
        exec.record(enc, &step.lowered, rec.label, &rec.commands, None)
            .unwrap();
    }
}

/// Sends `data` from device `link.from` to `link.to` through `slot` on `threads` threads and returns what
/// the receiver's step kernel read out of its inbox into a NaN-poisoned buffer (one element past the
/// payload included, which must stay NaN).
fn send(
    devices: &Devices,
    ends: &[End],
    link: &mut HostLink,
    slot: usize,
    data: &[f32],
    pool: &mut CopyPool,
) -> Vec<f32> {
    let (s, r) = (&devices.gpus[link.from], &devices.gpus[link.to]);
    let (se, re) = (&ends[link.from], &ends[link.to]);
    let bytes = (data.len() * 4) as u64;
    s.queue.write_buffer(&se.src, 0, bytemuck::cast_slice(data));
    let mut enc = s.device.create_command_encoder(&Default::default());
    se.step(s, &mut enc, link.outbox(slot).unwrap(), &se.src, data.len());
    link.encode_drain(slot, &mut enc, bytes).unwrap();
    let sent = s.submit("test send", vec![enc.finish()]).unwrap();
    link.transfer(&devices.gpus, slot, bytes, Some(sent), pool)
        .unwrap();
    let poison = vec![f32::NAN; data.len() + 1];
    r.queue
        .write_buffer(&re.dst, 0, bytemuck::cast_slice(&poison));
    let mut enc = r.device.create_command_encoder(&Default::default());
    link.encode_land(slot, &mut enc, bytes).unwrap();
    // The step moves whole vec4s: round down so that the element past the payload is never written.
    let whole = data.len() / 4 * 4;
    if whole > 0 {
        re.step(r, &mut enc, &re.dst, link.inbox(slot).unwrap(), whole);
    }
    let idx = r.submit("test receive", vec![enc.finish()]).unwrap();
    r.wait(Some(idx), "test receive", r.timeout).unwrap();
    let mut got = r.read_f32("test dst", &re.dst, 0, data.len() + 1).unwrap();
    // The tail past the last whole vec4 is checked in the inbox itself.
    if whole < data.len() {
        let inbox = link.inbox(slot).unwrap();
        let tail = r
            .read_f32(
                "test inbox tail",
                inbox,
                (whole * 4) as u64,
                data.len() - whole,
            )
            .unwrap();
        got[whole..data.len()].copy_from_slice(&tail);
    }
    got
}

fn assert_arrived(got: &[f32], data: &[f32], what: &str) {
    let n = data.len();
    for (i, (g, w)) in got[..n].iter().zip(data).enumerate() {
        assert_eq!(g.to_bits(), w.to_bits(), "{what}: element {i} of {n}");
    }
    assert!(
        got[n].is_nan(),
        "{what}: the element past the payload was written"
    );
}

const SIZES: [usize; 6] = [1, 3, 4, 1023, 65_537, 300_001];

#[test]
fn random_chunks_arrive_bit_exact_over_every_direction_and_path() {
    for n in [2, 3, 4] {
        let Some(devices) = open(n) else { return };
        let cap = (SIZES[SIZES.len() - 1] * 4) as u64;
        let ends: Vec<End> = devices.gpus.iter().map(|g| End::new(g, cap + 16)).collect();
        let mut rng = Rng::new(common::seed("host link"));
        let mut pools = [1, 4, 3].map(|t| CopyPool::new(t).unwrap());
        let import = devices
            .gpus
            .iter()
            .all(|g| t3_wgpu::hostlink::shared::can_import(&g.device));
        for path in Path::ALL {
            // Every ordered pair once for 2 and 3 devices; the ring both ways for 4.
            for from in 0..n {
                for to in (0..n).filter(|&t| t != from) {
                    if n == 4 && (to + 4 - from) % 4 == 2 {
                        continue;
                    }
                    let mut link = HostLink::new(&devices.gpus, from, to, cap, 1, path).unwrap();
                    if path == Path::Staged {
                        assert_eq!((link.send, link.recv), (Path::Staged, Path::Staged));
                    }
                    // Zero-copy exactly where both devices import host memory (the fallback otherwise).
                    // (auto, without a collective to choose by, is zero-copy.)
                    let p = path.resolve(None);
                    assert_eq!(link.zero_copy(), p == Path::ZeroCopy && import);
                    assert_eq!(link.engine(), p == Path::Engine && import);
                    for (i, &len) in SIZES.iter().enumerate() {
                        let pool = &mut pools[i % 3];
                        let threads = pool.threads();
                        let data = rng.fill(len);
                        let got = send(&devices, &ends, &mut link, 0, &data, pool);
                        let what = format!(
                            "{n} devices, {from}->{to}, {} ({}), {len} floats, {threads} threads",
                            path.name(),
                            link.describe()
                        );
                        assert_arrived(&got, &data, &what);
                    }
                }
            }
        }
    }
}

#[test]
fn many_transfers_reuse_the_slots() {
    let Some(devices) = open(2) else { return };
    let cap = 40_000 * 4;
    let ends: Vec<End> = devices.gpus.iter().map(|g| End::new(g, cap + 16)).collect();
    let mut rng = Rng::new(common::seed("host link reuse"));
    let mut pools = [1, 2, 3, 4].map(|t| CopyPool::new(t).unwrap());
    for path in [Path::ZeroCopy, Path::Engine, Path::Mapped] {
        let mut link = HostLink::new(&devices.gpus, 1, 0, cap, 2, path).unwrap();
        assert_eq!(link.slots(), 2);
        for i in 0..24 {
            // Sizes shrink and grow, so that stale bytes of an earlier, longer chunk would show.
            let len = [40_000, 7, 39_999, 5, 1024][i % 5];
            let data = rng.fill(len);
            let got = send(&devices, &ends, &mut link, i % 2, &data, &mut pools[i % 4]);
            assert_arrived(
                &got,
                &data,
                &format!("{}: transfer {i}, slot {}", link.describe(), i % 2),
            );
        }
    }
}

#[test]
fn two_slots_in_flight_at_once() {
    // The split API: both slots started before either is finished, as a trigger loop does; slot 1
    // copied on the caller's threads, slot 0 on a copy lane (off the calling thread).
    let Some(devices) = open(2) else { return };
    let (s, r) = (&devices.gpus[0], &devices.gpus[1]);
    let cap = 1000 * 4;
    let ends: Vec<End> = devices
        .gpus
        .iter()
        .map(|g| End::new(g, 2 * cap + 16))
        .collect();
    let mut link = HostLink::new(&devices.gpus, 0, 1, cap, 2, Path::Mapped).unwrap();
    let mut rng = Rng::new(common::seed("host link slots"));
    let data = rng.fill(2000);
    s.queue
        .write_buffer(&ends[0].src, 0, bytemuck::cast_slice(&data));
    let mut enc = s.device.create_command_encoder(&Default::default());
    for slot in 0..2 {
        // Each slot's chunk is its half of src: offset through a copy, since the step reads from 0.
        enc.copy_buffer_to_buffer(&ends[0].src, slot as u64 * cap, &ends[0].dst, 0, cap);
        ends[0].step(s, &mut enc, link.outbox(slot).unwrap(), &ends[0].dst, 1000);
        link.encode_drain(slot, &mut enc, cap).unwrap();
    }
    let sent = s.submit("test send", vec![enc.finish()]).unwrap();
    link.start(0, cap).unwrap();
    link.start(1, cap).unwrap();
    s.wait(Some(sent), "test send", s.timeout).unwrap();
    for slot in [1, 0] {
        let t0 = std::time::Instant::now();
        while !link.ready(&devices.gpus, slot).unwrap() {
            assert!(t0.elapsed() < s.timeout, "slot {slot} never mapped");
            std::thread::yield_now();
        }
        if slot == 1 {
            link.finish(slot, &mut CopyPool::new(2).unwrap()).unwrap();
        } else {
            let mut lane = CopyLane::new(3).unwrap();
            link.hand_over(slot, &mut lane, 7).unwrap();
            assert_eq!(lane.pending(), 1);
            let done = lane.drain();
            assert_eq!(done.len(), 1);
            assert_eq!(done[0].0, 7, "the lane returns the ticket it was given");
            link.copied(slot, done[0].1.clone()).unwrap();
            assert_eq!(lane.pending(), 0);
            assert!(lane.done().is_empty());
        }
        let got = r
            .read_f32("inbox", link.inbox(slot).unwrap(), 0, 1000)
            .unwrap();
        let want = &data[slot * 1000..(slot + 1) * 1000];
        assert!(
            got.iter()
                .zip(want)
                .all(|(g, w)| g.to_bits() == w.to_bits()),
            "slot {slot}"
        );
    }
}

#[test]
fn bad_input_is_refused_naming_the_value() {
    let Some(devices) = open(2) else { return };
    let msg = |e: Error| e.to_string();
    let e = msg(HostLink::new(&devices.gpus, 1, 1, 64, 1, Path::Mapped)
        .err()
        .unwrap());
    assert!(e.contains("device 1 to itself"), "{e}");
    let e = msg(HostLink::new(&devices.gpus, 0, 2, 64, 1, Path::Mapped)
        .err()
        .unwrap());
    assert!(
        e.contains("device: 2") && e.contains("device count (2)"),
        "{e}"
    );
    let e = msg(HostLink::new(&devices.gpus, 0, 1, 6, 1, Path::Mapped)
        .err()
        .unwrap());
    assert!(e.contains("capacity: 6"), "{e}");
    assert!(HostLink::new(&devices.gpus, 0, 1, 64, 0, Path::Mapped).is_err());
    let too_big = devices.gpus[0].max_binding + 4;
    let e = msg(HostLink::new(&devices.gpus, 0, 1, too_big, 1, Path::Mapped)
        .err()
        .unwrap());
    assert!(e.contains(&too_big.to_string()), "{e}");
    let mut link = HostLink::new(&devices.gpus, 0, 1, 64, 1, Path::Mapped).unwrap();
    let e = msg(link.start(0, 68).unwrap_err());
    assert!(
        e.contains("68 bytes") && e.contains("capacity of 64"),
        "{e}"
    );
    assert!(link.start(0, 6).is_err());
    assert!(link.start(0, 0).is_err());
    let e = msg(link.start(1, 64).unwrap_err());
    assert!(e.contains("slot: 1"), "{e}");
    let mut pool = CopyPool::new(1).unwrap();
    let e = msg(link.finish(0, &mut pool).unwrap_err());
    assert!(e.contains("copied before both maps"), "{e}");
    let mut lane = CopyLane::new(1).unwrap();
    let e = msg(link.hand_over(0, &mut lane, 0).unwrap_err());
    assert!(e.contains("copied before both maps"), "{e}");
    assert_eq!(lane.pending(), 0, "nothing handed over");
    // A lane handed buffers that are not mapped returns the ticket with an error (whether wgpu
    // refuses the ranges or panics on them), never a hang.
    let g = &devices.gpus[0];
    use wgpu::BufferUsages as U;
    let (read, write) = (
        g.buffer("unmapped read", 64, U::MAP_READ | U::COPY_DST)
            .unwrap(),
        g.buffer("unmapped write", 64, U::MAP_WRITE | U::COPY_SRC)
            .unwrap(),
    );
    lane.start(5, &read, &write, 64);
    let done = lane.drain();
    assert_eq!(done.len(), 1);
    assert_eq!(done[0].0, 5);
    assert!(done[0].1.is_err(), "{:?}", done[0].1);
    link.start(0, 64).unwrap();
    let e = msg(link.start(0, 64).unwrap_err());
    assert!(e.contains("started twice"), "{e}");
    // Still usable: the started transfer completes (nothing was submitted, so both maps resolve).
    let t0 = std::time::Instant::now();
    while !link.ready(&devices.gpus, 0).unwrap() {
        assert!(t0.elapsed().as_secs() < 60);
        std::thread::yield_now();
    }
    link.finish(0, &mut pool).unwrap();
    link.transfer(&devices.gpus, 0, 64, None, &mut pool)
        .unwrap();
    // A step naming a link slot binds only the slot it is handed, and a handed buffer stands in
    // only for a plain pool buffer at least as long.
    let outbox = LinkBox {
        link: 0,
        slot: 0,
        end: t3_wgpu::lower::End::Outbox,
    };
    let spec = StepSpec {
        label: "test step",
        dst: StepEnd::Link(outbox),
        src: StepEnd::Pool,
        bytes: 64,
        puts: &[Put::Store],
        links: &[Link::Workgroups(1)],
    };
    let step = lower_step(&spec, step_target(g, 0));
    let kernel = StepKernel::new(g).unwrap();
    let pooled = |handed| Executor::pooled(g, KernelSet::Step(&kernel), &step.lowered, handed);
    let e = msg(pooled(Handed::default()).err().unwrap());
    assert!(
        e.contains("Link(") && e.contains("link buffers handed"),
        "{e}"
    );
    let short = g.buffer("short", 32, U::STORAGE).unwrap();
    let e = msg(pooled(Handed {
        links: [(outbox, link.outbox(0).unwrap().clone())].into(),
        pool: vec![(step.src, &short)],
    })
    .err()
    .unwrap());
    assert!(e.contains("32 bytes for Pool(0)"), "{e}");
}

#[test]
fn a_lost_device_is_a_clear_error() {
    let Some(devices) = open(2) else { return };
    let mut link = HostLink::new(&devices.gpus, 0, 1, 4096, 1, Path::Mapped).unwrap();
    let mut pool = CopyPool::new(2).unwrap();
    link.transfer(&devices.gpus, 0, 4096, None, &mut pool)
        .unwrap();
    devices.gpus[1].device.destroy();
    let t0 = std::time::Instant::now();
    let e = link
        .transfer(&devices.gpus, 0, 4096, None, &mut pool)
        .unwrap_err();
    assert!(t0.elapsed().as_secs() < 60, "took {:?}", t0.elapsed());
    eprintln!("{e}");
    assert!(
        matches!(e, Error::DeviceLost { .. } | Error::Gpu { .. }),
        "{e:?}"
    );
    assert!(
        e.to_string().contains("lost") || e.to_string().contains("host link"),
        "{e}"
    );
}

#[test]
fn device_sets_open_and_refuse_what_does_not_exist() {
    let Some(devices) = open(3) else { return };
    assert_eq!(devices.len(), 3);
    assert_eq!(devices.describe().len(), 3);
    let p = devices.place(5).unwrap();
    assert_eq!((p.ranks_on(0), p.ranks_on(2)), (0..1, 3..5));
    let e = devices.place(2).unwrap_err().to_string();
    assert!(e.contains("3 devices for 2 ranks"), "{e}");
    // Devices of one adapter share nothing: a bind group of one refuses a buffer of another.
    let (g0, g1) = (&devices.gpus[0], &devices.gpus[1]);
    let usage = wgpu::BufferUsages::STORAGE;
    let foreign = g0.buffer("foreign", 64, usage).unwrap();
    let own = g1.buffer("own", 64, usage).unwrap();
    let uniform = g1
        .buffer("own params", 64, wgpu::BufferUsages::UNIFORM)
        .unwrap();
    let k = StepKernel::new(g1).unwrap();
    let bind = |first: &wgpu::Buffer| {
        g1.scoped("binding", || {
            let entries: Vec<wgpu::BindGroupEntry> = [first, &uniform, &own, &own, &own]
                .iter()
                .enumerate()
                .map(|(i, b)| wgpu::BindGroupEntry {
                    binding: i as u32,
                    resource: b.as_entire_binding(),
                })
                .collect();
            g1.device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: None,
                layout: &k.layout,
                entries: &entries,
            })
        })
    };
    assert!(bind(&own).is_ok());
    assert!(bind(&foreign).is_err());
    let opts = common::gpu_options();
    let e = Devices::open(&"99,".parse().unwrap(), &opts)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("device index: 99") && e.contains("0: "), "{e}");
    match Devices::open(&DeviceSpec::All, &opts) {
        Ok(d) => eprintln!("--devices all opened {}", d.describe().join("; ")),
        Err(e) => {
            let e = e.to_string();
            assert!(e.contains("discrete GPU"), "{e}");
        }
    }
}

#[test]
fn calibration_measures_every_direction_and_checks_its_payload() {
    let Some(devices) = open(3) else { return };
    let opts = Options {
        bytes: vec![16, 48_016, 1 << 20],
        threads: vec![1, 3],
        reps: 1,
        step_link: Link::Workgroups(4),
        // Beside a GEMM the link's kernels take budgets of their own, as host mode's passes do.
        beside_link: (Link::Workgroups(3), Link::Workgroups(5)),
        want: Path::Mapped,
        stream_bytes: 3 << 20,
        stream_threads: None,
        stream_in_flight: None,
        beside_gemm: None,
    };
    let t = calibrate(&devices, &opts).unwrap();
    eprint!("{}", t.text());
    // Streamed: each of the six directions alone, the ring's three at once, then all six at once, 3
    // chunks of 1 MiB each.
    assert_eq!(t.streams.len(), 8);
    assert_eq!(t.streams[6].directions, [(0, 1), (1, 2), (2, 0)]);
    assert_eq!(t.streams[7].directions.len(), 6);
    for st in &t.streams {
        assert_eq!((st.bytes, st.chunks), (1 << 20, 3));
        assert_eq!(st.gbps.len(), st.directions.len());
        assert!(st.gbps.iter().all(|g| g.is_finite() && *g > 0.0), "{st:?}");
    }
    assert!(t.text().contains("all directions at once: 0->1 "));
    assert!(t.text().contains("the ring's directions at once: 0->1 "));
    // What a run reads its links against: the ring's slowest direction (not all six at once, not
    // a direction alone); none without the ring's row.
    let ring_slowest = t.streams[6].gbps.iter().copied().fold(f64::MAX, f64::min);
    assert_eq!(t.streamed_busy(), Some(ring_slowest));
    let mut no_ring = t.clone();
    no_ring.streams.remove(6);
    assert_eq!(no_ring.streamed_busy(), None);
    assert_eq!(t.devices.len(), 3);
    assert_eq!(t.directions.len(), 6);
    assert_eq!(t.rows.len(), 6 * 3 * 2);
    assert!(
        t.duplex.is_empty(),
        "a device sends and lands at once only on zero-copy links"
    );
    for r in &t.rows {
        assert_ne!(r.from, r.to);
        for v in [
            r.write_gbps,
            r.copy_gbps,
            r.host_gbps,
            r.total_gbps,
            r.map_ms,
        ] {
            assert!(v.is_finite() && v >= 0.0, "{r:?}");
        }
        assert!(r.host_gbps <= r.copy_gbps * (1.0 + 1e-9), "{r:?}");
    }
    assert!(t.best(2, 0).is_some_and(|b| b.bytes == 1 << 20));
    let file = std::env::temp_dir().join(format!("t3-hostlink-{}.json", std::process::id()));
    t.save(file.to_str().unwrap()).unwrap();
    let back: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(back["rows"].as_array().unwrap().len(), 36);
    assert_eq!(back["directions"][0]["send"], "mapped");
    let _ = std::fs::remove_file(&file);
    // The zero-copy path (where the devices import host memory): no host copy, the receiver's kernel
    // reads each chunk out of host memory; every size and stream checked against the payload.
    // Each device's sending and landing is also timed beside a GEMM whose sizes fit no tile, and
    // what the GEMM stored in one pass with them is checked exactly. The streams queue three
    // submissions per device through six slots, 64 chunks of 48,016 bytes each.
    let beside = (Shape::new(37, 21, 19).unwrap(), Dtype::F16);
    let zero = Options {
        bytes: vec![4096, 48_016],
        want: Path::ZeroCopy,
        beside_gemm: Some(beside),
        stream_in_flight: Some(3),
        ..opts.clone()
    };
    let t = calibrate(&devices, &zero).unwrap();
    eprint!("{}", t.text());
    if devices
        .gpus
        .iter()
        .all(|g| t3_wgpu::hostlink::shared::can_import(&g.device))
    {
        assert!(t.directions.iter().all(|d| d.send == Path::ZeroCopy));
        assert_eq!(t.rows.len(), 6 * 2, "one row per size: no copy threads");
        assert!(t.rows.iter().all(|r| r.threads == 0 && r.map_ms == 0.0));
        assert!(t.text().contains("zero-copy, all directions at once"));
        assert!(
            t.streams
                .iter()
                .all(|s| (s.slots, s.in_flight, s.chunks, s.bytes) == (6, 3, 64, 48_016)),
            "{:?}",
            t.streams
        );
        assert!(t.text().contains("through 6 slots, 3 queued per device"));
        // Three devices on one adapter: the table says they time-share it.
        assert!(t.one_gpu && t.text().contains("3 devices are on one GPU"));
        // Each device sending to the next and landing from the previous at once, what it landed
        // and sent checked: its kernels alone, in one pass and in two, and the queue's copies.
        assert_eq!(t.duplex.len(), 3);
        for (d, x) in t.duplex.iter().enumerate() {
            assert_eq!(
                (x.device, x.send, x.land),
                (d, (d, (d + 1) % 3), ((d + 2) % 3, d))
            );
            assert_eq!(x.bytes, 48_016);
            for g in [
                x.write_gbps,
                x.read_gbps,
                x.one_pass_gbps,
                x.passes_gbps,
                x.copy_write_gbps,
                x.copy_read_gbps,
                x.copies_gbps,
            ] {
                assert!(g.is_finite() && g > 0.0, "{x:?}");
            }
            let b = x.beside.as_ref().expect("a row beside the GEMM given");
            assert_eq!((b.shape.as_str(), b.dtype.as_str()), ("37x21x19", "f16"));
            assert_eq!((b.send_workgroups, b.land_workgroups), (Some(3), Some(5)));
            // Each time as measured, before the empty submission's is taken off (lavapipe's small
            // GEMM can take less than that median).
            assert!(b.empty_ms.is_finite() && b.empty_ms > 0.0, "{b:?}");
            for ms in [b.gemm_ms, b.link_ms, b.link_first_ms, b.gemm_first_ms] {
                assert!(ms.is_finite() && ms + b.empty_ms > 0.0, "{b:?}");
            }
        }
        assert!(t
            .text()
            .contains("device 2 sending to 0 and landing from 1 at once"));
        assert!(t.text().contains(
            "beside a f16 37x21x19 GEMM on device 2, the send on 3 workgroups, the landing on 5"
        ));
    }
    assert_eq!(t.streams.len(), 8);
    // The engine path: each chunk landed by the receiver's copy (on lavapipe, on its own queue);
    // every size and stream checked against the payload.
    let engine = Options {
        bytes: vec![4096, 48_016],
        want: Path::Engine,
        ..opts.clone()
    };
    let t = calibrate(&devices, &engine).unwrap();
    if devices
        .gpus
        .iter()
        .all(|g| t3_wgpu::hostlink::shared::can_import(&g.device))
    {
        assert!(t.directions.iter().all(|d| d.send == Path::Engine));
        assert_eq!(t.rows.len(), 6 * 2, "one row per size: no copy threads");
        assert!(t.rows.iter().all(|r| r.threads == 0 && r.copy_gbps > 0.0));
        assert!(t
            .text()
            .contains("0->1 (engine): the receiver's copy lands "));
        assert!(t
            .text()
            .contains("engine (the receivers' copies), all directions at once"));
    }
    // The staged path measures too, and says so.
    let staged = Options {
        bytes: vec![4096],
        threads: vec![2],
        want: Path::Staged,
        ..opts.clone()
    };
    let t = calibrate(&devices, &staged).unwrap();
    assert!(t
        .directions
        .iter()
        .all(|d| d.send == Path::Staged && d.recv == Path::Staged));
    assert!(t.text().contains("sender staged, receiver staged"));
    // Bad options are refused naming the value.
    let bad = Options {
        bytes: vec![24],
        ..opts.clone()
    };
    let e = calibrate(&devices, &bad).unwrap_err().to_string();
    assert!(e.contains("24 bytes"), "{e}");
    let e = calibrate(&devices, &Options { reps: 0, ..opts })
        .unwrap_err()
        .to_string();
    assert!(e.contains("0 reps"), "{e}");
}
