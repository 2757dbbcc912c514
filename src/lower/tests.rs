//! CPU-only tests of lowering: pass contents, the step lead, arbitration, job tables, fused packing.

use super::*;
use crate::config::{Config, StepLead};
use crate::placement::Placement;
use crate::plan::{Buf, Kind, Plan, ReduceVia};
use crate::schedule::{Collective, Schedule};
use crate::shapes::{Chunking, Dtype, Shape};
use crate::steps::Link;

const TARGET: Target = Target {
    device: 0,
    tile_n: 128,
    tile_group: 0,
    max_workgroups_per_dim: 65535,
    uniform_align: 256,
    max_buffer: 1 << 30,
    max_binding: 1 << 30,
    host_mapped: true,
    loop_limit: None,
    sms: None,
    gemm_per_sm: 1,
};

fn config(collective: Collective, via: ReduceVia) -> Config {
    Config {
        shape: Shape::new(2400, 300, 19).unwrap(),
        ranks: 4,
        chunks: 2,
        collective,
        via,
        link: Link::Workgroups(3),
        dtype: Dtype::F32,
        arbitrate: None,
        gemm_grid: None,
        fused: Default::default(),
        host: Default::default(),
        step_lead: StepLead::Workgroups(0),
    }
}

/// `c`'s plan with its ranks placed on `devices` devices, the links they need, and each device's
/// lowering (`mapped(d)`: whether device d maps its link ends in place).
fn placed(
    c: &Config,
    devices: usize,
    mapped: impl Fn(usize) -> bool,
) -> (Plan, Placement, HostLinks, Vec<Lowered>) {
    let ch = Chunking::new(c.shape.m, c.ranks, c.chunks).unwrap();
    let s = Schedule::new(c.collective, &ch);
    let plan = Plan::new(&s, &ch, c.shape.n, TARGET.tile_n, c.via);
    let placement = Placement::new(c.ranks, devices).unwrap();
    let links = HostLinks::new(&plan, &placement);
    let share = Share {
        placement: &placement,
        links: &links,
    };
    let lowered = (0..devices)
        .map(|d| {
            let t = Target {
                device: d,
                host_mapped: mapped(d),
                ..TARGET
            };
            lower_on(c, &ch, &s, &plan, t, share)
        })
        .collect();
    (plan, placement, links, lowered)
}

fn lowered(c: &Config) -> (Plan, Lowered) {
    let ch = Chunking::new(c.shape.m, c.ranks, c.chunks).unwrap();
    let s = Schedule::new(c.collective, &ch);
    let plan = Plan::new(&s, &ch, c.shape.n, TARGET.tile_n, c.via);
    let l = lower(c, &ch, &s, &plan, TARGET);
    (plan, l)
}

/// The workgroups each dispatch names are the ones its params fold, and its kernel fits its
/// binding's layout.
fn check_dispatch(l: &Lowered, d: &Dispatch) {
    let b = &l.bindings[d.binding];
    match (d.kernel, b.group, b.params) {
        // A persistent grid dispatches grid_wg workgroups over total_wg tiles.
        (Kernel::GemmGrid, Group::Gemm, Params::Gemm(p)) => {
            assert_eq!(p.grid_wg, d.workgroups);
            assert!(p.grid_wg < p.total_wg);
            let (x, _) = crate::shapes::fold(d.workgroups, TARGET.max_workgroups_per_dim);
            assert_eq!(p.dispatch_x, x);
        }
        (Kernel::Gemm(_), Group::Gemm, Params::Gemm(p)) => {
            assert_eq!(p.grid_wg, 0, "a grid only on the GRID pipeline");
            assert_eq!(p.total_wg, d.workgroups);
        }
        // Fused mode's spare transfer workgroups follow the GEMM's (a workgroup per tile, or its
        // persistent grid) in the same dispatch, or come in their own.
        (
            Kernel::Fused {
                split_b,
                split_c,
                grid,
                ..
            },
            Group::Fused,
            Params::Gemm(p),
        ) => {
            assert_eq!(split_b, p.b_split != u32::MAX);
            // Where the output spans both windows the second continues the first at `c_split`; else
            // the whole output lies before `c_split`, so the windowed put would never store past it
            // and the tracked GEMM's plain store (one binding) stands in for it.
            let (Resource::Window(lo), Resource::Window(hi)) = (b.resources[0], b.resources[7])
            else {
                panic!("fused output windows {:?}", b.resources)
            };
            if split_c {
                assert_eq!(u64::from(p.c_split) * 4, lo.bytes);
                assert_eq!(hi.offset, lo.offset + lo.bytes);
            } else {
                assert!(u64::from(p.c_split) * 4 >= lo.bytes, "{p:?} {lo:?}");
            }
            assert_eq!(grid, p.grid_wg != 0, "a grid only on the GRID pipeline");
            assert!(if grid { p.grid_wg } else { p.total_wg } <= d.workgroups);
            let (x, _) = crate::shapes::fold(d.workgroups, TARGET.max_workgroups_per_dim);
            assert_eq!(p.dispatch_x, x);
        }
        (Kernel::Spares { .. }, Group::Fused, Params::Gemm(_)) => assert!(d.workgroups > 0),
        // The pipeline without the second source must never run a step that reads one.
        (Kernel::Step { acc, .. }, Group::Step, Params::Step(p)) => {
            assert_eq!(p.n_wg, d.workgroups);
            assert_eq!(
                acc,
                p.has_acc != 0,
                "the step's pipeline follows its has_acc"
            );
        }
        other => panic!("dispatch {d:?} over {other:?}"),
    }
}

#[test]
fn recordings_run_every_op_once_in_dependency_order() {
    for c in Collective::ALL {
        for via in [ReduceVia::Update, ReduceVia::Land, ReduceVia::Forward] {
            let (plan, l) = lowered(&config(c, via));
            for rec in [&l.sequential, &l.encoded] {
                let mut pass_of = vec![None; plan.ops.len()];
                for (k, p) in rec.passes().enumerate() {
                    assert_eq!(p.ops.len(), p.dispatches.len());
                    for (&i, d) in p.ops.iter().zip(&p.dispatches) {
                        assert!(pass_of[i].replace(k).is_none(), "{c} {via:?}: op {i} twice");
                        check_dispatch(&l, d);
                    }
                }
                for (i, op) in plan.ops.iter().enumerate() {
                    let k = pass_of[i].unwrap_or_else(|| panic!("{c} {via:?}: op {i} missing"));
                    for &d in &op.deps {
                        // GEMM ops depend only on earlier GEMMs of their own pass (none).
                        assert!(
                            pass_of[d].unwrap() < k,
                            "{c} {via:?} {}: op {i} with its dependency {d}",
                            rec.label
                        );
                    }
                }
                // Every run starts by clearing every tracker.
                assert_eq!(rec.commands[..l.locs.len()], l.reset()[..]);
            }
            // Sequential: every GEMM pass before every step pass.
            let kinds: Vec<bool> = l
                .sequential
                .passes()
                .map(|p| p.ops.iter().all(|&i| l.ops[i].as_ref().unwrap().gemm))
                .collect();
            assert!(
                kinds.windows(2).all(|w| w[0] >= w[1]),
                "{c} {via:?}: {kinds:?}"
            );
            assert_eq!(kinds.iter().filter(|&&g| g).count(), l.stages);
            // T_gemm's recordings: the sequential GEMM passes alone, through either pipeline.
            for (rec, store) in [
                (&l.gemm_tracked, StoreMode::Store),
                (&l.gemm_untracked, StoreMode::Untracked),
            ] {
                let gemm_passes: Vec<&Pass> = l.sequential.passes().take(l.stages).collect();
                assert_eq!(rec.passes().count(), l.stages);
                for (p, q) in rec.passes().zip(gemm_passes) {
                    assert_eq!(p.ops, q.ops);
                    assert!(p.dispatches.iter().all(|d| d.kernel == Kernel::Gemm(store)));
                }
            }
        }
    }
}

