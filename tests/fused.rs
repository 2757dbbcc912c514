//! Fused mode's variants (core/src/lower/fused.rs: pieces per transfer, spare workgroups, their poll
//! budget, the output split over two binding windows, or four of two buffers; plain stores behind the gates, `@coherent`
//! or relaxed atomic, CAS or native atomic adds) on random configurations: every collective, odd shapes, 1-8 ranks, 1-16 chunks, f32
//! and f16 operands, equal to the f64 reference with every tracker at its threshold. Each case sets
//! the variant in its config (`Config::fused`) and the put in its kernels.
//! T3_SOAK=N runs N cases (a long soak).

mod common;

use proptest::prelude::*;
use proptest::test_runner::{Config as PtConfig, TestRunner};

use t3_wgpu::config::fused::{FusedOptions, Help, Pieces, SpareDispatch, Trigger, MAX_KNOB};
use t3_wgpu::experiment::{check, Verify};
use t3_wgpu::gemm::FusedPut;
use t3_wgpu::modes::{Config, Fused, Kernels, Mode, ModeKind, System};
use t3_wgpu::plan::ReduceVia;
use t3_wgpu::ranks::Inputs;
use t3_wgpu::schedule::Collective;
use t3_wgpu::shaders::Put;
use t3_wgpu::shapes::{Dtype, Shape};
use t3_wgpu::steps::Link;

