//! CPU tests of standalone work's lowering: the tracked GEMM's job table, thresholds, recordings
//! and grid, and the calibrated step's bindings, between pool buffers or a link slot's.

use super::*;
use crate::kernels::gemm::GemmParams;
use crate::kernels::Put;
use crate::shapes::{fold, TILE};

/// The lowering tests' target, folding dispatches past 7 workgroups.
const TARGET: Target = Target {
    max_workgroups_per_dim: 7,
    ..super::TARGET
};

fn spec(m: usize, n: usize, chunks: usize, order: Option<Vec<usize>>) -> TrackedGemmSpec {
    TrackedGemmSpec {
        shape: Shape::new(m, n, 37).unwrap(),
        dtype: Dtype::F32,
        chunks,
        order,
        grid: None,
    }
}

fn jobs(t: &TrackedLowering) -> Vec<Job> {
    let Resource::Buffer(Buffer::Pool(i)) = t.lowered.bindings[0].resources[5] else {
        panic!("the job table is a pool buffer");
    };
    bytemuck::pod_collect_to_vec(t.lowered.pool[i].init.as_ref().unwrap())
}

fn gemm(t: &TrackedLowering, binding: usize) -> GemmParams {
    match t.lowered.bindings[binding].params {
        Params::Gemm(p) => p,
        p => panic!("{p:?}"),
    }
}

/// Each workgroup's tile as the kernel finds it (the last job starting at or before it), in
/// workgroup order: (counter, first row, tile column).
fn tiles_walked(t: &TrackedLowering, n: usize) -> Vec<(u32, usize, usize)> {
    let (jobs, cols) = (jobs(t), n.div_ceil(TARGET.tile_n));
    (0..t.total_wg)
        .map(|w| {
            let j = jobs.iter().rev().find(|j| j.wg_start <= w).unwrap();
            let local = (w - j.wg_start) as usize;
            let row = j.row0 as usize + local / cols * TILE;
            assert!(row < j.row1 as usize, "workgroup {w} past its job");
            (j.counter, row, local % cols)
        })
        .collect()
}

#[test]
fn the_job_table_covers_every_tile_once_in_the_chunk_order() {
    let (m, n) = (700, 300);
    let order = vec![2, 0, 3, 1];
    let t = lower_tracked_gemm(&spec(m, n, 4, Some(order.clone())), TARGET).unwrap();
    let walked = tiles_walked(&t, n);
    let mut counters: Vec<u32> = walked.iter().map(|w| w.0).collect();
    counters.dedup();
    assert_eq!(
        counters,
        order.iter().map(|&c| c as u32).collect::<Vec<_>>()
    );
    let mut cells: Vec<(usize, usize)> = walked.iter().map(|w| (w.1, w.2)).collect();
    cells.sort();
    let rows: Vec<usize> = (0..4)
        .flat_map(|c| t.chunking.rows(c).step_by(TILE))
        .collect();
    let mut want: Vec<(usize, usize)> = rows
        .iter()
        .flat_map(|&r| (0..n.div_ceil(TARGET.tile_n)).map(move |col| (r, col)))
        .collect();
    want.sort();
    assert_eq!(cells, want, "every tile once");
    for (c, &th) in t.thresholds.iter().enumerate() {
        let stores = walked.iter().filter(|w| w.0 == c as u32).count();
        assert_eq!(th as usize, stores, "chunk {c}: threshold = its tiles");
    }
    let p = gemm(&t, 0);
    assert_eq!((p.total_wg, p.n_jobs, p.grid_wg), (t.total_wg, 4, 0));
    assert_eq!(
        (p.dispatch_x, t.total_wg),
        (6, 24),
        "folded into the target's width"
    );
}

#[test]
fn each_mode_runs_its_pipeline_after_an_optional_clear() {
    let t = lower_tracked_gemm(&spec(300, 600, 3, None), TARGET).unwrap();
    for (mode, kernel) in [
        (StoreMode::Store, Kernel::Gemm(StoreMode::Store)),
        (StoreMode::Update, Kernel::Gemm(StoreMode::Update)),
        (StoreMode::Untracked, Kernel::Gemm(StoreMode::Untracked)),
    ] {
        let cmds = t.commands(mode, true);
        assert_eq!(cmds[0], Command::Clear(t.tracker));
        assert_eq!(&cmds[1..], t.commands(mode, false));
        let [Command::Pass(p)] = t.commands(mode, false) else {
            panic!("{cmds:?}");
        };
        assert_eq!(p.dispatches.len(), 1);
        assert_eq!(
            (p.dispatches[0].kernel, p.dispatches[0].workgroups),
            (kernel, t.total_wg)
        );
    }
    assert_eq!(t.grid_wg, None);
    assert_eq!(t.lowered.pool.len(), 5);
    assert!(t
        .lowered
        .bindings
        .iter()
        .flat_map(|b| &b.resources)
        .all(|r| matches!(r, Resource::Params | Resource::Buffer(Buffer::Pool(_)))));
}

