//! Property tests: random shapes, ranks, chunks, collectives, modes, link budgets and seeds all equal
//! the f64 reference with every tracker at its threshold; random command lines never panic the binary.
//! Case counts are small for CI; T3_SOAK=N runs N cases.

mod common;

use proptest::prelude::*;
use proptest::test_runner::{Config as PtConfig, TestRunner};

use t3_wgpu::config::host::HostGrain;
use t3_wgpu::experiment::{check, Verify};
use t3_wgpu::modes::{self, Config, Host, Kernels, Mode, StepLead, System};
use t3_wgpu::plan::ReduceVia;
use t3_wgpu::ranks::Inputs;
use t3_wgpu::schedule::Collective;
use t3_wgpu::shapes::{Dtype, Shape};
use t3_wgpu::steps::Link;
use t3_wgpu::workload;

use common::cases;

/// The host loop's grain for a case: a chunk, a stage or two chunks per rank, by the seed (its bits
/// above those that pick arbitration, so that each grain meets it on and off).
fn grain_of(seed: u64) -> HostGrain {
    match (seed >> 5) % 3 {
        0 => HostGrain::Chunk,
        1 => HostGrain::Stage,
        _ => HostGrain::Chunks(2),
    }
}

#[test]
fn random_configurations_match_reference() {
    let Some(gpu) = common::gpu() else { return };
    let f32_kernels = Kernels::new(gpu).unwrap();
    let f16_kernels = common::kernels(gpu, Dtype::F16);
    let mut runner = TestRunner::new(PtConfig {
        cases: cases(32),
        failure_persistence: None,
        ..PtConfig::default()
    });
    let strategy = (
        1usize..300,
        1usize..300,
        1usize..300,
        1usize..10,
        1usize..5,
        0..Collective::ALL.len(),
        0usize..4,
        prop_oneof![Just(0u32), 1u32..64],
        0usize..3,
        any::<u64>(),
    );
    runner
        .run(
            &strategy,
            |(m, n, k, ranks, chunks, coll, mode, link, land, seed)| {
                // Keep only configurations that give every chunk a row (the library refuses the rest).
                prop_assume!(ranks * chunks <= m);
                let collective = Collective::ALL[coll];
                // Every fourth case on f16 operands, where the adapter has them.
                let (dtype, kernels) = match (f16_kernels, seed % 4) {
                    (Some(k), 0) => (Dtype::F16, k),
                    _ => (Dtype::F32, &f32_kernels),
                };
                let config = Config {
                    chunks,
                    collective,
                    via: [ReduceVia::Update, ReduceVia::Land, ReduceVia::Forward][land],
                    link: if link == 0 {
                        Link::Unthrottled
                    } else {
                        Link::Workgroups(link)
                    },
                    dtype,
                    out_dtype: Dtype::F32,
                    arbitrate: seed.is_multiple_of(3).then_some(1 + (seed % 7) as u32),
                    gemm_grid: (seed % 5 == 1).then_some(1 + (seed % 11) as u32),
                    step_lead: if seed.is_multiple_of(2) {
                        StepLead::Auto
                    } else {
                        StepLead::Workgroups((seed % 13) as u32)
                    },
                    ..Config::new(Shape::new(m, n, k).unwrap(), ranks)
                };
                let what = format!("{config:?} seed {seed}");
                let mut sys = System::new(gpu, kernels, config).unwrap();
                let inputs =
                    Inputs::random(sys.config.shape, dtype, collective, &sys.chunking, seed);
                sys.upload(&inputs);
                let all = modes::all();
                // The host loop at a random depth (2 to 6 submissions in flight).
                let host = Host {
                    in_flight: Some(2 + (seed % 5) as usize),
                    wait: None,
                    grain: Some(grain_of(seed)),
                };
                let mode: &dyn Mode = match all[mode].name() {
                    "host" => &host,
                    _ => all[mode].as_ref(),
                };
                if mode.skip_reason(&sys).is_some() {
                    return Ok(());
                }
                sys.poison();
                mode.run(&mut sys).unwrap();
                let (err, trackers_ok) = check(&sys, &inputs, Verify::Full).unwrap();
                prop_assert!(err <= 1e-5, "{} {what}: rel error {err}", mode.name());
                prop_assert!(
                    trackers_ok,
                    "{} {what}: tracker missed its threshold",
                    mode.name()
                );
                Ok(())
            },
        )
        .unwrap();
}