#[test]
fn every_fused_variant_matches_reference() {
    let Some(gpu) = common::gpu() else { return };
    let f32_kernels = Kernels::new(gpu).unwrap();
    let f16_kernels = common::kernels(gpu, Dtype::F16);
    // The fused put is chosen when the kernels are made: relaxed atomic stores, CAS and native
    // atomic adds (where the adapter has them), `@coherent` plain stores beside the default, relaxed
    // atomic stores.
    let put_kernels = |put| Kernels::with_put(gpu, Dtype::F32, None, put).ok();
    assert_eq!(f32_kernels.gemm.fused_put, Put::StoreWindows);
    // Every Vulkan adapter (lavapipe too) has MEMORY_DECORATION_COHERENT.
    let coherent_kernels = put_kernels(FusedPut::Coherent);
    if gpu.has(wgpu::Features::MEMORY_DECORATION_COHERENT) {
        assert_eq!(
            coherent_kernels.as_ref().map(|k| k.gemm.fused_put),
            Some(Put::CoherentWindows)
        );
    }
    let cas_kernels = put_kernels(FusedPut::Cas).unwrap();
    let atomic_kernels = put_kernels(FusedPut::Atomic);
    bad_knob_is_named(gpu, &f32_kernels);
    spares_move_every_piece(gpu, &f32_kernels);
    spares_first_beside_runs_of_ranks(gpu, &f32_kernels, f16_kernels);
    b_in_two_windows(gpu, &f32_kernels, f16_kernels);
    let cases = common::cases(20);
    let mut runner = TestRunner::new(PtConfig {
        cases,
        failure_persistence: None,
        ..PtConfig::default()
    });
    let strategy = (
        (1usize..260, 1usize..200, 1usize..140),
        1usize..=8,
        1usize..=16,
        0..fusable().len(),
        prop_oneof![Just(0u32), 1u32..40],
        // Pieces: the link's (0), one workgroup per transfer (1), or 2..24.
        prop_oneof![Just(0u32), Just(1u32), 2u32..24],
        // Spares: auto (None), none, or 1..64; poll budget 0..200 or the default.
        prop_oneof![Just(None), Just(Some(0u32)), (1u32..64).prop_map(Some)],
        prop_oneof![Just(None), (0u32..200).prop_map(Some)],
        // The first window of the output and of B: the largest binding, or small enough to split
        // most outputs and packed Bs.
        prop_oneof![Just(None), (256u32..65536).prop_map(Some)],
        // Where the spares run and how the GEMM's workgroups are laid out: in the GEMM's dispatch,
        // their own dispatch beside it (aliased views), or after it with every piece theirs (no
        // help from the GEMM's workgroups); the GEMM's workgroups helping always or only while no
        // spare is alive; or the spares the trigger, watching a GEMM that only counts its tiles,
        // beside it or after it (then the finisher after them), or dispatched before it (the GEMM a
        // workgroup per tile then runs as the tracked GEMM, in dispatches of one run of ranks each
        // where the windows split them); one workgroup per tile or a persistent grid of 1..24.
        (0u32..8, prop_oneof![Just(0u32), 1u32..24]),
        any::<u64>(),
    );
    runner
        .run(
            &strategy,
            |(
                (m, n, k),
                ranks,
                chunks,
                coll,
                link,
                pieces,
                spares,
                polls,
                window,
                (at, grid),
                seed,
            )| {
                prop_assume!(ranks * chunks <= m);
                let collective = fusable()[coll];
                let (dtype, kernels) = match (f16_kernels, &atomic_kernels, seed % 5) {
                    (Some(k), _, 0) => (Dtype::F16, k),
                    (_, _, 1) => (Dtype::F32, &cas_kernels),
                    (_, Some(k), 2) => (Dtype::F32, k),
                    (_, _, 3) => (
                        Dtype::F32,
                        coherent_kernels.as_ref().unwrap_or(&f32_kernels),
                    ),
                    _ => (Dtype::F32, &f32_kernels),
                };
                let pieces = (pieces > 0).then_some(pieces);
                use {
                    Help::*,
                    SpareDispatch::{Gemm, Own},
                    Trigger::*,
                };
                let (dispatch, alias, help, trigger, first) = match at {
                    0 => (Gemm, true, Always, Epilogue, false),
                    1 => (Own, true, Always, Epilogue, false),
                    2 => (Gemm, true, Idle, Epilogue, false),
                    3 => (Own, true, Idle, Epilogue, false),
                    4 => (Own, false, Never, Epilogue, false),
                    5 => (Own, true, Always, Spares, false),
                    6 => (Own, false, Always, Spares, false),
                    _ => (Own, true, Always, Spares, true),
                };
                // Spares first beside a GEMM of a workgroup per tile, as the defaults run them.
                let grid = if first && seed % 2 == 0 { 0 } else { grid };
                // No help needs a spare to do the work.
                let spares = if help == Never {
                    spares.map(|s| s.max(1))
                } else {
                    spares
                };
                // Idle spares pausing between polls (0: not), from the seed (the strategy's tuple
                // is full).
                let pause = [0u32, 3, 40][(seed / 7 % 3) as usize];
                // Where the spares trigger, the ring's last hops land (the default) or reduce
                // behind their gates, from the seed.
                let land = (trigger == Spares && seed / 21 % 3 == 0).then_some(false);
                let fused = FusedOptions {
                    pieces: pieces.map_or(Pieces::Link, Pieces::Count),
                    spares,
                    polls,
                    pause: Some(pause),
                    window,
                    grid: Some(grid),
                    spare_dispatch: Some(dispatch),
                    help,
                    trigger: Some(trigger),
                    spares_first: Some(first),
                    land,
                    alias,
                    // The progress log on in half the draws: it must change no result.
                    timeline: seed % 2 == 0,
                };
                let config = Config {
                    chunks,
                    collective,
                    via: ReduceVia::Update,
                    link: if link == 0 {
                        Link::Unthrottled
                    } else {
                        Link::Workgroups(link)
                    },
                    dtype,
                    out_dtype: Dtype::F32,
                    fused,
                    ..Config::new(Shape::new(m, n, k).unwrap(), ranks)
                };
                let what = format!("{config:?} seed {seed}");
                let mut sys = System::new(gpu, kernels, config).unwrap();
                prop_assert!(Fused.skip_reason(&sys).is_none(), "{what}: fused skipped");
                let inputs =
                    Inputs::random(sys.config.shape, dtype, collective, &sys.chunking, seed);
                sys.upload(&inputs);
                sys.poison();
                Fused.run(&mut sys).unwrap();
                let (err, trackers_ok) = check(&sys, &inputs, Verify::Full).unwrap();
                // f16 operands: the f32 sums of ranks' partials can cancel (100x1x134 on 7 ranks
                // gave 1.14e-5 in every mode, sequential included), so a looser bound there.
                let bound = if dtype == Dtype::F16 { 1e-4 } else { 1e-5 };
                prop_assert!(err <= bound, "{what}: rel error {err}");
                prop_assert!(trackers_ok, "{what}: tracker missed its threshold");
                Ok(())
            },
        )
        .unwrap();
}