/// Per pass holding GEMM and step ops: the GEMM workgroups dispatched after its first step, all
/// its GEMM workgroups, its step workgroups and its GEMM ops' sizes.
fn shared_passes(rec: &Recording) -> Vec<(u32, u32, u32, Vec<u32>)> {
    let wg = |ds: &[Dispatch], step: bool| -> u32 {
        ds.iter()
            .filter(|d| matches!(d.kernel, Kernel::Step { .. }) == step)
            .map(|d| d.workgroups)
            .sum()
    };
    rec.passes()
        .filter_map(|p| {
            let first = p
                .dispatches
                .iter()
                .position(|d| matches!(d.kernel, Kernel::Step { .. }))?;
            let sizes: Vec<u32> = p
                .dispatches
                .iter()
                .filter(|d| !matches!(d.kernel, Kernel::Step { .. }))
                .map(|d| d.workgroups)
                .collect();
            let all = wg(&p.dispatches, false);
            (all > 0).then(|| {
                (
                    wg(&p.dispatches[first..], false),
                    all,
                    wg(&p.dispatches, true),
                    sizes,
                )
            })
        })
        .collect()
}

#[test]
fn step_lead_moves_whole_gemm_ops_after_the_steps() {
    // 2400 rows over 4 ranks x 2 chunks, N = 300: every GEMM op is 3 x 3 = 9 workgroups.
    for (lead, want) in [(0, 0), (1, 9), (5, 9), (9, 9), (13, 18), (1000, u32::MAX)] {
        let mut c = config(Collective::DirectReduceScatter, ReduceVia::Update);
        c.step_lead = StepLead::Workgroups(lead);
        let (_, l) = lowered(&c);
        let shared = shared_passes(&l.encoded);
        assert!(!shared.is_empty());
        for (after, all, _, sizes) in shared {
            assert!(sizes.iter().all(|&s| s == 9));
            assert_eq!(after, want.min(all), "lead {lead}");
        }
        // Sequential never shares a pass, so nothing moves there.
        assert!(shared_passes(&l.sequential).is_empty());
    }
    // Auto, at most one step per rank in a pass: the shortest run of last GEMM ops with at
    // least the steps' workgroups (all of them where the pass has fewer).
    let mut c = config(Collective::ReduceScatter, ReduceVia::Forward);
    c.chunks = 1;
    c.step_lead = StepLead::Auto;
    let (_, l) = lowered(&c);
    let shared = shared_passes(&l.encoded);
    assert!(!shared.is_empty());
    for (after, all, steps, sizes) in shared {
        let last = *sizes.last().unwrap();
        assert!(
            after >= steps.min(all) && after < steps + last,
            "{after} after {steps}"
        );
    }
}

#[test]
fn gemm_grid_caps_gemm_work_only_beside_steps() {
    let mut c = config(Collective::ReduceScatter, ReduceVia::Forward);
    c.shape = Shape::new(4096, 1000, 19).unwrap();
    c.step_lead = StepLead::Auto;
    c.gemm_grid = Some(6);
    let (_, grid) = lowered(&c);
    c.gemm_grid = None;
    let (_, free) = lowered(&c);
    let gemm = |l: &Lowered, d: &Dispatch| {
        matches!(d.kernel, Kernel::Gemm(_) | Kernel::GemmGrid)
            && l.bindings[d.binding].group == Group::Gemm
    };
    let mut shared = 0;
    for (a, b) in grid.encoded.passes().zip(free.encoded.passes()) {
        let gemms: Vec<&Dispatch> = a.dispatches.iter().filter(|d| gemm(&grid, d)).collect();
        let steps = a.dispatches.len() - gemms.len();
        for d in &a.dispatches {
            check_dispatch(&grid, d);
        }
        if gemms.is_empty() {
            continue;
        }
        let wg: u32 = gemms.iter().map(|d| d.workgroups).sum();
        let tiles = |l: &Lowered, d: &Dispatch| match l.bindings[d.binding].params {
            Params::Gemm(p) => p.total_wg,
            _ => unreachable!(),
        };
        let all: u32 = gemms.iter().map(|d| tiles(&grid, d)).sum();
        if steps > 0 {
            shared += 1;
            // max(1, 6 / GEMM ops) each, every tile still covered, and every GEMM before the steps
            // (no step lead beside a resident grid).
            assert!(wg <= 6.max(gemms.len() as u32), "{wg} GEMM workgroups");
            assert!(wg < all);
            assert!(a.dispatches[..gemms.len()].iter().all(|d| gemm(&grid, d)));
        } else {
            assert_eq!(
                wg, all,
                "a pass without steps dispatches a workgroup per tile"
            );
        }
        let free_tiles: u32 = b
            .dispatches
            .iter()
            .filter(|d| gemm(&free, d))
            .map(|d| tiles(&free, d))
            .sum();
        assert_eq!(all, free_tiles);
    }
    assert!(shared > 0);
    // An explicit step lead still puts GEMM work after the steps beside a grid.
    c.gemm_grid = Some(6);
    c.step_lead = StepLead::Workgroups(u32::MAX);
    let (_, led) = lowered(&c);
    assert!(led.encoded.passes().any(|p| {
        let first_step = p.dispatches.iter().position(|d| !gemm(&led, d));
        first_step.is_some_and(|i| i == 0 && p.dispatches.iter().any(|d| gemm(&led, d)))
    }));
    // Sequential mode and the GEMM alone keep a workgroup per tile.
    for rec in [&grid.sequential, &grid.gemm_tracked] {
        for p in rec.passes() {
            for d in p.dispatches.iter().filter(|d| gemm(&grid, d)) {
                assert_eq!(
                    Some(d.workgroups),
                    match grid.bindings[d.binding].params {
                        Params::Gemm(p) => Some(p.total_wg),
                        _ => None,
                    }
                );
            }
        }
    }
}