#[test]
fn random_placements_on_several_devices_match_reference() {
    // Ranks over 1 to 4 devices (steps between them through the host link): random shapes, rank and
    // chunk counts, collectives, reduces, links and loop depths, sequential and host mode.
    let Some((devs, kernels)) = common::devices() else {
        return;
    };
    let mut runner = TestRunner::new(PtConfig {
        cases: cases(24),
        failure_persistence: None,
        ..PtConfig::default()
    });
    let strategy = (
        (1usize..120, 1usize..90, 1usize..90),
        1usize..9,
        1usize..4,
        1usize..=common::DEVICES,
        (
            0..Collective::ALL.len(),
            0usize..3,
            prop_oneof![Just(0u32), 1u32..32],
        ),
        any::<u64>(),
    );
    runner
        .run(
            &strategy,
            |((m, n, k), ranks, chunks, devices, (coll, via, link), seed)| {
                prop_assume!(ranks * chunks <= m && devices <= ranks);
                let collective = Collective::ALL[coll];
                let config = Config {
                    chunks,
                    collective,
                    via: [ReduceVia::Update, ReduceVia::Land, ReduceVia::Forward][via],
                    link: if link == 0 {
                        Link::Unthrottled
                    } else {
                        Link::Workgroups(link)
                    },
                    arbitrate: seed.is_multiple_of(3).then_some(1 + (seed % 7) as u32),
                    gemm_grid: (seed % 5 == 1).then_some(1 + (seed % 11) as u32),
                    ..Config::new(Shape::new(m, n, k).unwrap(), ranks)
                };
                let what = format!("{config:?} on {devices} devices, seed {seed}");
                let path = if seed.is_multiple_of(5) {
                    t3_wgpu::hostlink::Path::Staged
                } else {
                    t3_wgpu::hostlink::Path::Mapped
                };
                let mut sys =
                    System::on_devices(&devs.gpus[..devices], &kernels[..devices], config, path)
                        .unwrap();
                let inputs = Inputs::random(
                    sys.config.shape,
                    Dtype::F32,
                    collective,
                    &sys.chunking,
                    seed,
                );
                sys.upload(&inputs);
                let host = Host {
                    in_flight: Some(1 + (seed % 4) as usize),
                    wait: None,
                    grain: Some(grain_of(seed >> 3)),
                };
                for mode in [&modes::Sequential as &dyn Mode, &host] {
                    sys.poison();
                    mode.run(&mut sys).unwrap();
                    let (err, trackers_ok) = check(&sys, &inputs, Verify::Full).unwrap();
                    prop_assert!(err <= 1e-5, "{} {what}: rel error {err}", mode.name());
                    prop_assert!(trackers_ok, "{} {what}: tracker missed", mode.name());
                }
                Ok(())
            },
        )
        .unwrap();
}

#[test]
fn preset_table_never_panics() {
    let mut runner = TestRunner::new(PtConfig {
        cases: cases(256),
        failure_persistence: None,
        ..PtConfig::default()
    });
    runner
        .run(
            &("\\PC{0,24}", 1usize..100_000, 1e-4f64..=1.0),
            |(name, tokens, scale)| {
                let _ = workload::closest(&name);
                if let Some(p) = workload::find(&name, tokens, scale) {
                    prop_assert!(p.m >= 1 && p.n >= 1 && p.k >= 1);
                }
                Ok(())
            },
        )
        .unwrap();
    for name in workload::names() {
        let p = workload::find(&name, 1, 1e-4).unwrap();
        assert!(p.m >= 1 && p.n >= 1 && p.k >= 1, "{name}");
    }
}

#[test]
fn command_lines_never_panic() {
    let words = [
        "run",
        "sweep",
        "presets",
        "info",
        "calibrate",
        "--shape",
        "--preset",
        "--ranks",
        "--chunks",
        "--collective",
        "--mode",
        "--reps",
        "--warmup",
        "--warmup-s",
        "--link-workgroups",
        "--link-gbps",
        "--scale",
        "--tokens",
        "--json",
        "--reduce",
        "--no-verify",
        "0",
        "1",
        "-1",
        "3",
        "65",
        "1e9",
        "nan",
        "x",
        "4x4x4",
        "0x1x1",
        "99999999999999999999",
        "tnlg-op-tp4",
        "all",
        "fused,host",
        "reduce-scatter",
        "all-gather",
        "land",
        "",
        "--",
        "-",
    ];
    let mut runner = TestRunner::new(PtConfig {
        cases: cases(24),
        failure_persistence: None,
        ..PtConfig::default()
    });
    let dir = std::env::temp_dir().join(format!("t3-fuzz-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    runner
        .run(&proptest::collection::vec(0..words.len(), 0..7), |idx| {
            let mut args: Vec<&str> = idx.iter().map(|&i| words[i]).collect();
            // Keep fuzzed runs small and short: a GPU run is never the point here.
            if args.first() == Some(&"run") || args.first() == Some(&"sweep") {
                args.extend([
                    "--no-verify",
                    "--reps",
                    "1",
                    "--warmup",
                    "0",
                    "--warmup-s",
                    "0",
                ]);
            }
            if args.first() == Some(&"calibrate") {
                args.extend(["--mib", "1", "--reps", "1", "--out", "fuzz-link.json"]);
            }
            let o = std::process::Command::new(env!("CARGO_BIN_EXE_t3"))
                .args(&args)
                .current_dir(&dir)
                .env("T3_TIMEOUT_S", "60")
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&o.stderr);
            prop_assert!(!err.contains("panicked"), "{args:?} panicked: {err}");
            prop_assert!(
                matches!(o.status.code(), Some(0..=2)),
                "{args:?}: exit {:?}: {err}",
                o.status.code()
            );
            Ok(())
        })
        .unwrap();
}