/// The spares dispatched before a GEMM of a workgroup per tile (the defaults beside the SIMT
/// kernel), which then runs as the tracked GEMM: in one dispatch where every rank's output fits one
/// binding, else in a dispatch per stage and run of ranks whose outputs, Bs and As do (windows of
/// 1, 2 and all 3 ranks' outputs here, then of two ranks' A), each binding its run's windows through
/// views of its own; equal to the f64 reference in every collective, f32 and f16, on ragged shapes.
fn spares_first_beside_runs_of_ranks(
    gpu: &'static t3_wgpu::gpu::Gpu,
    f32_kernels: &Kernels,
    f16_kernels: Option<&Kernels>,
) {
    let runs_of_ranks = FusedOptions {
        spare_dispatch: Some(SpareDispatch::Own),
        trigger: Some(Trigger::Spares),
        spares_first: Some(true),
        grid: Some(0),
        spares: Some(3),
        pause: Some(5),
        ..FusedOptions::default()
    };
    let (m, n, k) = (301, 199, 37);
    let rank_bytes = (m * n * 4) as u32;
    // A window's 256-byte-aligned start may lie up to 255 bytes before its rank's, and its size is
    // rounded down to 256: rank_bytes + 512 holds any one rank's output, not two.
    for (i, window) in [rank_bytes + 512, 2 * rank_bytes + 512, 1 << 30]
        .into_iter()
        .enumerate()
    {
        for (j, collective) in fusable().into_iter().enumerate() {
            let (dtype, kernels) = match (f16_kernels, (i + j) % 2) {
                (Some(k), 1) => (Dtype::F16, k),
                _ => (Dtype::F32, f32_kernels),
            };
            let fused = FusedOptions {
                window: Some(window),
                ..runs_of_ranks
            };
            let seed = 40 + (3 * i + j) as u64;
            let config = three_ranks((m, n, k), collective, dtype, fused);
            matches_reference(gpu, kernels, config, seed);
        }
    }
    // A window that holds two ranks' A but not three, where each rank's A outweighs its B and
    // output: the runs are A's, and as every rank's A passes the window each run's A and B have
    // buffers of their own.
    let (m, n, k) = (301, 19, 200);
    for (i, collective) in [Collective::AllReduce, Collective::ReduceScatter]
        .into_iter()
        .enumerate()
    {
        for (dtype, kernels) in [(Dtype::F32, Some(f32_kernels)), (Dtype::F16, f16_kernels)] {
            let Some(kernels) = kernels else { continue };
            let (rank_a, rank_b) = t3_wgpu::gemm::Padding::new(m, k, n).bytes(dtype);
            assert!(rank_a > rank_b && rank_a > (m * n * 4) as u64);
            let fused = FusedOptions {
                window: Some((2 * rank_a + 512) as u32),
                ..runs_of_ranks
            };
            let seed = 50 + (2 * i) as u64 + u64::from(dtype == Dtype::F16);
            let config = three_ranks((m, n, k), collective, dtype, fused);
            matches_reference(gpu, kernels, config, seed);
        }
    }
}