#[test]
fn gemm_grid_keeps_each_workgroups_loops_inside_a_drivers_cap() {
    // K = 4096 on a driver that ends loops after 65535 iterations: a tile takes up to 4864 of them,
    // so a workgroup may take 6 tiles (half the cap), whatever the grid asks.
    let mut c = config(Collective::ReduceScatter, ReduceVia::Forward);
    c.shape = Shape::new(4096, 2000, 4096).unwrap();
    c.gemm_grid = Some(1);
    let ch = Chunking::new(c.shape.m, c.ranks, c.chunks).unwrap();
    let s = Schedule::new(c.collective, &ch);
    let plan = Plan::new(&s, &ch, c.shape.n, TARGET.tile_n, c.via);
    let t = Target {
        loop_limit: Some(65535),
        ..TARGET
    };
    let l = lower(&c, &ch, &s, &plan, t);
    let mut grids = 0;
    for p in l.encoded.passes() {
        for d in p.dispatches.iter().filter(|d| d.kernel == Kernel::GemmGrid) {
            let Params::Gemm(g) = l.bindings[d.binding].params else {
                panic!("a GEMM dispatch over other params")
            };
            grids += 1;
            assert!(
                g.total_wg.div_ceil(g.grid_wg) <= 6,
                "{} tiles on {}",
                g.total_wg,
                g.grid_wg
            );
        }
    }
    assert!(grids > 0);
    assert_eq!(super::grid_floor(100, 4096, None), 1);
}

#[test]
fn arbitration_caps_steps_only_beside_gemm_work() {
    let mut c = config(Collective::DirectReduceScatter, ReduceVia::Update);
    c.link = Link::Unthrottled;
    c.arbitrate = Some(4);
    let (_, capped) = lowered(&c);
    c.arbitrate = None;
    let (_, free) = lowered(&c);
    let step_wg = |p: &Pass| -> u32 {
        p.dispatches
            .iter()
            .filter(|d| matches!(d.kernel, Kernel::Step { .. }))
            .map(|d| d.workgroups)
            .sum()
    };
    let mut shared = 0;
    for (a, b) in capped.encoded.passes().zip(free.encoded.passes()) {
        let steps = a
            .dispatches
            .iter()
            .filter(|d| matches!(d.kernel, Kernel::Step { .. }))
            .count() as u32;
        if a.ops.iter().any(|&i| capped.ops[i].as_ref().unwrap().gemm) && steps > 0 {
            shared += 1;
            // Each step gets max(1, W / steps) workgroups at most.
            assert!(
                step_wg(a) <= 4.max(steps),
                "{} > 4 over {steps} steps",
                step_wg(a)
            );
            assert!(step_wg(a) < step_wg(b));
        } else {
            assert_eq!(
                step_wg(a),
                step_wg(b),
                "a pass without GEMM work keeps the link budget"
            );
        }
        for d in &a.dispatches {
            check_dispatch(&capped, d);
        }
    }
    assert!(shared > 0);
    // Sequential mode keeps the link budget everywhere.
    let seq = |l: &Lowered| l.sequential.passes().map(step_wg).collect::<Vec<_>>();
    assert_eq!(seq(&capped), seq(&free));
}

#[test]
fn job_tables_follow_the_tiles() {
    let spec = |r0, r1| Job {
        row0: r0,
        row1: r1,
        ..Default::default()
    };
    let (jobs, wg) = job_table([spec(0, 200), spec(200, 201), spec(201, 600)], 300, 128);
    assert_eq!(
        jobs.iter().map(|j| j.wg_start).collect::<Vec<_>>(),
        [0, 6, 9]
    );
    assert_eq!(wg, 6 + 3 + 4 * 3);
}

#[test]
fn fused_packs_every_rank_into_one_dispatch() {
    let c = config(Collective::ReduceScatter, ReduceVia::Update);
    let (plan, l) = lowered(&c);
    let rec = l.fused.as_ref().unwrap();
    let passes: Vec<&Pass> = rec.passes().collect();
    assert_eq!(passes.len(), 1);
    assert_eq!(passes[0].ops.len(), plan.ops.len());
    check_dispatch(&l, &passes[0].dispatches[0]);
    // Every GEMM op's tiles are in the one dispatch.
    let tiles: u32 = plan
        .ops
        .iter()
        .filter(|o| o.kind == Kind::Gemm)
        .map(|o| o.bumps)
        .sum();
    let d = passes[0].dispatches[0];
    match l.bindings[d.binding].params {
        Params::Gemm(p) => assert_eq!(p.total_wg, tiles),
        other => panic!("fused params {other:?}"),
    }
    // Spares by default: ranks x the busiest transfer's pieces (the link's 3 workgroups at most).
    assert!(d.workgroups > tiles && d.workgroups <= tiles + 3 * c.ranks as u32);
    // A and B of every rank go in, every output chunk and counter comes back.
    let copies = rec
        .commands
        .iter()
        .filter(|c| matches!(c, Command::Copy { .. }))
        .count();
    let outs = l.locs.iter().filter(|l| l.buf == Buf::Out).count();
    assert_eq!(copies, 2 * c.ranks + 2 * outs);
    let land = lowered(&config(Collective::ReduceScatter, ReduceVia::Land)).1;
    assert!(land.fused.unwrap_err().contains("update"));
    let mut small = TARGET;
    small.max_binding = 1024;
    let ch = Chunking::new(c.shape.m, c.ranks, c.chunks).unwrap();
    let s = Schedule::new(c.collective, &ch);
    let e = lower(&c, &ch, &s, &plan, small).fused.unwrap_err();
    assert!(e.contains("max_storage_buffer_binding_size"), "{e}");
}

/// Fused mode's reduce-scatter lowered with 5 spares of their own beside a GEMM grid of 2, triggered
/// by `trigger`: the config, plan, chunking, schedule, lowering and tuning, for a test to lower again.
fn own_spares(
    trigger: super::fused::Trigger,
) -> (
    Config,
    Plan,
    Chunking,
    Schedule,
    Lowered,
    super::fused::FusedTuning,
) {
    let c = config(Collective::ReduceScatter, ReduceVia::Update);
    let (plan, l) = lowered(&c);
    let ch = Chunking::new(c.shape.m, c.ranks, c.chunks).unwrap();
    let s = Schedule::new(c.collective, &ch);
    let tuning = super::fused::FusedTuning {
        pieces: None,
        spares: Some(5),
        polls: 9,
        pause: 0,
        window: None,
        spare_dispatch: super::fused::SpareDispatch::Own,
        spares_first: false,
        grid: 2,
        help: super::fused::Help::Idle,
        trigger,
        land: false,
    };
    (c, plan, ch, s, l, tuning)
}

