//! Every collective under every mode the adapter supports equals the f64 reference, and every tracker
//! counter ends at its threshold: ranks 1..8, chunk counts that do and do not divide the rows, update
//! and land-then-reduce, f32, f16 and bf16 GEMM operands.

mod common;

use t3_wgpu::config::host::HostWait;
use t3_wgpu::experiment::{check, Verify};
use t3_wgpu::modes::{self, Config, Host, Kernels, Mode, StepLead, System};
use t3_wgpu::plan::ReduceVia;
use t3_wgpu::ranks::Inputs;
use t3_wgpu::schedule::{Collective, Order};
use t3_wgpu::shapes::{Dtype, Shape};
use t3_wgpu::steps::Link;

fn run_all(ranks: usize, chunks: usize, m: usize, via: ReduceVia, link: Link, mode_names: &[&str]) {
    run_typed(Dtype::F32, ranks, chunks, m, via, link, mode_names);
}

fn run_typed(
    dtype: Dtype,
    ranks: usize,
    chunks: usize,
    m: usize,
    via: ReduceVia,
    link: Link,
    mode_names: &[&str],
) {
    for collective in Collective::ALL {
        let config = Config {
            chunks,
            collective,
            via,
            link,
            dtype,
            out_dtype: Dtype::F32,
            // Arbitration and the step lead only change workgroup counts and dispatch order:
            // results must not change (the GEMM grid: `gemm_grid_covers_every_tile`).
            arbitrate: chunks.is_multiple_of(2).then_some(2),
            step_lead: if chunks.is_multiple_of(2) {
                StepLead::Auto
            } else {
                StepLead::Workgroups(1)
            },
            ..Config::new(Shape::new(m, 37, 19).unwrap(), ranks)
        };
        run_config(config, mode_names);
    }
}

/// Runs `config` under each of `mode_names` the adapter supports; checks results and trackers.
fn run_config(config: Config, mode_names: &[&str]) {
    let modes = modes::all()
        .into_iter()
        .filter(|m| mode_names.contains(&m.name()))
        .collect();
    run_modes(config, modes);
}

/// Runs `config` under each of `modes` the adapter supports; checks results and trackers.
fn run_modes(config: Config, modes: Vec<Box<dyn Mode>>) {
    let Some(gpu) = common::gpu() else { return };
    let Some(kernels) = common::kernels(gpu, config.dtype) else {
        return;
    };
    let mut sys = System::new(gpu, kernels, config).unwrap();
    let c = &sys.config.clone();
    let (collective, ranks, chunks, m, via, link, dtype) = (
        c.collective,
        c.ranks,
        c.chunks,
        c.shape.m,
        c.via,
        c.link,
        c.dtype,
    );
    let seed = common::seed(&format!(
        "{collective} r{ranks} c{chunks} m{m} {via:?} {}",
        dtype.name()
    ));
    let inputs = Inputs::random(sys.config.shape, dtype, collective, &sys.chunking, seed);
    sys.upload(&inputs);
    for mode in &modes {
        if let Some(reason) = mode.skip_reason(&sys) {
            eprintln!("{} skipped: {reason}", mode.name());
            continue;
        }
        sys.poison();
        mode.run(&mut sys).unwrap();
        let (err, trackers_ok) = check(&sys, &inputs, Verify::Full).unwrap();
        let what = format!(
            "{} {collective} ranks {ranks} chunks {chunks} m {m} {via:?} {link:?} {} ({}), step lead {}, gemm grid {:?}",
            mode.name(),
            dtype.name(),
            kernels.gemm.engine.name(),
            c.step_lead.describe(),
            c.gemm_grid
        );
        assert!(err <= 1e-5, "{what}: rel error {err}");
        assert!(
            trackers_ok,
            "{what}: a tracker counter missed its threshold"
        );
    }
}