/// Packed outputs past what two windows of one buffer hold (every limit lowered to 128 KiB: four
/// ranks' 96 x 104 outputs are 156 KiB), in four windows of two buffers (three ranks in the first,
/// the fourth and the inboxes in the second): `@coherent` stores (where the adapter has them, else
/// relaxed atomic stores) and CAS adds, the epilogue or the spares the trigger, in one dispatch or
/// one per run of ranks, every collective; equal to the f64 reference. The same limits with fused
/// mode's two-window family alone would refuse them.
#[test]
fn outputs_past_one_buffer_in_four_windows_match_reference() {
    let Some(gpu) = common::gpu() else { return };
    if gpu.limits.max_storage_buffers_per_shader_stage < 10 {
        eprintln!("SKIPPED: the adapter binds fewer than ten storage buffers a stage");
        return;
    }
    let small: &'static t3_wgpu::gpu::Gpu = Box::leak(Box::new(
        t3_wgpu::gpu::Gpu::new(&t3_wgpu::settings::GpuOptions {
            limit_override: Some(1 << 17),
            ..common::gpu_options()
        })
        .unwrap(),
    ));
    // Each set of kernels takes lavapipe long to build: two puts, the others' four-window snippets
    // validated at build time as theirs are.
    let kernels: Vec<Kernels> = [FusedPut::Coherent, FusedPut::Cas]
        .into_iter()
        .map(|put| {
            Kernels::with_put(small, Dtype::F32, None, put)
                .or_else(|_| Kernels::with_put(small, Dtype::F32, None, FusedPut::Store))
                .unwrap()
        })
        .collect();
    let (m, n, k) = (96, 104, 13);
    use {SpareDispatch::*, Trigger::*};
    let variants = [
        (Epilogue, Gemm, None),
        (Epilogue, Own, None),
        // The tracked GEMM in a dispatch per run of ranks (one rank's output a window), spares
        // first beside it.
        (Spares, Own, Some(0)),
        (Spares, Own, Some(3)),
    ];
    let mut ran = 0;
    for (i, (trigger, dispatch, grid)) in variants.into_iter().enumerate() {
        for (j, collective) in fusable().into_iter().enumerate() {
            let kernels = &kernels[(i + j) % kernels.len()];
            let fused = FusedOptions {
                trigger: Some(trigger),
                spare_dispatch: Some(dispatch),
                spares_first: Some(grid == Some(0)),
                grid,
                spares: Some(3),
                pause: Some(5),
                ..FusedOptions::default()
            };
            let config = Config {
                chunks: 1 + (i + j) % 3,
                collective,
                via: ReduceVia::Update,
                link: Link::Workgroups(2),
                fused,
                ..Config::new(Shape::new(m, n, k).unwrap(), 4)
            };
            matches_reference(small, kernels, config, 90 + (4 * i + j) as u64);
            ran += 1;
        }
    }
    assert!(ran >= 8);
    // The report names the put that ran: its four-window twin.
    let opts = t3_wgpu::experiment::Options {
        config: Config {
            collective: Collective::ReduceScatter,
            via: ReduceVia::Update,
            ..Config::new(Shape::new(m, n, k).unwrap(), 4)
        },
        modes: vec![ModeKind::Sequential, ModeKind::Fused],
        reps: 1,
        warmup: 0,
        seed: 7,
        verify: None,
        stability: t3_wgpu::timing::Stability {
            warmup_s: 0.0,
            ..Default::default()
        },
        baselines: Default::default(),
    };
    let r = t3_wgpu::experiment::run(small, &kernels[0], &opts).unwrap();
    let said = r.fused_config.unwrap_or_default();
    assert!(said.contains("_windows4"), "{said}");
}

/// The collectives fused mode runs.
fn fusable() -> Vec<Collective> {
    Collective::ALL
        .into_iter()
        .filter(|c| c.fusable())
        .collect()
}

/// 3 ranks of `shape` in 2 chunks each, reduces by update over a 2-workgroup link, f32 outputs,
/// fused mode as `fused` says.
fn three_ranks(
    (m, n, k): (usize, usize, usize),
    collective: Collective,
    dtype: Dtype,
    fused: FusedOptions,
) -> Config {
    Config {
        chunks: 2,
        collective,
        via: ReduceVia::Update,
        link: Link::Workgroups(2),
        dtype,
        out_dtype: Dtype::F32,
        fused,
        ..Config::new(Shape::new(m, n, k).unwrap(), 3)
    }
}