#[test]
fn fused_header_carries_the_pause_and_auto_spares_follow_the_busiest_transfer_alone() {
    let (c, plan, ch, s, mut l, tuning) = own_spares(super::fused::Trigger::Spares);
    let tuning = super::fused::FusedTuning {
        pieces: Some(2),
        spares: None,
        pause: 77,
        ..tuning
    };
    let rec = super::fused::lower_fused_with(&mut l, &c, &ch, &s, &plan, tuning).unwrap();
    let fwd: Vec<super::fused::Forward> = uploaded(&l, "fused forward table");
    let header = fwd.last().unwrap();
    assert_eq!(
        (header.pc0, header.len),
        (77, tuning.polls),
        "the header's pc0 is the idle spares' pause"
    );
    // Every spare dispatch (beside the GEMM, and the finisher) is ranks x the busiest transfer's
    // pieces: the header's pause is not a transfer's pieces.
    let spares: Vec<u32> = rec
        .passes()
        .flat_map(|p| p.dispatches.iter())
        .filter(|d| matches!(d.kernel, Kernel::Spares { .. }))
        .map(|d| d.workgroups)
        .collect();
    assert!(
        !spares.is_empty() && spares.iter().all(|&w| w == c.ranks as u32 * 2),
        "{spares:?}"
    );
}

/// The table and job table one fused lowering uploads (`lowered` made one before it: the last).
fn uploaded<T: bytemuck::Pod>(l: &Lowered, label: &str) -> Vec<T> {
    let bytes = l
        .pool
        .iter()
        .rfind(|b| b.label == label)
        .and_then(|b| b.init.clone())
        .unwrap_or_else(|| panic!("{label} is uploaded"));
    bytemuck::pod_collect_to_vec(&bytes)
}

#[test]
fn fused_last_hops_land_in_inboxes_tile_by_tile() {
    use super::fused::Forward;
    let (c, plan, ch, s, mut l, tuning) = own_spares(super::fused::Trigger::Spares);
    let landing = super::fused::FusedTuning {
        pieces: Some(2),
        land: true,
        ..tuning
    };
    let rec = super::fused::lower_fused_with(&mut l, &c, &ch, &s, &plan, landing).unwrap();
    let fwd: Vec<Forward> = uploaded(&l, "fused forward table");
    let jobs: Vec<crate::gemm::Job> = uploaded(&l, "fused jobs");
    let (m, n, nch) = (c.shape.m, c.shape.n, ch.count());
    let chunks = c.ranks * nch;
    let header = fwd.last().unwrap();
    assert_eq!(
        (
            header.inboxes as usize,
            header.land,
            header.into,
            header.tiles,
            header.g0
        ),
        (chunks, 128, 128, n as u32, 0),
        "the header: the first inbox, BM, BN, the output's columns, the tile order"
    );
    // One inbox per rank and chunk of its own shard (2 per rank): the ring's last hops.
    let inboxes = &fwd[chunks..fwd.len() - 1];
    assert_eq!(inboxes.len(), c.ranks * c.chunks);
    let counters = |label: &str| {
        l.pool
            .iter()
            .rfind(|b| b.label == label)
            .map(|b| b.bytes)
            .unwrap()
    };
    let words = (counters("fused trackers and transfer queue (all ranks)") / 4) as u32;
    let mut states: Vec<(u32, u32)> = Vec::new();
    let mut regions: Vec<(u32, u32)> = Vec::new();
    for (i, b) in inboxes.iter().enumerate() {
        let into = b.into as usize;
        let (p, x) = (into / nch, into % nch);
        assert_eq!(ch.shard_of(x), p, "inbox {i} lands in its rank's own chunk");
        assert_eq!(b.len as usize, ch.rows(x).len() * n);
        assert_eq!(
            b.tiles as usize,
            crate::shapes::tiles(ch.rows(x).len(), n, 128)
        );
        // The one action into it: a copy with no gate; nothing reduces into the own chunk itself.
        let to_inbox: Vec<(u32, u32)> = fwd[..chunks]
            .iter()
            .flat_map(|f| [(f.to0, f.op0, f.g0), (f.to1, f.op1, f.g1)])
            .filter(|a| a.0 == (chunks + i) as u32)
            .map(|a| (a.1, a.2))
            .collect();
        assert_eq!(to_inbox, [(2, 0)], "inbox {i}");
        assert!(fwd[..chunks]
            .iter()
            .all(|f| f.to0 != b.into && f.to1 != b.into));
        // Its tiles record themselves: the one job of that chunk carries the landing state.
        let marked: Vec<u32> = jobs
            .iter()
            .filter(|j| j.land != 0)
            .filter(|j| j.land == b.land)
            .map(|j| j.counter)
            .collect();
        assert_eq!(marked, [b.into]);
        states.push((b.land - 1, b.land - 1 + 2 + b.tiles));
        regions.push((b.off, b.off + b.len));
    }
    assert_eq!(jobs.iter().filter(|j| j.land != 0).count(), inboxes.len());
    // Inboxes past every rank's output, landing states inside the counters, none overlapping.
    for (v, lo, hi) in [
        (&mut states, 9 * fwd.len() as u32, words),
        (&mut regions, (c.ranks * m * n) as u32, u32::MAX),
    ] {
        v.sort();
        assert!(v[0].0 >= lo && v.last().unwrap().1 <= hi, "{v:?}");
        assert!(v.windows(2).all(|w| w[0].1 <= w[1].0), "{v:?}");
    }
    assert!(counters("fused outputs (all ranks)") >= u64::from(regions.last().unwrap().1) * 4);
    // Every landed tile counts as a piece of the work the spares wait for.
    let pieces: u32 = fwd[..chunks]
        .iter()
        .flat_map(|f| [(f.to0, f.pc0), (f.to1, f.pc1)])
        .filter(|a| a.0 != u32::MAX)
        .map(|a| a.1)
        .sum();
    let tiles: u32 = inboxes.iter().map(|b| b.tiles).sum();
    assert_eq!(header.off, pieces + tiles);
    // The report's bytes: each landed hop writes its inbox and the landing reads it, 2 chunks more
    // than the reduce it replaces.
    let own: u64 = inboxes.iter().map(|b| u64::from(b.len) * 4).sum();
    assert_eq!(l.fused_extra_bytes, 2 * own);
    // The spares that watch land; the pipeline is built with LAND.
    assert!(rec
        .passes()
        .flat_map(|p| p.dispatches.iter())
        .any(|d| d.kernel
            == Kernel::Spares {
                watch: true,
                land: true
            }));
    // Off, where the epilogue triggers (only watching spares land), or where no reduce goes into a
    // chunk produced last (the direct reduce-scatter: its owners produce their own chunks first):
    // no inbox.
    use super::fused::Trigger::{Epilogue, Spares};
    for (collective, land, trigger) in [
        (Collective::ReduceScatter, false, Spares),
        (Collective::ReduceScatter, true, Epilogue),
        (Collective::DirectReduceScatter, true, Spares),
    ] {
        let c = Config { collective, ..c };
        let (plan, mut l) = lowered(&c);
        let s = Schedule::new(collective, &ch);
        let t = super::fused::FusedTuning {
            land,
            trigger,
            ..landing
        };
        super::fused::lower_fused_with(&mut l, &c, &ch, &s, &plan, t).unwrap();
        let fwd: Vec<Forward> = uploaded(&l, "fused forward table");
        let jobs: Vec<crate::gemm::Job> = uploaded(&l, "fused jobs");
        assert_eq!(fwd.len(), chunks + 1, "{collective:?} land {land}");
        assert_eq!(fwd.last().unwrap().inboxes, u32::MAX);
        assert!(jobs.iter().all(|j| j.land == 0));
        assert_eq!(l.fused_extra_bytes, 0);
    }
}