#[test]
fn gemm_grid_covers_every_tile() {
    // 3 ranks x 2 chunks of 200 rows, N = 600: every GEMM op is 2 x 5 = 10 SIMT tiles (2 x 3 on
    // the cooperative kernel), so grids of 1, 3 and 7 workgroups per pass leave each op 1 or 2 (or
    // 1) workgroups looping over several tiles; f16 runs the cooperative kernel where there is one.
    // Each grid with collectives reducing by update (fused mode's, which runs only then): the f32
    // grids two each in turn, so every collective meets one of them, the f16 grid all five; and with
    // one collective that forwards (the ring's reduce-scatter and all-reduce in turn: the others
    // have no partial to forward).
    for (g, (grid, dtype)) in [
        (1, Dtype::F32),
        (3, Dtype::F32),
        (7, Dtype::F32),
        (3, Dtype::F16),
    ]
    .into_iter()
    .enumerate()
    {
        let updating: Vec<Collective> = if dtype == Dtype::F16 {
            Collective::ALL.to_vec()
        } else {
            vec![collective_of(g), collective_of(g + 2)]
        };
        for (collective, via) in updating
            .into_iter()
            .map(|c| (c, ReduceVia::Update))
            .chain([(FORWARDING[g % 2], ReduceVia::Forward)])
        {
            run_config(
                Config {
                    chunks: 2,
                    collective,
                    via,
                    link: Link::Workgroups(2),
                    dtype,
                    out_dtype: Dtype::F32,
                    gemm_grid: Some(grid),
                    ..Config::new(Shape::new(1200, 600, 37).unwrap(), 3)
                },
                &["sequential", "host", "encoded", "fused"],
            );
        }
    }
}

#[test]
fn step_lead_reorders_gemm_ops() {
    // 4 ranks x 2 chunks of 300 rows, N = 300: every GEMM op is 3 x 3 = 9 workgroups, so leads of
    // 1, 5 and 9 move the pass's last GEMM op after its steps, 13 the last two, 1000 all of them;
    // auto follows the steps' workgroups.
    // Each lead with one collective reducing by update (the five in turn) and one forwarding (the
    // ring's two in turn): over the seven leads, every collective, and each lead with a forward.
    let leads = [0, 1, 5, 9, 13, 1000].map(StepLead::Workgroups);
    for (l, lead) in leads.into_iter().chain([StepLead::Auto]).enumerate() {
        for (collective, via) in [
            (collective_of(l), ReduceVia::Update),
            (FORWARDING[l % 2], ReduceVia::Forward),
        ] {
            run_config(
                Config {
                    chunks: 2,
                    collective,
                    via,
                    link: Link::Workgroups(3),
                    step_lead: lead,
                    ..Config::new(Shape::new(2400, 300, 19).unwrap(), 4)
                },
                &["encoded", "host"],
            );
        }
    }
}

const ALL_MODES: &[&str] = &["sequential", "host", "encoded", "fused"];

/// The collective of case `i` of a sweep: the five in turn, so that a sweep over another axis covers
/// every collective without multiplying its cases by five (tests/properties.rs draws them at random
/// against everything else; this keeps the suite inside its time on a 2-core lavapipe machine).
fn collective_of(i: usize) -> Collective {
    Collective::ALL[i % Collective::ALL.len()]
}

/// The collectives whose reduces forward a partial under `ReduceVia::Forward` (the ring's); the
/// others reduce by update whatever is asked (core/src/plan.rs).
const FORWARDING: [Collective; 2] = [Collective::ReduceScatter, Collective::AllReduce];

#[test]
fn sequential_every_rank_count() {
    for ranks in [1, 2, 3, 4, 8] {
        // 7 rows per rank plus a ragged remainder: chunk counts 1 and 2 never divide evenly.
        run_all(
            ranks,
            1,
            7 * ranks + 3,
            ReduceVia::Update,
            Link::Unthrottled,
            &["sequential"],
        );
        run_all(
            ranks,
            2,
            7 * ranks + 3,
            ReduceVia::Land,
            Link::Workgroups(1),
            &["sequential"],
        );
    }
}

