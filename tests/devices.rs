//! Ranks on several devices (N devices opened on the test adapter: "GPUs" that share nothing, so every
//! step between them goes through host memory): every collective under sequential and host mode on 1
//! to 4 and 8 devices equals the f64 reference with every tracker at its threshold, at odd shapes and rank
//! counts, update, land and forward reduces, zero-copy, engine, mapped and staged links, the trigger loop one
//! and several submissions deep (more crossings than a link has slots, so slots are reused); the flag
//! handoff's landings queued ahead (and those whose waits give up); modes that cannot span devices
//! say why; bad placements are errors.

mod common;

use t3_wgpu::config::host::{Handoff, HostGrain, HostOptions, SendTrigger};
use t3_wgpu::experiment::{check, Verify};
use t3_wgpu::hostlink::Path;
use t3_wgpu::modes::{self, Config, Host, Mode, System};
use t3_wgpu::plan::ReduceVia;
use t3_wgpu::ranks::Inputs;
use t3_wgpu::schedule::{Collective, Order};
use t3_wgpu::shapes::Shape;
use t3_wgpu::steps::Link;

fn config(m: usize, ranks: usize, chunks: usize, collective: Collective, via: ReduceVia) -> Config {
    Config {
        chunks,
        collective,
        via,
        link: Link::Workgroups(3),
        arbitrate: chunks.is_multiple_of(2).then_some(2),
        ..Config::new(Shape::new(m, 23, 13).unwrap(), ranks)
    }
}

/// Runs `config` on the first `n` devices under `modes` over links taking `path`; checks every result
/// against the reference and every tracker against its threshold, from poisoned outputs. Returns
/// each mode's run (none where no adapter).
fn run_on(n: usize, config: Config, path: Path, modes: &[Box<dyn Mode>]) -> Vec<modes::Run> {
    let mut runs = Vec::new();
    let Some((devs, kernels)) = common::devices() else {
        return runs;
    };
    let what = format!(
        "{} ranks {} chunks {} m {} {:?} on {n} devices ({path:?} link)",
        config.collective, config.ranks, config.chunks, config.shape.m, config.via
    );
    let mut sys = System::on_devices(&devs.gpus[..n], &kernels[..n], config, path)
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    // Zero-copy exactly where asked and every device imports host memory; the fallback otherwise.
    let import = devs.gpus[..n]
        .iter()
        .all(|g| t3_wgpu::hostlink::shared::can_import(&g.device));
    let zero_copy = path == Path::ZeroCopy && import;
    let engine = path == Path::Engine && import;
    for (send, recv) in sys.link_paths() {
        assert_eq!(send == Path::ZeroCopy, zero_copy, "{what}: sender {send:?}");
        assert_eq!(
            recv == Path::ZeroCopy,
            zero_copy,
            "{what}: receiver {recv:?}"
        );
        assert_eq!(
            (send == Path::Engine, recv == Path::Engine),
            (engine, engine),
            "{what}: {send:?} to {recv:?}"
        );
    }
    let seed = common::seed(&what);
    let c = sys.config.clone();
    let inputs = Inputs::random(c.shape, c.dtype, c.collective, &sys.chunking, seed);
    sys.upload(&inputs);
    for mode in modes {
        if let Some(reason) = mode.skip_reason(&sys) {
            assert!(
                n > 1,
                "{what}: {} skipped on one device: {reason}",
                mode.name()
            );
            continue;
        }
        sys.poison();
        let run = mode
            .run(&mut sys)
            .unwrap_or_else(|e| panic!("{what} {}: {e}", mode.name()));
        let (err, trackers_ok) = check(&sys, &inputs, Verify::Full).unwrap();
        assert!(err <= 1e-5, "{what} {}: rel error {err}", mode.name());
        assert!(
            trackers_ok,
            "{what} {}: a tracker missed its threshold",
            mode.name()
        );
        assert!(run.total_us > 0.0, "{what} {}: no time", mode.name());
        if n > 1 && sys.links_used() > 0 && !zero_copy {
            // A host copy shows on the host link's lane (a zero-copy link has none to show).
            assert!(
                run.timeline
                    .events
                    .iter()
                    .any(|e| matches!(e.lane, t3_wgpu::timeline::Lane::HostLink { .. })),
                "{what} {}: no host link event on the timeline",
                mode.name()
            );
        }
        if n > 1 && sys.links_used() > 0 {
            // Send halves on the sender's lanes: a rank of another device than the destination.
            let p = &sys.placement;
            assert!(
                run.timeline.events.iter().any(|e| e.name.contains(" send ")
                    && matches!(e.lane, t3_wgpu::timeline::Lane::Step { rank } if rank == e.rank)
                    && e.name
                        .rsplit_once(" to r")
                        .and_then(|(_, r)| r.parse::<usize>().ok())
                        .is_some_and(|to| p.device(to) != p.device(e.rank))),
                "{what} {}: no send half on a sender's lane",
                mode.name()
            );
            if mode.name() == "sequential" {
                // After the GEMMs a submission carries one send half per link, so each chunk's
                // host copy starts when its own send is written: no pass holds two of one link.
                let mut seen = std::collections::HashSet::new();
                for e in run
                    .timeline
                    .events
                    .iter()
                    .filter(|e| e.name.contains(" send "))
                {
                    let to: usize = e.name.rsplit_once(" to r").unwrap().1.parse().unwrap();
                    let key = (
                        p.device(e.rank),
                        p.device(to),
                        e.start_us.to_bits(),
                        e.end_us.to_bits(),
                    );
                    assert!(
                        seen.insert(key),
                        "{what}: two send halves of one link in one pass: {}",
                        e.name
                    );
                }
            }
        }
        runs.push(run);
    }
    runs
}