#[test]
fn fused_spares_of_their_own_bind_second_views_of_what_the_gemm_writes() {
    let (c, plan, ch, s, mut l, tuning) = own_spares(super::fused::Trigger::Epilogue);
    let rec = super::fused::lower_fused_with(&mut l, &c, &ch, &s, &plan, tuning).unwrap();
    let pass = rec.passes().next().unwrap();
    let [gemm, spares] = pass.dispatches[..] else {
        panic!("{:?}", pass.dispatches)
    };
    for d in [&gemm, &spares] {
        check_dispatch(&l, d);
    }
    assert!(matches!(gemm.kernel, Kernel::Fused { grid: true, .. }));
    assert_eq!(
        (spares.kernel, spares.workgroups),
        (
            Kernel::Spares {
                watch: false,
                land: false,
            },
            5
        )
    );
    // The GEMM's dispatch holds its grid alone; the spares bind the same resources, except that
    // what the GEMM writes (the output's windows, the counters) is a second view of the same pool
    // buffer, marked for the executor to alias.
    let (g, sp) = (&l.bindings[gemm.binding], &l.bindings[spares.binding]);
    match g.params {
        Params::Gemm(p) => assert_eq!((p.grid_wg, gemm.workgroups), (2, 2)),
        other => panic!("{other:?}"),
    }
    let mut aliased = Vec::new();
    for (a, b) in g.resources.iter().zip(&sp.resources) {
        match (a.buffer(), b.buffer()) {
            (Some(Buffer::Pool(i)), Some(Buffer::View(j, 1))) => {
                assert!(i == j && l.pool[i].views >= 1);
                aliased.push(i);
            }
            _ => assert_eq!(a, b),
        }
    }
    aliased.sort_unstable();
    aliased.dedup();
    // The output (both windows) and the counters; never the operands or tables.
    assert_eq!(aliased.len(), 2, "{aliased:?}");
    // GEMM workgroups that never help need spares sure to run after the GEMM, and some spares.
    for (spare_dispatch, spares) in [
        (super::fused::SpareDispatch::Gemm, Some(5)),
        (super::fused::SpareDispatch::Own, Some(0)),
    ] {
        let never = super::fused::FusedTuning {
            spare_dispatch,
            spares,
            help: super::fused::Help::Never,
            ..tuning
        };
        let e = super::fused::lower_fused_with(&mut l, &c, &ch, &s, &plan, never).unwrap_err();
        assert!(e.contains("T3_FUSED_HELP=never"), "{e}");
    }
}

#[test]
fn fused_spares_first_watch_the_tracked_gemm_per_stage_and_run_of_ranks_through_views_of_their_own()
{
    let (c, plan, ch, s, mut l, tuning) = own_spares(super::fused::Trigger::Spares);
    // Each rank's output is 2400 x 300 f32 (2.88 MB): two ranks to a window of 6 MB.
    let window = 6_000_000u64;
    let first = super::fused::FusedTuning {
        spares_first: true,
        grid: 0,
        window: Some(window as u32),
        ..tuning
    };
    let rec = super::fused::lower_fused_with(&mut l, &c, &ch, &s, &plan, first).unwrap();
    let pass = rec.passes().next().unwrap();
    let d = &pass.dispatches;
    let spares = d[0];
    assert_eq!(
        spares.kernel,
        Kernel::Spares {
            watch: true,
            land: false,
        }
    );
    assert_eq!(d[d.len() - 1], spares, "the finisher after everything");
    let gemms = &d[1..d.len() - 1];
    let nch = ch.count();
    let stage_of = |p: usize, x: usize| {
        s.production[p]
            .iter()
            .find(|&&(_, y)| y == x)
            .map(|&(st, _)| st)
            .unwrap()
    };
    let mut stages: Vec<usize> = s.production.iter().flatten().map(|&(st, _)| st).collect();
    stages.sort_unstable();
    stages.dedup();
    assert_eq!(
        gemms.len(),
        stages.len() * 2,
        "a dispatch per stage and run of two ranks"
    );
    let writes = |b: usize| {
        let r = &l.bindings[b].resources;
        (r[0].buffer().unwrap(), r[4].buffer().unwrap())
    };
    let mut seen_writes = vec![writes(spares.binding)];
    let mut produced = Vec::new();
    let mut last_stage = 0;
    for g in gemms {
        check_dispatch(&l, g);
        assert_eq!(
            g.kernel,
            Kernel::Fused {
                split_b: false,
                split_c: false,
                grid: false,
                watched: true
            }
        );
        // No two dispatches write the output or the counters through one buffer object: wgpu puts
        // a barrier between any two that do.
        let w = writes(g.binding);
        assert!(
            seen_writes.iter().all(|v| v.0 != w.0 && v.1 != w.1),
            "{w:?} in {seen_writes:?}"
        );
        seen_writes.push(w);
        let b = &l.bindings[g.binding];
        let Params::Gemm(p) = b.params else {
            panic!("gemm params")
        };
        let Resource::Window(out) = b.resources[0] else {
            panic!("{:?}", b.resources[0])
        };
        assert!(out.offset % 256 == 0 && out.bytes <= window, "{out:?}");
        let Some(Buffer::Pool(t)) = b.resources[5].buffer() else {
            panic!("job table")
        };
        let table: &[crate::gemm::Job] = bytemuck::cast_slice(l.pool[t].init.as_ref().unwrap());
        let jobs = &table[p.job_base as usize..(p.job_base + p.n_jobs) as usize];
        // One stage, one run of ranks, in stagger order; workgroups numbered from 0 in the
        // dispatch; every row stored inside the dispatch's window at the rank's place.
        let mut wg = 0;
        for j in jobs {
            let (rank, x) = (j.counter as usize / nch, j.counter as usize % nch);
            let st = stage_of(rank, x);
            assert!(st >= last_stage, "stagger order");
            last_stage = st;
            assert_eq!(
                stage_of(
                    jobs[0].counter as usize / nch,
                    jobs[0].counter as usize % nch
                ),
                st
            );
            assert_eq!(
                rank / 2,
                jobs[0].counter as usize / nch / 2,
                "one run of ranks"
            );
            assert_eq!(j.wg_start, wg);
            wg += crate::shapes::tiles((j.row1 - j.row0) as usize, c.shape.n, TARGET.tile_n) as u32;
            let at =
                |row: u32| out.offset / 4 + u64::from(j.c_off) + u64::from(row) * u64::from(p.ldc);
            assert_eq!(
                at(0),
                (rank * c.shape.m * c.shape.n) as u64,
                "rank {rank}'s place"
            );
            assert!((u64::from(j.c_off) + u64::from(j.row1) * u64::from(p.ldc)) * 4 <= out.bytes);
            produced.push(j.counter);
        }
        assert_eq!((wg, p.total_wg), (g.workgroups, g.workgroups));
    }
    produced.sort_unstable();
    assert_eq!(
        produced,
        (0..(c.ranks * nch) as u32).collect::<Vec<_>>(),
        "every chunk once"
    );
    // Views: one for the spares, one per GEMM dispatch past the first.
    for w in [seen_writes[1].0, seen_writes[1].1] {
        let Buffer::Pool(i) = w else { panic!("{w:?}") };
        assert_eq!(l.pool[i].views, gemms.len());
    }
}