/// Fused mode run once on `config` (poisoned outputs, fresh inputs from `seed`): equal to the f64
/// reference and every tracker at its mark.
fn matches_reference(
    gpu: &'static t3_wgpu::gpu::Gpu,
    kernels: &Kernels,
    config: Config,
    seed: u64,
) {
    let what = format!(
        "{} {:?} fused {:?}",
        config.collective, config.dtype, config.fused
    );
    let (dtype, collective) = (config.dtype, config.collective);
    let mut sys = System::new(gpu, kernels, config).unwrap();
    if let Some(why) = Fused.skip_reason(&sys) {
        panic!("{what}: fused skipped: {why}");
    }
    let inputs = Inputs::random(sys.config.shape, dtype, collective, &sys.chunking, seed);
    sys.upload(&inputs);
    sys.poison();
    Fused.run(&mut sys).unwrap();
    let (err, trackers_ok) = check(&sys, &inputs, Verify::Full).unwrap();
    let bound = if dtype == Dtype::F16 { 1e-4 } else { 1e-5 };
    assert!(
        err <= bound && trackers_ok,
        "{what}: rel error {err}, trackers {trackers_ok}"
    );
}

/// Every rank's B packed past the first window (`--fused window` at 1.5 and 2.5 ranks' B), read by
/// one dispatch through B's two windows, the second starting at the first rank past the first
/// (core/src/lower/fused/packing.rs `Packing::split_b`): equal to the f64 reference, f32 and f16,
/// ragged.
fn b_in_two_windows(
    gpu: &'static t3_wgpu::gpu::Gpu,
    f32_kernels: &Kernels,
    f16_kernels: Option<&Kernels>,
) {
    let (m, n, k) = (70, 300, 130);
    for (i, (halves, collective)) in [(3, Collective::AllReduce), (5, Collective::ReduceScatter)]
        .into_iter()
        .enumerate()
    {
        for (dtype, kernels) in [(Dtype::F32, Some(f32_kernels)), (Dtype::F16, f16_kernels)] {
            let Some(kernels) = kernels else { continue };
            let rank_b = t3_wgpu::gemm::Padding::new(m, k, n).bytes(dtype).1;
            let window = (rank_b * halves / 2) as u32;
            let fused = FusedOptions {
                trigger: Some(Trigger::Epilogue),
                window: Some(window),
                ..FusedOptions::default()
            };
            let seed = 70 + (2 * i) as u64 + u64::from(dtype == Dtype::F16);
            let config = three_ranks((m, n, k), collective, dtype, fused);
            matches_reference(gpu, kernels, config, seed);
        }
    }
}

/// Spares of their own (64 invocations, four turns per 256-lane row of a piece) do every transfer
/// on chunks long enough that each invocation takes many rows, a partial last one included, of
/// copies (all-gather) and reduces: where the GEMM's workgroups never help and the spares run after
/// the GEMM, and where the GEMM only counts its tiles and, with no spares beside it, the finisher
/// after it triggers and moves everything (the spares' trigger): equal to the f64 reference.
fn spares_move_every_piece(gpu: &'static t3_wgpu::gpu::Gpu, kernels: &Kernels) {
    for (collective, seed, trigger, spares) in [
        (Collective::AllReduce, 11u64, Trigger::Epilogue, 1),
        (Collective::ReduceScatter, 12, Trigger::Epilogue, 1),
        (Collective::AllReduce, 13, Trigger::Spares, 0),
        (Collective::ReduceScatter, 14, Trigger::Spares, 0),
    ] {
        let config = Config {
            chunks: 1,
            collective,
            via: ReduceVia::Update,
            link: Link::Workgroups(2),
            fused: FusedOptions {
                spare_dispatch: Some(SpareDispatch::Own),
                alias: false,
                help: Help::Never,
                spares: Some(spares),
                pieces: Pieces::Count(1),
                trigger: Some(trigger),
                ..FusedOptions::default()
            },
            ..Config::new(Shape::new(40, 2100, 8).unwrap(), 2)
        };
        matches_reference(gpu, kernels, config, seed);
    }
}