#[test]
fn the_grid_stores_through_its_own_binding() {
    let g = |asked, limit| {
        let s = TrackedGemmSpec {
            grid: Some(asked),
            ..spec(300, 600, 3, None)
        };
        lower_tracked_gemm(
            &s,
            Target {
                loop_limit: limit,
                ..TARGET
            },
        )
        .unwrap()
    };
    let t = g(4, None);
    assert_eq!(t.total_wg, 3 * 5);
    assert_eq!(t.grid_wg, Some(4));
    let [Command::Pass(p)] = t.commands(StoreMode::Store, false) else {
        panic!()
    };
    let d = p.dispatches[0];
    assert_eq!(
        (d.kernel, d.workgroups, d.binding),
        (Kernel::GemmGrid, 4, 1)
    );
    let p = gemm(&t, 1);
    assert_eq!((p.grid_wg, p.dispatch_x, p.total_wg), (4, 4, 15));
    let [Command::Pass(u)] = t.commands(StoreMode::Update, false) else {
        panic!()
    };
    assert_eq!(u.dispatches[0].binding, 0, "the other modes per tile");
    assert_eq!(
        g(40, None).grid_wg,
        Some(15),
        "at most a workgroup per tile"
    );
    // A driver's loop cap raises a grid too small to finish its tiles inside it.
    assert!(g(1, Some(2000)).grid_wg.unwrap() > 1);
}

#[test]
fn a_step_per_budget_through_its_own_binding() {
    let links = [Link::Workgroups(3), Link::Unthrottled];
    let puts = [Put::Add, Put::Store];
    let s = lower_step(
        &StepSpec {
            label: "step",
            dst: StepEnd::Pool,
            src: StepEnd::Pool,
            bytes: 1 << 20,
            puts: &puts,
            links: &links,
        },
        TARGET,
    );
    assert_eq!((s.recordings.len(), s.lowered.bindings.len()), (4, 2));
    for (p, &put) in puts.iter().enumerate() {
        for (i, link) in links.iter().enumerate() {
            let r = s.recording(p, i);
            let [Command::Pass(pass)] = &r.commands[..] else {
                panic!("{r:?}")
            };
            let d = pass.dispatches[0];
            let want = link.workgroups(1 << 16);
            assert_eq!(
                (d.kernel, d.binding, d.workgroups),
                (
                    Kernel::Step {
                        put,
                        acc: false,
                        wait: Wait::No,
                    },
                    i,
                    want,
                )
            );
            let Params::Step(sp) = s.lowered.bindings[i].params else {
                panic!()
            };
            assert_eq!(
                (sp.len4, sp.n_wg, sp.bump, sp.has_acc),
                (1 << 16, want, 0, 0)
            );
            assert_eq!(sp.dispatch_x, fold(want, 7).0);
        }
    }
    let bytes: Vec<u64> = s.lowered.pool.iter().map(|b| b.bytes).collect();
    assert_eq!(bytes, [1 << 20, 1 << 20, 16]);
    let r = &s.lowered.bindings[0].resources;
    assert_eq!(
        (r[0], r[2], r[3]),
        (
            Resource::Buffer(s.dst),
            Resource::Buffer(s.src),
            Resource::Buffer(s.counters)
        )
    );
    assert!([s.dst, s.src, s.counters]
        .iter()
        .all(|b| matches!(b, Buffer::Pool(_))));
}

#[test]
fn a_step_binds_the_link_slot_its_spec_names() {
    let outbox = LinkBox {
        link: 0,
        slot: 1,
        end: End::Outbox,
    };
    let inbox = LinkBox {
        end: End::Inbox,
        ..outbox
    };
    let step = |dst, src| {
        lower_step(
            &StepSpec {
                label: "link step",
                dst,
                src,
                bytes: 48,
                puts: &[Put::Store],
                links: &[Link::Workgroups(2)],
            },
            TARGET,
        )
    };
    // The sender's write: its payload, a pool buffer, into the outbox.
    let w = step(StepEnd::Link(outbox), StepEnd::Pool);
    assert_eq!(w.dst, Buffer::Link(outbox));
    assert_eq!(w.lowered.pool.len(), 2, "the payload and the counters");
    // The receiver's zero-copy read: the inbox into its landing.
    let r = step(StepEnd::Pool, StepEnd::Link(inbox));
    assert_eq!(r.src, Buffer::Link(inbox));
    let res = &r.lowered.bindings[0].resources;
    assert_eq!(
        (res[0], res[2], res[4]),
        (
            Resource::Buffer(r.dst),
            Resource::Buffer(Buffer::Link(inbox)),
            Resource::Buffer(Buffer::Link(inbox))
        )
    );
    assert_ne!(r.dst, r.counters);
    let Params::Step(sp) = r.lowered.bindings[0].params else {
        panic!()
    };
    assert_eq!((sp.len4, sp.n_wg), (3, Link::Workgroups(2).workgroups(3)));
}

#[test]
fn bad_specs_are_refused() {
    let e = |s: TrackedGemmSpec| lower_tracked_gemm(&s, TARGET).unwrap_err().to_string();
    let said = e(spec(8, 8, 9, None));
    assert!(
        said.contains('9') && said.contains("8 output rows"),
        "{said}"
    );
    for order in [vec![1, 1], vec![0], vec![0, 2], vec![0, 1, 2]] {
        let said = e(spec(8, 8, 2, Some(order.clone())));
        assert!(said.contains("permutation"), "{order:?}: {said}");
    }
    let said = e(TrackedGemmSpec {
        grid: Some(0),
        ..spec(8, 8, 1, None)
    });
    assert!(said.contains("grid"), "{said}");
}