#[test]
fn fused_spares_as_the_trigger_watch_a_tracked_gemm_and_a_finisher_follows_them() {
    let (c, plan, ch, s, mut l, tuning) = own_spares(super::fused::Trigger::Spares);
    let rec = super::fused::lower_fused_with(&mut l, &c, &ch, &s, &plan, tuning).unwrap();
    let pass = rec.passes().next().unwrap();
    let [gemm, spares, finisher] = pass.dispatches[..] else {
        panic!("{:?}", pass.dispatches)
    };
    for d in [&gemm, &spares, &finisher] {
        check_dispatch(&l, d);
    }
    assert!(matches!(
        gemm.kernel,
        Kernel::Fused {
            grid: true,
            watched: true,
            ..
        }
    ));
    // The finisher is the spare pipeline on the spares' views, so wgpu orders it after them.
    assert_eq!(
        (spares.kernel, spares.workgroups),
        (
            Kernel::Spares {
                watch: true,
                land: false,
            },
            5
        )
    );
    assert_eq!(finisher, spares);
    // The GEMM stores into the output's second window from the header's element on.
    let Params::Gemm(p) = l.bindings[gemm.binding].params else {
        panic!("fused params")
    };
    assert_eq!(p.c_split, (TARGET.max_binding / 256 * 256 / 4) as u32);
    // Without spares beside the GEMM the finisher alone moves every piece, as many as auto spares.
    let alone = super::fused::FusedTuning {
        spares: Some(0),
        ..tuning
    };
    let rec = super::fused::lower_fused_with(&mut l, &c, &ch, &s, &plan, alone).unwrap();
    let pass = rec.passes().next().unwrap();
    let [_, finisher] = pass.dispatches[..] else {
        panic!("{:?}", pass.dispatches)
    };
    assert_eq!(
        finisher.kernel,
        Kernel::Spares {
            watch: true,
            land: false,
        }
    );
    assert!(finisher.workgroups >= c.ranks as u32, "{finisher:?}");
}

#[test]
fn fused_modes_own_sequential_run_is_its_gemm_then_its_transfers_on_the_same_buffers() {
    for trigger in [
        super::fused::Trigger::Spares,
        super::fused::Trigger::Epilogue,
    ] {
        let (c, plan, ch, s, mut l, tuning) = own_spares(trigger);
        let rec = super::fused::lower_fused_with(&mut l, &c, &ch, &s, &plan, tuning).unwrap();
        let mode_gemm = rec.passes().next().unwrap().dispatches[0];
        let own: Vec<&Pass> = l.fused_sequential.passes().collect();
        let [gemm, transfers] = own[..] else {
            panic!("{own:?}")
        };
        // The mode's GEMM as the watched GEMM (no trigger in it), on the same binding and grid.
        let [g] = gemm.dispatches[..] else {
            panic!("{gemm:?}")
        };
        assert_eq!(g.binding, mode_gemm.binding);
        assert_eq!(g.workgroups, mode_gemm.workgroups);
        assert!(
            matches!(
                g.kernel,
                Kernel::Fused {
                    watched: true,
                    grid: true,
                    ..
                }
            ),
            "{g:?}"
        );
        // Then the finisher alone, on the GEMM's own binding (not the aliased views): wgpu's barrier
        // orders it after the GEMM, so nothing overlaps.
        let [f] = transfers.dispatches[..] else {
            panic!("{transfers:?}")
        };
        assert_eq!(
            (f.kernel, f.binding),
            (
                Kernel::Spares {
                    watch: true,
                    land: false,
                },
                g.binding
            )
        );
        assert_eq!(f.workgroups, 5, "the mode's spares");
        check_dispatch(&l, &f);
        // Packed like the mode, inputs copied in and the trackers cleared first.
        let copies = |r: &Recording| {
            r.commands
                .iter()
                .take_while(|c| !matches!(c, Command::Pass(_)))
                .cloned()
                .collect::<Vec<_>>()
        };
        assert_eq!(copies(&l.fused_sequential), copies(&rec));
        // Spares in the GEMM's dispatch are GEMM workgroups: the finisher gets the auto count.
        let in_gemm = super::fused::FusedTuning {
            spare_dispatch: super::fused::SpareDispatch::Gemm,
            help: super::fused::Help::Always,
            ..tuning
        };
        super::fused::lower_fused_with(&mut l, &c, &ch, &s, &plan, in_gemm).unwrap();
        let auto = l.fused_sequential.passes().nth(1).unwrap().dispatches[0];
        assert!(
            auto.workgroups >= c.ranks as u32 && auto.workgroups != 5,
            "{auto:?}"
        );
    }
}