/// A knob out of range, or a combination this configuration cannot run, skips fused mode with the
/// knob named (the environment variable that sets it at the binary's edge).
fn bad_knob_is_named(gpu: &'static t3_wgpu::gpu::Gpu, kernels: &Kernels) {
    let config = Config {
        chunks: 1,
        collective: Collective::ReduceScatter,
        fused: FusedOptions::default(),
        ..Config::new(Shape::new(8, 8, 8).unwrap(), 2)
    };
    let skip = |fused: FusedOptions| {
        let sys = System::new(
            gpu,
            kernels,
            Config {
                fused,
                ..config.clone()
            },
        );
        Fused.skip_reason(&sys.unwrap())
    };
    let why = skip(FusedOptions {
        pieces: Pieces::Count(0),
        ..FusedOptions::default()
    })
    .unwrap();
    assert!(why.contains("--fused pieces"), "{why}");
    // The pause: a count up to the knobs' bound, or auto (the default), wherever the paying
    // defaults do not apply too.
    let why = skip(FusedOptions {
        pause: Some(MAX_KNOB + 1),
        ..FusedOptions::default()
    })
    .unwrap();
    assert!(why.contains("--fused pause"), "{why}");
    assert_eq!(skip(FusedOptions::default()), None);
    // GEMM workgroups that leave every piece to spares which may run beside them (and give up).
    let why = skip(FusedOptions {
        help: Help::Never,
        ..FusedOptions::default()
    })
    .unwrap();
    assert!(
        why.contains("--fused help") && why.contains("--fused alias=off"),
        "{why}"
    );
    // Spares before the GEMM on its own buffers: wgpu's barrier would hold the GEMM until they
    // gave up.
    let why = skip(FusedOptions {
        spare_dispatch: Some(SpareDispatch::Own),
        alias: false,
        spares_first: Some(true),
        ..FusedOptions::default()
    })
    .unwrap();
    assert!(
        why.contains("--fused spares-at") && why.contains("--fused alias=off"),
        "{why}"
    );
    // Spares that trigger need a dispatch of their own (none run in the watched GEMM's).
    let why = skip(FusedOptions {
        trigger: Some(Trigger::Spares),
        ..FusedOptions::default()
    })
    .unwrap();
    assert!(
        why.contains("--fused trigger") && why.contains("--fused spare-dispatch=own"),
        "{why}"
    );
    // Only the spares that trigger land (the epilogue's trigger is the default here).
    let why = skip(FusedOptions {
        land: Some(true),
        ..FusedOptions::default()
    })
    .unwrap();
    assert!(
        why.contains("--fused land") && why.contains("--fused trigger=spares"),
        "{why}"
    );
}

/// The views src/alias.rs makes share their memory: what one dispatch-free write puts through one
/// is read through the others, and none is another's wgpu buffer. Every Vulkan adapter (lavapipe
/// too) makes them; elsewhere there is nothing to test.
#[test]
fn aliased_views_share_their_memory() {
    let Some(gpu) = common::gpu() else { return };
    let usage =
        wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST;
    // SAFETY: written before read; each write is waited for before another view reads it.
    let views = unsafe { t3_wgpu::alias::views(&gpu.device, "alias test", 4096, usage, 3) };
    let Some(views) = views else {
        assert!(
            gpu.adapter.get_info().backend != wgpu::Backend::Vulkan,
            "a Vulkan device made no aliased views"
        );
        return;
    };
    let [first, second, third] = &views[..] else {
        panic!("{} views", views.len())
    };
    assert!(first != second && second != third && first != third);
    let seed = common::seed("alias");
    let words: Vec<u32> = (0..1024u32)
        .map(|i| i.wrapping_mul(2654435761) ^ seed as u32)
        .collect();
    // wgpu orders nothing between the views: each write is submitted and waited for first.
    let settle = || {
        let idx = gpu.queue.submit([]);
        gpu.wait(
            Some(idx),
            "alias test write",
            std::time::Duration::from_secs(30),
        )
        .unwrap();
    };
    gpu.queue
        .write_buffer(first, 0, bytemuck::cast_slice(&words));
    settle();
    for v in [second, third] {
        assert_eq!(gpu.read_u32("another view", v, 0, 1024).unwrap(), words);
    }
    let back: Vec<u32> = words.iter().map(|w| !w).collect();
    gpu.queue
        .write_buffer(third, 2048, bytemuck::cast_slice(&back[512..]));
    settle();
    for v in [first, second] {
        let both = gpu.read_u32("first views", v, 0, 1024).unwrap();
        assert_eq!(&both[..512], &words[..512]);
        assert_eq!(&both[512..], &back[512..]);
    }
}