#[test]
fn steps_over_chunks_of_many_strides() {
    // A step's workgroups walk its chunk in strides of STEP_WG vec4s each: chunks of about twenty
    // strides plus a ragged end, over one, two and all the workgroups they need, with puts that
    // store, add, and forward (three ranks: the middle one adds its inbox to its own partial).
    let stride = t3_wgpu::steps::STEP_WG as usize * 4;
    let n = 61;
    // Rows of n floats per rank's chunk: 20.8 strides.
    let rows = (20 * stride + 4 * stride / 5).div_ceil(n);
    for (link, via) in [
        (Link::Workgroups(1), ReduceVia::Forward),
        (Link::Workgroups(2), ReduceVia::Update),
        (Link::Unthrottled, ReduceVia::Land),
    ] {
        // Two ranks forward nothing: the only step lands a partial that its owner adds.
        let ranks = if via == ReduceVia::Forward { 3 } else { 2 };
        for collective in Collective::ALL {
            let via = match (collective, via) {
                // Forwarding is a ring's; an all-gather has no reduce to realise.
                (Collective::DirectReduceScatter, ReduceVia::Forward)
                | (Collective::AllGather, _) => ReduceVia::Update,
                _ => via,
            };
            let config = Config {
                chunks: 1,
                collective,
                via,
                link,
                ..Config::new(Shape::new(ranks * rows + 1, n, 5).unwrap(), ranks)
            };
            run_config(config, &["sequential", "host", "encoded"]);
        }
    }
}

#[test]
fn many_ranks_and_chunks() {
    // Thousands of ops: per-op uniform slots, query sets and 2-D folding at scale.
    run_all(
        32,
        1,
        64,
        ReduceVia::Update,
        Link::Workgroups(1),
        &["sequential", "encoded"],
    );
    run_all(8, 16, 256, ReduceVia::Update, Link::Unthrottled, &["host"]);
}

#[test]
fn overlap_modes_ranks_2_3() {
    for ranks in [2, 3] {
        run_all(
            ranks,
            1,
            40 * ranks,
            ReduceVia::Update,
            Link::Unthrottled,
            ALL_MODES,
        );
        run_all(
            ranks,
            3,
            40 * ranks + 5,
            ReduceVia::Land,
            Link::Workgroups(2),
            ALL_MODES,
        );
    }
}

#[test]
fn overlap_modes_ranks_4_8() {
    for ranks in [4, 8] {
        run_all(
            ranks,
            2,
            9 * ranks + 1,
            ReduceVia::Update,
            Link::Workgroups(1),
            ALL_MODES,
        );
        run_all(
            ranks,
            1,
            5 * ranks,
            ReduceVia::Land,
            Link::Unthrottled,
            ALL_MODES,
        );
    }
}

#[test]
fn f16_operands_every_mode() {
    // The f16 kernel the adapter gets (cooperative matrices where offered, else SIMT), tracked and
    // stored through the same put snippets, feeding every collective in every mode.
    run_typed(
        Dtype::F16,
        3,
        2,
        40 * 3 + 5,
        ReduceVia::Update,
        Link::Workgroups(2),
        ALL_MODES,
    );
    run_typed(
        Dtype::F16,
        4,
        1,
        33,
        ReduceVia::Forward,
        Link::Unthrottled,
        ALL_MODES,
    );
}

#[test]
fn bf16_operands_every_mode() {
    // bf16 operands (SIMT) through the same snippets into every collective in every mode.
    run_typed(
        Dtype::Bf16,
        3,
        2,
        40 * 3 + 5,
        ReduceVia::Forward,
        Link::Workgroups(2),
        ALL_MODES,
    );
}