#[test]
fn fused_mode_takes_the_paying_defaults_where_the_multiprocessors_are_known() {
    // The defaults (`config`'s fused knobs are all unset), whatever this process's environment.
    let c = config(Collective::ReduceScatter, ReduceVia::Update);
    let ch = Chunking::new(c.shape.m, c.ranks, c.chunks).unwrap();
    let s = Schedule::new(c.collective, &ch);
    let plan = Plan::new(&s, &ch, c.shape.n, TARGET.tile_n, c.via);
    let known = Target {
        sms: Some(3),
        gemm_per_sm: 2,
        ..TARGET
    };
    let l = lower(&c, &ch, &s, &plan, known);
    let tuning = l.fused_tuning.expect("fused mode lowers");
    assert_eq!(
        tuning,
        // The SIMT GEMM's configuration does not follow the transfers' weight.
        super::fused::FusedTuning::paying(3, 2, c.link, 0.0),
        "{tuning:?}"
    );
    let pass = l.fused.as_ref().unwrap().passes().next().unwrap().clone();
    let kinds: Vec<Kernel> = pass.dispatches.iter().map(|d| d.kernel).collect();
    assert!(
        matches!(
            kinds[..],
            [
                Kernel::Spares {
                    watch: true,
                    land: true,
                },
                Kernel::Fused {
                    watched: true,
                    grid: false,
                    split_b: false,
                    split_c: false,
                },
                Kernel::Spares {
                    watch: true,
                    land: true,
                }
            ]
        ),
        "{kinds:?}"
    );
    let Params::Gemm(p) = l.bindings[pass.dispatches[1].binding].params else {
        panic!("fused params")
    };
    assert_eq!(
        (pass.dispatches[0].workgroups, pass.dispatches[1].workgroups),
        (6, p.total_wg),
        "two spares per SM (3 SMs) first, then the tracked GEMM a workgroup per tile"
    );
    assert_eq!(p.grid_wg, 0);
    // Beside the cooperative GEMM (one per SM) the grid follows the GEMM's flops per byte its
    // transfers move: K = 19 (13 flop/B) leaves an eighth of 16 SMs to spares, 32 each and two
    // beside each GEMM workgroup; K = 4000 (2700 flop/B) keeps every SM and three spares per SM.
    let coop = Target {
        sms: Some(16),
        gemm_per_sm: 1,
        ..TARGET
    };
    for (k, grid, spares) in [(19, 14, 2 * 14 + 32 * 2), (4000, 16, 3 * 16)] {
        let c = Config {
            shape: Shape::new(c.shape.m, c.shape.n, k).unwrap(),
            ..c
        };
        let l = lower(&c, &ch, &s, &plan, coop);
        let t = l.fused_tuning.expect("fused mode lowers");
        assert_eq!((t.grid, t.spares), (grid, Some(spares)), "K {k}: {t:?}");
        // No landing beside the cooperative GEMM: its transfers lag the link already, and landing
        // adds the inbox's traffic.
        assert!(!t.land, "K {k}");
    }
    // Unknown: the triggering epilogue with spares in the GEMM's dispatch, as before.
    let l = lower(&c, &ch, &s, &plan, TARGET);
    let t = l.fused_tuning.unwrap();
    assert_eq!(
        (t.trigger, t.spare_dispatch, t.grid),
        (
            super::fused::Trigger::Epilogue,
            super::fused::SpareDispatch::Gemm,
            0
        )
    );
}

#[test]
fn fused_binds_b_and_the_output_in_two_windows_past_one_binding() {
    // 4 ranks of 40x3000x19: packed A 71 KiB, packed B 1.5 MiB, outputs 1.8 MiB, against 1 MiB
    // bindings: A in one, B and the output in two windows each.
    let c = Config {
        shape: Shape::new(40, 3000, 19).unwrap(),
        chunks: 1,
        ..config(Collective::ReduceScatter, ReduceVia::Update)
    };
    let ch = Chunking::new(c.shape.m, c.ranks, c.chunks).unwrap();
    let s = Schedule::new(c.collective, &ch);
    let plan = Plan::new(&s, &ch, c.shape.n, TARGET.tile_n, c.via);
    let mut t = TARGET;
    t.max_binding = 1 << 20;
    let l = lower(&c, &ch, &s, &plan, t);
    let rec = l.fused.as_ref().unwrap();
    let d = rec.passes().next().unwrap().dispatches[0];
    let b = &l.bindings[d.binding];
    let Params::Gemm(p) = b.params else {
        panic!("fused params {:?}", b.params)
    };
    assert_eq!(p.b_split, (1 << 20) / 4, "elements of B's first window");
    let window = |r: &Resource| match r {
        Resource::Window(s) => (s.offset, s.bytes),
        other => panic!("not a window: {other:?}"),
    };
    // Bindings 3 and 8: B's windows, the second starting where the first ends.
    let (lo, hi) = (window(&b.resources[3]), window(&b.resources[8]));
    assert_eq!(lo, (0, 1 << 20));
    assert_eq!(hi.0, 1 << 20);
    assert!(hi.1 > 0 && hi.1 <= 1 << 20);
    // Twice the binding is the most either may be.
    t.max_binding = 1 << 19;
    let e = lower(&c, &ch, &s, &plan, t).fused.unwrap_err();
    assert!(e.contains("packed"), "{e}");
}

#[test]
fn ops_on_several_devices_split_at_device_boundaries() {
    for c in Collective::ALL {
        for via in [ReduceVia::Update, ReduceVia::Land, ReduceVia::Forward] {
            let cfg = Config {
                ranks: 5,
                chunks: 3,
                ..config(c, via)
            };
            let (plan, placement, links, lowered) = placed(&cfg, 3, |d| d != 1);
            for (i, op) in plan.ops.iter().enumerate() {
                let on: Vec<(usize, Option<Half>)> = lowered
                    .iter()
                    .enumerate()
                    .filter_map(|(d, l)| l.ops[i].as_ref().map(|o| (d, o.half.map(|h| h.0))))
                    .collect();
                let src = match op.kind {
                    Kind::Gemm => op.dst,
                    Kind::Copy { src } | Kind::Reduce { src } => src,
                };
                let (from, to) = (placement.device(src.rank), placement.device(op.dst.rank));
                if from == to {
                    assert_eq!(on, [(to, None)], "{c} {via:?} op {i}: on its device, whole");
                    assert!(links.of_op[i].is_none());
                    continue;
                }
                assert_eq!(
                    on,
                    if from < to {
                        vec![(from, Some(Half::Send)), (to, Some(Half::Receive))]
                    } else {
                        vec![(to, Some(Half::Receive)), (from, Some(Half::Send))]
                    },
                    "{c} {via:?} op {i}"
                );
                let cr = links.of_op[i].unwrap();
                let spec = &links.links[cr.link];
                assert_eq!((spec.from, spec.to), (from, to));
                assert!(cr.slot < spec.slots && spec.slots <= MAX_SLOTS);
                assert!(cr.bytes <= spec.capacity && cr.bytes == op.elems * 4);
                // The send half bumps nothing and writes the outbox; the receive half reads the
                // inbox and bumps the destination's tracker.
                let (send_op, recv_op) =
                    (lowered[from].ops[i].unwrap(), lowered[to].ops[i].unwrap());
                check_dispatch(&lowered[from], &send_op.dispatch);
                check_dispatch(&lowered[to], &recv_op.dispatch);
                // A send half that sums a second source (a forward reduce's step after the first)
                // runs the pipeline with it; the receive half only adds what arrived.
                let send_acc = op.acc.is_some();
                assert!(
                    matches!(send_op.dispatch.kernel, Kernel::Step { acc, .. } if acc == send_acc)
                );
                assert!(matches!(
                    recv_op.dispatch.kernel,
                    Kernel::Step { acc: false, .. }
                ));
                let send = &lowered[from].bindings[send_op.dispatch.binding];
                let recv = &lowered[to].bindings[recv_op.dispatch.binding];
                let lb = |end| Resource::Buffer(Buffer::Link(LinkBox::of(cr, end)));
                assert!(matches!(send.params, Params::Step(p) if p.bump == 0 && p.n_wg == 3));
                assert_eq!(send.resources[0], lb(End::Outbox));
                assert!(matches!(recv.params, Params::Step(p) if p.bump == 1 && p.has_acc == 0));
                assert_eq!(recv.resources[2], lb(End::Inbox));
                assert_eq!(recv.resources[3], Resource::Buffer(Buffer::Tracker(op.dst)));
                // Staged ends copy through the mapped buffers; mapped ones copy nothing.
                assert_eq!(lowered[from].drain(&[i]).len(), usize::from(from == 1));
                assert_eq!(lowered[to].land(&[i]).len(), usize::from(to == 1));
            }
            // A slot is handed on only to a later step of the same link, in plan order.
            for (i, cr) in links.of_op.iter().enumerate() {
                if let Some(cr) = cr {
                    if let Some(a) = cr.after {
                        let prev = links.of_op[a].unwrap();
                        assert!(a < i && (prev.link, prev.slot) == (cr.link, cr.slot));
                    }
                }
            }
            // Every device's trackers are its ranks' own.
            for (d, l) in lowered.iter().enumerate() {
                assert!(l.locs.iter().all(|loc| placement.device(loc.rank) == d));
                assert!(l.fused.is_err());
            }
        }
    }
}