/// Fused mode's pipelines, which its kernels make on first use, are all made before its first run,
/// in a phase of their own (`Took::pipelines_s`), so that a driver's compile on a cold shader cache
/// is counted neither as checks nor in a timed run: after `System::make_fused_pipelines`, a whole
/// measurement of fused mode makes none; a measurement has them made before its first timed run;
/// one without fused mode has none, and one without its own sequential run makes none of that
/// run's.
#[test]
fn fused_pipelines_are_made_before_the_first_run() {
    use t3_wgpu::experiment::{measure_with, prepare, run, Baselines, Options};
    let Some(gpu) = common::gpu() else { return };
    let config = Config {
        chunks: 2,
        collective: Collective::AllReduce,
        via: ReduceVia::Update,
        ..Config::new(Shape::new(67, 45, 19).unwrap(), 3)
    };
    let opts = |modes, baselines, verify| Options {
        config: config.clone(),
        modes,
        reps: 1,
        warmup: 0,
        seed: common::seed("fused pipelines"),
        verify,
        stability: t3_wgpu::timing::Stability {
            warmup_s: 0.0,
            ..Default::default()
        },
        baselines,
    };
    let fused = vec![ModeKind::Sequential, ModeKind::Fused];
    // Kernels of their own: the test binary's shared ones may have made pipelines already. Those
    // made with the kernel (the fused GEMM per tile) are not all this point runs.
    let kernels = Kernels::new(gpu).unwrap();
    let with_the_kernel = kernels.gemm.pipelines_made();
    let sys = System::new(gpu, &kernels, config.clone()).unwrap();
    sys.make_fused_pipelines(false).unwrap();
    let without_own = kernels.gemm.pipelines_made();
    sys.make_fused_pipelines(true).unwrap();
    let made = kernels.gemm.pipelines_made();
    // Its own sequential run's watched GEMM and finisher besides (this point's fused GEMM may be
    // one made with the kernel).
    assert!(
        with_the_kernel <= without_own && without_own < made,
        "{with_the_kernel} -> {without_own} -> {made}"
    );
    drop(sys);
    run(gpu, &kernels, &opts(fused.clone(), Baselines::All, None)).unwrap();
    assert_eq!(kernels.gemm.pipelines_made(), made);

    let kernels = Kernels::new(gpu).unwrap();
    let alone = opts(vec![ModeKind::Sequential], Baselines::All, None);
    let r = run(gpu, &kernels, &alone).unwrap();
    assert_eq!(r.took.pipelines_s, 0.0);
    assert_eq!(kernels.gemm.pipelines_made(), with_the_kernel);
    let r = run(
        gpu,
        &kernels,
        &opts(fused.clone(), Baselines::Sequential, None),
    )
    .unwrap();
    assert!(r.took.pipelines_s > 0.0);
    assert_eq!(kernels.gemm.pipelines_made(), without_own);
    // Unchecked, its first run is a timed one: every pipeline is made by then.
    let kernels = Kernels::new(gpu).unwrap();
    let unchecked = opts(fused, Baselines::All, Some(Verify::Off));
    let (mut sys, inputs) = prepare(gpu, &kernels, &unchecked).unwrap();
    let first = std::sync::Mutex::new(None);
    measure_with(&mut sys, &inputs, &unchecked, &|_, _| {
        first
            .lock()
            .unwrap()
            .get_or_insert(kernels.gemm.pipelines_made());
        Ok(())
    })
    .unwrap();
    assert_eq!(first.into_inner().unwrap(), Some(made));
}