fn two_modes() -> Vec<Box<dyn Mode>> {
    vec![Box::new(modes::Sequential), Box::new(Host::default())]
}

#[test]
fn every_collective_on_one_to_eight_devices() {
    // (devices, ranks, chunks, rows): rank counts that do and do not divide by the device count.
    let cases = [
        (1, 3, 2, 31),
        (2, 2, 1, 17),
        (2, 3, 2, 31),
        (2, 5, 1, 29),
        (3, 3, 3, 40),
        (3, 7, 1, 33),
        (4, 4, 2, 35),
        (4, 6, 1, 27),
        // TP 8 with a rank per device, as on an eight-GPU machine.
        (8, 8, 1, 37),
    ];
    let vias = [ReduceVia::Update, ReduceVia::Land, ReduceVia::Forward];
    for (k, &(n, ranks, chunks, m)) in cases.iter().enumerate() {
        for (j, collective) in Collective::ALL.into_iter().enumerate() {
            let via = vias[(k + j) % vias.len()];
            run_on(
                n,
                config(m, ranks, chunks, collective, via),
                Path::ZeroCopy,
                &two_modes(),
            );
        }
    }
}

#[test]
fn every_reduce_on_two_devices() {
    for via in [ReduceVia::Update, ReduceVia::Land, ReduceVia::Forward] {
        for collective in [Collective::ReduceScatter, Collective::AllReduce] {
            run_on(
                2,
                config(45, 4, 3, collective, via),
                Path::Mapped,
                &two_modes(),
            );
        }
    }
}

#[test]
fn staged_links_and_loop_depths() {
    // The staged path (copies through staging buffers at both ends), and the loop one submission
    // deep (every decision waits for the device) and many (steps wait for free link slots: more
    // crossing steps than a link has slots).
    for collective in Collective::ALL {
        run_on(
            3,
            config(50, 5, 2, collective, ReduceVia::Update),
            Path::Staged,
            &two_modes(),
        );
    }
    let deep: Vec<Box<dyn Mode>> = vec![
        Box::new(Host {
            in_flight: Some(1),
            wait: None,
            grain: Some(HostGrain::Stage),
        }),
        Box::new(Host {
            in_flight: Some(6),
            wait: None,
            grain: Some(HostGrain::Chunk),
        }),
        // Twelve chunks per rank five at a time: submissions of 5, 5 and 2 per stage.
        Box::new(Host {
            in_flight: Some(2),
            wait: None,
            grain: Some(HostGrain::Chunks(5)),
        }),
    ];
    for path in [Path::ZeroCopy, Path::Mapped] {
        run_on(
            2,
            config(96, 2, 12, Collective::AllReduce, ReduceVia::Forward),
            path,
            &deep,
        );
    }
}

/// Host mode at stage grain two deep (the defaults), at chunk grain one deep, and two chunks a
/// submission four deep.
fn host_loops() -> Vec<Box<dyn Mode>> {
    vec![
        Box::new(Host::default()),
        Box::new(Host {
            in_flight: Some(1),
            wait: None,
            grain: Some(HostGrain::Chunk),
        }),
        Box::new(Host {
            in_flight: Some(4),
            wait: None,
            grain: Some(HostGrain::Chunks(2)),
        }),
    ]
}