#[test]
fn timelines_are_ordered_and_complete() {
    let Some(gpu) = common::gpu() else { return };
    let kernels = Kernels::new(gpu).unwrap();
    for collective in Collective::ALL {
        let config = Config {
            chunks: 2,
            collective,
            ..Config::new(Shape::new(50, 40, 30).unwrap(), 4)
        };
        let mut sys = System::new(gpu, &kernels, config).unwrap();
        let inputs = Inputs::random(
            sys.config.shape,
            Dtype::F32,
            collective,
            &sys.chunking,
            common::seed("timeline"),
        );
        sys.upload(&inputs);
        for mode in modes::all() {
            if mode.skip_reason(&sys).is_some() {
                continue;
            }
            let run = mode.run(&mut sys).unwrap();
            let what = format!("{} {collective}", mode.name());
            // Complete: every op (each chunk produced, each step run) has a finite span.
            assert_eq!(run.op_spans.len(), sys.plan.ops.len(), "{what}");
            for (i, &(a, b)) in run.op_spans.iter().enumerate() {
                assert!(
                    a.is_finite() && b.is_finite() && a <= b,
                    "{what}: op {i} span {a}..{b}"
                );
            }
            // Ordered: at pass grain, a step starts only after every op it depends on has ended on the
            // GPU clock (fused mode is one dispatch: its order is inside it).
            if mode.name() != "fused" {
                for (i, op) in sys.plan.ops.iter().enumerate() {
                    for &d in &op.deps {
                        assert!(
                            run.op_spans[d].1 <= run.op_spans[i].0 + 1e-3,
                            "{what}: op {i} starts at {} before its dependency {d} ends at {}",
                            run.op_spans[i].0,
                            run.op_spans[d].1
                        );
                    }
                }
            }
            // Every rank has GEMM events; every step's destination has step events.
            for p in 0..4 {
                assert!(
                    run.timeline
                        .events
                        .iter()
                        .any(|e| e.lane == t3_wgpu::timeline::Lane::Gemm { rank: p }),
                    "{what}: rank {p} gemm lane empty"
                );
            }
            // The host loop's waits: one per submission, in order, never overlapping.
            let waits: Vec<(f64, f64)> = run
                .timeline
                .events
                .iter()
                .filter(|e| e.lane == t3_wgpu::timeline::Lane::HostWait)
                .map(|e| (e.start_us, e.end_us))
                .collect();
            assert_eq!(waits.is_empty(), mode.name() != "host", "{what}");
            for w in waits.windows(2) {
                assert!(w[0].0 <= w[0].1 && w[0].1 <= w[1].0, "{what}: waits {w:?}");
            }
            // GPU intervals end where the run ends (host trigger marks sit on the host clock, aligned
            // only to within a submission's launch delay, so they are left out).
            let events_end = run
                .timeline
                .events
                .iter()
                .filter(|e| {
                    !matches!(
                        e.lane,
                        t3_wgpu::timeline::Lane::Host | t3_wgpu::timeline::Lane::HostWait
                    )
                })
                .map(|e| e.end_us)
                .fold(0.0, f64::max);
            assert!(
                (events_end - run.total_us).abs() <= run.total_us * 0.01 + 1.0,
                "{what}: events end {events_end} vs total {}",
                run.total_us
            );
        }
    }
}

/// The pipelined host loop at every depth from 2 to past the number of GEMM stages (all GEMM work
/// queued before any counter is read), odd rank counts and chunks that do not divide the rows.
#[test]
fn host_loop_at_every_pipeline_depth() {
    // Each depth with the default wait (block on CPU adapters), and two submissions deep spinning
    // on polls instead (the default on GPUs).
    let depths = [2, 3, 5, 40].map(|d| (d, None));
    for (d, (in_flight, wait)) in depths
        .into_iter()
        .chain([(2, Some(HostWait::Spin))])
        .enumerate()
    {
        eprintln!("host loop, {in_flight} submissions in flight, wait {wait:?}");
        // Two collectives per depth and configuration, turning with the depth: every collective at
        // every depth, and every collective in both configurations.
        for (j, (ranks, chunks, via)) in [(3, 2, ReduceVia::Update), (5, 1, ReduceVia::Land)]
            .into_iter()
            .enumerate()
        {
            for collective in [collective_of(d + j), collective_of(d + j + 2)] {
                let config = Config {
                    chunks,
                    collective,
                    via,
                    link: Link::Workgroups(2),
                    ..Config::new(Shape::new(13 * ranks + 3, 21, 11).unwrap(), ranks)
                };
                let host = Host {
                    in_flight: Some(in_flight),
                    wait,
                    grain: None,
                };
                run_modes(config, vec![Box::new(host)]);
            }
        }
    }
}

#[test]
fn the_chunk_order_under_every_mode() {
    // The GEMM making the j-th chunk of every shard at stage j (`--order chunk`): the ring's
    // reduce-scatter and all-reduce, each reduce, chunk counts that do not divide the rows.
    for (ranks, chunks, m, via) in [
        (2, 3, 47, ReduceVia::Update),
        (3, 2, 40, ReduceVia::Land),
        (4, 3, 61, ReduceVia::Forward),
    ] {
        for collective in [Collective::ReduceScatter, Collective::AllReduce] {
            let config = Config {
                chunks,
                collective,
                via,
                order: Order::Chunk,
                link: Link::Workgroups(2),
                ..Config::new(Shape::new(m, 37, 19).unwrap(), ranks)
            };
            run_config(config, ALL_MODES);
        }
    }
}