#[test]
fn an_unthrottled_link_sends_on_the_host_send_budget() {
    // Send halves write host memory, which HOST_SEND_WORKGROUPS saturate: an unthrottled link gives
    // them that many, the receive halves (reading their own memory) as many as the chunk needs.
    let cfg = Config {
        link: Link::Unthrottled,
        ..config(Collective::AllReduce, ReduceVia::Update)
    };
    let (plan, _, links, lowered) = placed(&cfg, 2, |_| TARGET.host_mapped);
    let workgroups =
        |l: &Lowered, i: usize| match l.bindings[l.ops[i].unwrap().dispatch.binding].params {
            Params::Step(p) => p.n_wg,
            _ => panic!("a step"),
        };
    let mut crossing = 0;
    for (i, cr) in links.of_op.iter().enumerate() {
        let Some(cr) = cr else { continue };
        crossing += 1;
        let need = Link::Unthrottled.workgroups((plan.ops[i].elems as u32).div_ceil(4));
        assert!(
            need > HOST_SEND_WORKGROUPS,
            "the chunk needs more than the budget"
        );
        assert_eq!(workgroups(&lowered[cr.from], i), HOST_SEND_WORKGROUPS);
        assert_eq!(workgroups(&lowered[cr.to], i), need);
    }
    assert!(crossing > 0);
}

#[test]
fn a_gemm_stages_trackers_gather_in_neighbouring_slots() {
    // Eight ranks, one chunk each: a GEMM stage bumps one tracker per rank, which the trigger loop
    // reads back together; in rank-major slots they would take eight gather dispatches.
    let mut c = config(Collective::ReduceScatter, ReduceVia::Forward);
    c.ranks = 8;
    c.chunks = 1;
    let (plan, l) = lowered(&c);
    let mut order = l.gather_order.clone();
    order.sort_by_key(|loc| (loc.rank, loc.chunk, loc.buf as usize));
    let mut locs = l.locs.clone();
    locs.sort_by_key(|loc| (loc.rank, loc.chunk, loc.buf as usize));
    assert_eq!(order, locs, "every tracker gathered once");
    for stage in 0..l.stages {
        let bumped: Vec<Loc> = plan
            .ops
            .iter()
            .filter(|o| o.kind == Kind::Gemm && o.stage == stage)
            .map(|o| o.dst)
            .collect();
        assert_eq!(bumped.len(), 8);
        let (dispatches, _) = l.counters_of(&bumped);
        assert!(dispatches.len() <= 2, "stage {stage}: {}", dispatches.len());
        let words: Vec<u32> =
            (0..(4 * l.gather.len() * crate::gather::PER_DISPATCH) as u32).collect();
        // Each tracker's counter read as its slot: the stage's eight take consecutive ones.
        let mut slots = l.counter_values(&bumped, bytemuck::cast_slice(&words));
        slots.sort_unstable();
        assert!(
            slots.windows(2).all(|w| w[1] == w[0] + 1),
            "stage {stage}: slots {slots:?}"
        );
    }
}

#[test]
fn fused_knobs_resolve_against_the_device_as_their_variables_did() {
    use crate::config::fused::{FusedOptions, Help, Pieces, SpareDispatch, Trigger};
    let resolve = |o: FusedOptions, sms: Option<u32>| {
        let t = Target {
            sms,
            gemm_per_sm: 1,
            ..TARGET
        };
        super::fused::FusedTuning::resolve(&o, &t, Link::Workgroups(16), 300.0)
    };
    let paying = super::fused::FusedTuning::paying(132, 1, Link::Workgroups(16), 300.0);
    let auto = FusedOptions::default();
    // Unset: the paying defaults where the multiprocessors are known, else the epilogue's.
    assert_eq!(resolve(auto, Some(132)).unwrap(), paying);
    let plain = resolve(auto, None).unwrap();
    assert_eq!(
        (
            plain.trigger,
            plain.spare_dispatch,
            plain.grid,
            plain.pieces
        ),
        (Trigger::Epilogue, SpareDispatch::Gemm, 0, None)
    );
    // The epilogue chosen keeps every other knob off the paying defaults.
    let epilogue = FusedOptions {
        trigger: Some(Trigger::Epilogue),
        ..auto
    };
    assert_eq!(resolve(epilogue, Some(132)).unwrap(), plain);
    // A knob's word differs from unset where the paying defaults apply: `link` pieces, `off` grid.
    let words = FusedOptions {
        pieces: Pieces::Link,
        grid: Some(0),
        ..auto
    };
    let w = resolve(words, Some(132)).unwrap();
    assert_eq!((w.pieces, w.grid), (None, 0));
    assert_eq!(w.spares, paying.spares);
    // No aliased views: the spares never go first.
    let unaliased = FusedOptions {
        alias: false,
        ..auto
    };
    assert!(!resolve(unaliased, Some(132)).unwrap().spares_first);
    // Values out of range, and combinations the device rules out, are named.
    for (o, name) in [
        (
            FusedOptions {
                window: Some(255),
                ..auto
            },
            "T3_FUSED_WINDOW",
        ),
        (
            FusedOptions {
                help: Help::Never,
                spare_dispatch: Some(SpareDispatch::Own),
                ..auto
            },
            "T3_FUSED_HELP",
        ),
    ] {
        let e = resolve(o, Some(132)).unwrap_err();
        assert!(e.contains(name), "{e}");
    }
}
