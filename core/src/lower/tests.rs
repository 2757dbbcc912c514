//! CPU-only tests of lowering: pass contents, the step lead, arbitration, job tables; ops across
//! devices in devices.rs, standalone work in standalone.rs, fused mode's beside its wing
//! (fused/tests/).

mod devices;
mod standalone;

use super::*;
use crate::config::{Config, StepLead};
use crate::kernels::step::Link;
use crate::placement::Placement;
use crate::plan::{Kind, Plan, ReduceVia};
use crate::schedule::{Collective, Schedule};
use crate::shapes::{Chunking, Dtype, Shape};

pub(super) const TARGET: Target = Target {
    device: 0,
    tile_n: 128,
    tile_group: 0,
    max_workgroups_per_dim: 65535,
    uniform_align: 256,
    max_buffer: 1 << 30,
    max_binding: 1 << 30,
    max_storage_buffers: 8,
    host_mapped: true,
    loop_limit: None,
    in_order: false,
    sms: None,
    gemm_per_sm: 1,
};

pub(super) fn config(collective: Collective, via: ReduceVia) -> Config {
    Config {
        chunks: 2,
        collective,
        via,
        link: Link::Workgroups(3),
        step_lead: StepLead::Workgroups(0),
        ..Config::new(Shape::new(2400, 300, 19).unwrap(), 4)
    }
}

/// `c`'s plan with its ranks placed on `devices` devices, the links they need, and each device's
/// lowering (`mapped(d)`: whether device d maps its link ends in place).
pub(super) fn placed(
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
            lower_on(c, &ch, &s, &plan, t, share, true)
        })
        .collect();
    (plan, placement, links, lowered)
}

pub(super) fn lowered(c: &Config) -> (Plan, Lowered) {
    let ch = Chunking::new(c.shape.m, c.ranks, c.chunks).unwrap();
    let s = Schedule::new(c.collective, &ch);
    let plan = Plan::new(&s, &ch, c.shape.n, TARGET.tile_n, c.via);
    let l = lower(c, &ch, &s, &plan, TARGET);
    (plan, l)
}

/// The workgroups each dispatch names are the ones its params fold, and its kernel fits its
/// binding's layout.
pub(super) fn check_dispatch(l: &Lowered, d: &Dispatch) {
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
            Group::Fused | Group::Fused4,
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
                // In four windows the second buffer's two continue the first's, from its start.
                if b.group == Group::Fused4 {
                    let (Resource::Window(w2), Resource::Window(w3)) =
                        (b.resources[9], b.resources[10])
                    else {
                        panic!("fused output windows {:?}", b.resources)
                    };
                    assert_eq!((w2.offset, w3.buffer), (0, w2.buffer));
                    assert_ne!(w2.buffer, lo.buffer);
                    assert!(w3.bytes == 16 || w3.offset == w2.bytes, "{w2:?} {w3:?}");
                }
            } else {
                assert!(u64::from(p.c_split) * 4 >= lo.bytes, "{p:?} {lo:?}");
            }
            assert_eq!(grid, p.grid_wg != 0, "a grid only on the GRID pipeline");
            assert!(if grid { p.grid_wg } else { p.total_wg } <= d.workgroups);
            let (x, _) = crate::shapes::fold(d.workgroups, TARGET.max_workgroups_per_dim);
            assert_eq!(p.dispatch_x, x);
        }
        (Kernel::Spares { .. }, Group::Fused | Group::Fused4, Params::Gemm(_)) => {
            assert!(d.workgroups > 0)
        }
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
    let mut staged = false;
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
            // Sequential: the GEMM pass before every step pass.
            let kinds: Vec<bool> = l
                .sequential
                .passes()
                .map(|p| p.ops.iter().all(|&i| l.ops[i].as_ref().unwrap().gemm))
                .collect();
            assert!(
                kinds.windows(2).all(|w| w[0] >= w[1]),
                "{c} {via:?}: {kinds:?}"
            );
            // Every GEMM op in the first pass, whatever the stages: a pass per stage would drain the
            // GPU at each boundary, a cost the baseline must not carry.
            staged |= l.stages > 1;
            assert_eq!(kinds.iter().filter(|&&g| g).count(), 1, "{c} {via:?}");
            let gemms = (0..plan.ops.len()).filter(|&i| plan.ops[i].kind == Kind::Gemm);
            assert_eq!(
                l.sequential.passes().next().unwrap().ops,
                gemms.collect::<Vec<_>>()
            );
            // T_gemm's recordings: the sequential GEMM pass alone, through either pipeline.
            for (rec, store) in [
                (&l.gemm_tracked, StoreMode::Store),
                (&l.gemm_untracked, StoreMode::Untracked),
            ] {
                let gemm_passes: Vec<&Pass> = l.sequential.passes().take(1).collect();
                assert_eq!(rec.passes().count(), 1);
                for (p, q) in rec.passes().zip(gemm_passes) {
                    assert_eq!(p.ops, q.ops);
                    assert!(p.dispatches.iter().all(|d| d.kernel == Kernel::Gemm(store)));
                }
            }
        }
    }
    assert!(staged, "no collective lowered more than one GEMM stage");
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
            (0..(4 * l.gather.len() * crate::kernels::gather::PER_DISPATCH) as u32).collect();
        // Each tracker's counter read as its slot: the stage's eight take consecutive ones.
        let mut slots = l.counter_values(&bumped, bytemuck::cast_slice(&words));
        slots.sort_unstable();
        assert!(
            slots.windows(2).all(|w| w[1] == w[0] + 1),
            "stage {stage}: slots {slots:?}"
        );
    }
}