#[test]
fn engine_links_carry_every_collective() {
    // Chunks the sender's kernel writes into host memory, landed into the receiver's memory by its
    // copy engine (on a device without a transfer queue, as lavapipe, on its own queue): every
    // collective on a pair, a ring of three and 4 ranks on 2 devices (slots reused), each reduce in
    // turn, under sequential and the host loop at stage and chunk grain, one and several deep.
    let mut modes: Vec<Box<dyn Mode>> = vec![Box::new(modes::Sequential)];
    modes.extend(host_loops());
    let vias = [ReduceVia::Update, ReduceVia::Land, ReduceVia::Forward];
    for (n, ranks, chunks, m) in [(2, 2, 4, 45), (3, 3, 3, 50), (2, 4, 12, 96)] {
        for (k, collective) in Collective::ALL.into_iter().enumerate() {
            let c = config(m, ranks, chunks, collective, vias[(k + n) % 3]);
            run_on(n, c, Path::Engine, &modes);
        }
    }
}

#[test]
fn the_chunk_order_across_devices() {
    // Each chunk index reduced and gathered while the next computes, on zero-copy and engine
    // links, under sequential and the host loop at each grain.
    let mut modes: Vec<Box<dyn Mode>> = vec![Box::new(modes::Sequential)];
    modes.extend(host_loops());
    for (n, ranks, chunks, m, path) in [
        (2, 2, 3, 47, Path::ZeroCopy),
        (3, 3, 2, 40, Path::Engine),
        (2, 4, 2, 45, Path::ZeroCopy),
    ] {
        for (k, collective) in [Collective::ReduceScatter, Collective::AllReduce]
            .into_iter()
            .enumerate()
        {
            let via = [ReduceVia::Update, ReduceVia::Land, ReduceVia::Forward][(k + n) % 3];
            let c = Config {
                order: Order::Chunk,
                ..config(m, ranks, chunks, collective, via)
            };
            run_on(n, c, path, &modes);
        }
    }
}

#[test]
fn the_flag_handoff_lands_ahead_and_right() {
    // Landings queued ahead beside GEMM work, waiting at gates the host raises: every collective and
    // reduce on a pair and a ring of three, at stage and chunk grain, one and several submissions
    // deep, slots reused (more crossings than a link has slots). Where a device shares no memory
    // with the host the links have no gates and the fence hands over, as without the handoff.
    let flag = |c: Config| Config {
        host: HostOptions {
            handoff: Some(Handoff::Flag),
            ..Default::default()
        },
        ..c
    };
    let hosts = host_loops();
    let mut early = Vec::new();
    for (n, ranks, chunks, m) in [(2, 2, 4, 45), (3, 3, 3, 50), (2, 4, 12, 96)] {
        for collective in Collective::ALL {
            for via in [ReduceVia::Update, ReduceVia::Land, ReduceVia::Forward] {
                let c = flag(config(m, ranks, chunks, collective, via));
                for run in run_on(n, c, Path::ZeroCopy, &hosts) {
                    early.push(run.early_landings);
                }
            }
        }
    }
    let Some((devs, _)) = common::devices() else {
        return;
    };
    let gated = devs.gpus[..2]
        .iter()
        .all(|g| t3_wgpu::hostlink::shared::can_import(&g.device));
    // Every run says what its landings did where the links have gates, and some landed ahead (a
    // chunk whose sender's submission completed before the receiver's next GEMM work lands after
    // it, as without the handoff; waits the device does not outlast give up and land after).
    assert!(
        early.iter().all(|e| e.is_some() == gated),
        "early landings reported where the links have gates: {early:?}"
    );
    if gated {
        let landed: usize = early.iter().flatten().map(|e| e.landed).sum();
        assert!(landed > 0, "no landing went ahead: {early:?}");
    }
}

