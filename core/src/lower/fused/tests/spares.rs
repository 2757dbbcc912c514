//! CPU-only tests of fused mode's spare workgroups: their own dispatch over second views of what the
//! GEMM writes, dispatched first per stage and run of ranks, and as the trigger with a finisher.

use super::lowering::own_spares;
use crate::lower::tests::{check_dispatch, TARGET};
use crate::lower::*;

#[test]
fn fused_spares_of_their_own_bind_second_views_of_what_the_gemm_writes() {
    let (c, plan, ch, s, mut l, tuning) = own_spares(crate::lower::fused::Trigger::Epilogue);
    let rec = crate::lower::fused::lower_fused_with(&mut l, &c, &ch, &s, &plan, tuning)
        .unwrap()
        .recording;
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
        (crate::lower::fused::SpareDispatch::Gemm, Some(5)),
        (crate::lower::fused::SpareDispatch::Own, Some(0)),
    ] {
        let never = crate::lower::fused::FusedTuning {
            spare_dispatch,
            spares,
            help: crate::lower::fused::Help::Never,
            ..tuning
        };
        let e =
            crate::lower::fused::lower_fused_with(&mut l, &c, &ch, &s, &plan, never).unwrap_err();
        assert!(e.contains("--fused help=never"), "{e}");
    }
}

#[test]
fn fused_spares_first_watch_the_tracked_gemm_per_stage_and_run_of_ranks_through_views_of_their_own()
{
    let (c, plan, ch, s, mut l, tuning) = own_spares(crate::lower::fused::Trigger::Spares);
    // Each rank's output is 2400 x 300 f32 (2.88 MB): two ranks to a window of 6 MB.
    let window = 6_000_000u64;
    let first = crate::lower::fused::FusedTuning {
        spares_first: true,
        grid: 0,
        window: Some(window as u32),
        ..tuning
    };
    let rec = crate::lower::fused::lower_fused_with(&mut l, &c, &ch, &s, &plan, first)
        .unwrap()
        .recording;
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
        let table: &[crate::kernels::gemm::Job] =
            bytemuck::cast_slice(l.pool[t].init.as_ref().unwrap());
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
    let (c, plan, ch, s, mut l, tuning) = own_spares(crate::lower::fused::Trigger::Spares);
    let rec = crate::lower::fused::lower_fused_with(&mut l, &c, &ch, &s, &plan, tuning)
        .unwrap()
        .recording;
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
    let alone = crate::lower::fused::FusedTuning {
        spares: Some(0),
        ..tuning
    };
    let rec = crate::lower::fused::lower_fused_with(&mut l, &c, &ch, &s, &plan, alone)
        .unwrap()
        .recording;
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
fn fused_dispatches_per_run_of_ranks_bind_their_own_operands_past_one_binding() {
    use crate::config::Config;
    use crate::lower::fused::packing::Packing;
    use crate::lower::fused::Trigger;
    use crate::plan::{Plan, ReduceVia};
    use crate::schedule::{Collective, Schedule};
    use crate::shapes::{Chunking, Shape};
    // 4 ranks of 600x40x700: each rank's padded A weighs more than its B or output, and a binding
    // holds two ranks' A, not four.
    let c = Config {
        shape: Shape::new(600, 40, 700).unwrap(),
        chunks: 1,
        ..crate::lower::tests::config(Collective::ReduceScatter, ReduceVia::Update)
    };
    let ch = Chunking::new(c.shape.m, c.ranks, c.chunks).unwrap();
    let s = Schedule::new(c.collective, &ch);
    let plan = Plan::new(&s, &ch, c.shape.n, TARGET.tile_n, c.via);
    let packing = Packing::new(&c, &ch);
    let rank_a = packing.a_sizes()[0];
    let mut t = TARGET;
    t.max_binding = 2 * rank_a + 512;
    assert!(packing.a_bytes > t.max_binding && packing.b_bytes <= t.max_binding);
    // One dispatch binding every rank's A cannot run, and says what can.
    let mut l = lower(&c, &ch, &s, &plan, t);
    let e = l.fused.as_ref().unwrap_err();
    assert!(
        e.contains("packed A") && e.contains("trigger=spares"),
        "{e}"
    );
    let (.., tuning) = own_spares(Trigger::Spares);
    let runs = crate::lower::fused::FusedTuning {
        spares_first: true,
        grid: 0,
        ..tuning
    };
    let rec = crate::lower::fused::lower_fused_with(&mut l, &c, &ch, &s, &plan, runs)
        .unwrap()
        .recording;
    // Where the copies pack each rank's A and B.
    let packed = |of: Buffer| {
        rec.commands
            .iter()
            .find_map(|c| match c {
                Command::Copy {
                    src,
                    dst,
                    dst_offset,
                } if src.buffer == of => Some((*dst, *dst_offset)),
                _ => None,
            })
            .unwrap()
    };
    let d = &rec.passes().next().unwrap().dispatches;
    let (spares, gemms) = (d[0], &d[1..d.len() - 1]);
    // The spares never read the operands: their binding's are stubs.
    for r in [2, 3, 8] {
        let Resource::Window(stub) = l.bindings[spares.binding].resources[r] else {
            panic!("{:?}", l.bindings[spares.binding].resources[r])
        };
        assert_eq!((stub.offset, stub.bytes), (0, 16));
    }
    let mut seen = vec![false; c.ranks];
    let mut buffers = Vec::new();
    for g in gemms {
        check_dispatch(&l, g);
        let b = &l.bindings[g.binding];
        let window = |r: usize| match b.resources[r] {
            Resource::Window(s) => s,
            other => panic!("{other:?}"),
        };
        let (a, bw) = (window(2), window(3));
        for w in [a, bw] {
            assert!(w.offset % 256 == 0 && w.bytes <= t.max_binding, "{w:?}");
        }
        buffers.extend([a.buffer, bw.buffer]);
        let Params::Gemm(p) = b.params else {
            panic!("gemm params")
        };
        let Some(Buffer::Pool(i)) = b.resources[5].buffer() else {
            panic!("job table")
        };
        let table: &[crate::kernels::gemm::Job] =
            bytemuck::cast_slice(l.pool[i].init.as_ref().unwrap());
        // Each job reads its rank's A and B where the copies put them, inside its run's windows.
        for j in &table[p.job_base as usize..(p.job_base + p.n_jobs) as usize] {
            let rank = j.counter as usize / ch.count();
            for (w, off, of, bytes) in [
                (a, j.a_off, Buffer::A(rank), rank_a),
                (bw, j.b_off, Buffer::B(rank), packing.sizes[rank].1),
            ] {
                let at = w.offset + u64::from(off) * 4;
                assert_eq!(packed(of), (w.buffer, at), "rank {rank}'s {of:?}");
                assert!(
                    at + bytes <= w.offset + w.bytes,
                    "rank {rank}'s {of:?} in its window"
                );
            }
            seen[rank] = true;
        }
    }
    assert_eq!(seen, [true; 4]);
    // A buffer of A and one of B for each run (dispatches of one run share them).
    buffers.sort_unstable_by_key(|b| format!("{b:?}"));
    buffers.dedup();
    assert_eq!(buffers.len(), 4, "two runs of two ranks: {buffers:?}");
}