#[test]
fn sends_the_device_triggers_land_ahead_and_right() {
    // `--host-loop trigger=device`: a send whose chunk a GEMM makes goes in that GEMM's pass and
    // waits in the kernel for the chunk's counter (on a CPU adapter, which runs a pass's
    // dispatches in order, after the GEMM), and the receivers land the chunks ahead beside their
    // own GEMM work (with the fence, or waiting at gates with the flag handoff): every collective
    // and reduce on a pair, a ring of three and 4 ranks on 2 devices (slots reused: later chunks
    // go as the host triggers them), at stage and chunk grain, one and several submissions deep.
    let hosts = host_loops();
    let mut early = Vec::new();
    for (n, ranks, chunks, m) in [(2, 2, 4, 45), (3, 3, 3, 50), (2, 4, 12, 96)] {
        for (k, collective) in Collective::ALL.into_iter().enumerate() {
            for (v, via) in [ReduceVia::Update, ReduceVia::Land, ReduceVia::Forward]
                .into_iter()
                .enumerate()
            {
                let handoff = [Handoff::Fence, Handoff::Flag][(k + v) % 2];
                let c = Config {
                    host: HostOptions {
                        trigger: Some(SendTrigger::Device),
                        handoff: Some(handoff),
                        ..Default::default()
                    },
                    ..config(m, ranks, chunks, collective, via)
                };
                for run in run_on(n, c, Path::ZeroCopy, &hosts) {
                    early.push(run.early_landings);
                }
            }
        }
    }
    let Some((devs, _)) = common::devices() else {
        return;
    };
    let zero_copy = devs.gpus[..3]
        .iter()
        .all(|g| t3_wgpu::hostlink::shared::can_import(&g.device));
    // Where the links are zero-copy, host mode says how many sends the device triggered and which
    // chunks landed ahead, and both happened; elsewhere the host triggers every send.
    let (watched, ahead): (usize, usize) = early.iter().flatten().fold((0, 0), |(w, a), e| {
        (w + e.watched - e.watch_gave_up, a + e.ahead)
    });
    if zero_copy {
        assert!(watched > 0 && ahead > 0, "{early:?}");
    } else {
        assert_eq!((watched, ahead), (0, 0), "{early:?}");
    }
}

#[test]
fn one_device_modes_say_why_they_skip() {
    let Some((devs, kernels)) = common::devices() else {
        return;
    };
    let sys = System::on_devices(
        &devs.gpus[..2],
        &kernels[..2],
        config(20, 2, 1, Collective::ReduceScatter, ReduceVia::Update),
        Path::Mapped,
    )
    .unwrap();
    for m in [&modes::Encoded as &dyn Mode, &modes::Fused] {
        let reason = m.skip_reason(&sys).expect("skips on two devices");
        assert!(reason.contains("one device"), "{}: {reason}", m.name());
    }
    assert_eq!(
        sys.describe_devices().len(),
        2 + 2,
        "two devices, a link each way"
    );
}

#[test]
fn more_devices_than_ranks_is_refused() {
    let Some((devs, kernels)) = common::devices() else {
        return;
    };
    let e = System::on_devices(
        &devs.gpus[..3],
        &kernels[..3],
        config(20, 2, 1, Collective::ReduceScatter, ReduceVia::Update),
        Path::Mapped,
    )
    .err()
    .expect("3 devices for 2 ranks")
    .to_string();
    assert!(e.contains("3 devices for 2 ranks"), "{e}");
}

#[test]
fn a_device_lost_mid_run_is_a_clear_error() {
    // Devices of their own: the shared ones must outlive this test.
    let Ok(devs) = t3_wgpu::devices::Devices::open(
        &t3_wgpu::devices::DeviceSpec::Count(2),
        &common::gpu_options(),
    ) else {
        eprintln!("SKIPPED: no GPU adapter");
        return;
    };
    let kernels: Vec<_> = devs
        .gpus
        .iter()
        .map(|g| t3_wgpu::modes::Kernels::new(g).unwrap())
        .collect();
    let mut sys = System::on_devices(
        &devs.gpus,
        &kernels,
        config(40, 4, 2, Collective::ReduceScatter, ReduceVia::Update),
        Path::Mapped,
    )
    .unwrap();
    let c = sys.config.clone();
    let inputs = Inputs::random(c.shape, c.dtype, c.collective, &sys.chunking, 7);
    sys.upload(&inputs);
    devs.gpus[1].device.destroy();
    for mode in two_modes() {
        let t0 = std::time::Instant::now();
        let e = mode
            .run(&mut sys)
            .err()
            .unwrap_or_else(|| panic!("{} ran on a destroyed device", mode.name()))
            .to_string();
        eprintln!("{}: {e}", mode.name());
        assert!(
            e.contains("lost") || e.contains("destroyed") || e.contains("invalid"),
            "{}: {e}",
            mode.name()
        );
        assert!(
            t0.elapsed().as_secs() < 60,
            "{} took {:?}",
            mode.name(),
            t0.elapsed()
        );
    }
}
