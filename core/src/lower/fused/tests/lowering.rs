//! CPU-only tests of fused mode's lowering: packing, the forward table and its header, landing, its
//! own sequential run, the paying defaults and the knobs (the spares' views and dispatches: spares.rs).

use crate::config::Config;
use crate::kernels::step::Link;
use crate::lower::tests::{check_dispatch, config, lowered, TARGET};
use crate::lower::*;
use crate::plan::{Buf, Kind, Plan, ReduceVia};
use crate::schedule::{Collective, Schedule};
use crate::shapes::{Chunking, Shape};

#[test]
fn fused_packs_every_rank_into_one_dispatch() {
    let c = config(Collective::ReduceScatter, ReduceVia::Update);
    let (plan, l) = lowered(&c);
    let rec = &l.fused.as_ref().unwrap().recording;
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
pub(super) fn own_spares(
    trigger: crate::lower::fused::Trigger,
) -> (
    Config,
    Plan,
    Chunking,
    Schedule,
    Lowered,
    crate::lower::fused::FusedTuning,
) {
    let c = config(Collective::ReduceScatter, ReduceVia::Update);
    let (plan, l) = lowered(&c);
    let ch = Chunking::new(c.shape.m, c.ranks, c.chunks).unwrap();
    let s = Schedule::new(c.collective, &ch);
    let tuning = crate::lower::fused::FusedTuning {
        pieces: None,
        spares: Some(5),
        polls: 9,
        pause: 0,
        window: None,
        spare_dispatch: crate::lower::fused::SpareDispatch::Own,
        spares_first: false,
        grid: 2,
        help: crate::lower::fused::Help::Idle,
        trigger,
        land: false,
    };
    (c, plan, ch, s, l, tuning)
}

#[test]
fn fused_header_carries_the_pause_and_auto_spares_follow_the_busiest_transfer_alone() {
    let (c, plan, ch, s, mut l, tuning) = own_spares(crate::lower::fused::Trigger::Spares);
    let tuning = crate::lower::fused::FusedTuning {
        pieces: Some(2),
        spares: None,
        pause: 77,
        ..tuning
    };
    let rec = crate::lower::fused::lower_fused_with(&mut l, &c, &ch, &s, &plan, tuning)
        .unwrap()
        .recording;
    let (header, _) = table(&l);
    assert_eq!(
        (header.pause, header.polls),
        (77, tuning.polls),
        "the header carries the idle spares' pause"
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

/// The forward table one fused lowering uploads: its header, then its entries.
fn table(l: &Lowered) -> (crate::lower::ForwardHeader, Vec<crate::lower::Forward>) {
    let bytes: Vec<u8> = uploaded(l, "fused forward table");
    let (header, entries) = bytes.split_at(std::mem::size_of::<crate::lower::ForwardHeader>());
    (
        bytemuck::pod_read_unaligned(header),
        bytemuck::pod_collect_to_vec(entries),
    )
}

#[test]
fn fused_last_hops_land_in_inboxes_tile_by_tile() {
    let (c, plan, ch, s, mut l, tuning) = own_spares(crate::lower::fused::Trigger::Spares);
    let landing = crate::lower::fused::FusedTuning {
        pieces: Some(2),
        land: true,
        ..tuning
    };
    let fused = crate::lower::fused::lower_fused_with(&mut l, &c, &ch, &s, &plan, landing).unwrap();
    let rec = fused.recording;
    let (header, fwd) = table(&l);
    let jobs: Vec<crate::kernels::gemm::Job> = uploaded(&l, "fused jobs");
    let (m, n, nch) = (c.shape.m, c.shape.n, ch.count());
    let chunks = c.ranks * nch;
    assert_eq!(
        (
            header.inboxes as usize,
            header.bm,
            header.bn,
            header.cols,
            header.tile_group
        ),
        (chunks, 128, 128, n as u32, 0),
        "the header: the first inbox, BM, BN, the output's columns, the tile order"
    );
    // One inbox per rank and chunk of its own shard (2 per rank): the ring's last hops.
    let inboxes = &fwd[chunks..];
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
        (&mut states, 9 * (fwd.len() as u32 + 1), words),
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
    assert_eq!(header.pieces, pieces + tiles);
    // The report's bytes: each landed hop writes its inbox and the landing reads it, 2 chunks more
    // than the reduce it replaces.
    let own: u64 = inboxes.iter().map(|b| u64::from(b.len) * 4).sum();
    assert_eq!(fused.extra_bytes, 2 * own);
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
    use crate::lower::fused::Trigger::{Epilogue, Spares};
    for (collective, land, trigger) in [
        (Collective::ReduceScatter, false, Spares),
        (Collective::ReduceScatter, true, Epilogue),
        (Collective::DirectReduceScatter, true, Spares),
    ] {
        let c = Config { collective, ..c };
        let (plan, mut l) = lowered(&c);
        let s = Schedule::new(collective, &ch);
        let t = crate::lower::fused::FusedTuning {
            land,
            trigger,
            ..landing
        };
        let fused = crate::lower::fused::lower_fused_with(&mut l, &c, &ch, &s, &plan, t).unwrap();
        let (header, fwd) = table(&l);
        let jobs: Vec<crate::kernels::gemm::Job> = uploaded(&l, "fused jobs");
        assert_eq!(fwd.len(), chunks, "{collective:?} land {land}");
        assert_eq!(header.inboxes, u32::MAX);
        assert!(jobs.iter().all(|j| j.land == 0));
        assert_eq!(fused.extra_bytes, 0);
    }
}

#[test]
fn fused_modes_own_sequential_run_is_its_gemm_then_its_transfers_on_the_same_buffers() {
    for trigger in [
        crate::lower::fused::Trigger::Spares,
        crate::lower::fused::Trigger::Epilogue,
    ] {
        let (c, plan, ch, s, mut l, tuning) = own_spares(trigger);
        let fused =
            crate::lower::fused::lower_fused_with(&mut l, &c, &ch, &s, &plan, tuning).unwrap();
        let rec = fused.recording;
        let mode_gemm = rec.passes().next().unwrap().dispatches[0];
        let own: Vec<&Pass> = fused.sequential.passes().collect();
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
        assert_eq!(copies(&fused.sequential), copies(&rec));
        // Spares in the GEMM's dispatch are GEMM workgroups: the finisher gets the auto count.
        let in_gemm = crate::lower::fused::FusedTuning {
            spare_dispatch: crate::lower::fused::SpareDispatch::Gemm,
            help: crate::lower::fused::Help::Always,
            ..tuning
        };
        let in_gemm =
            crate::lower::fused::lower_fused_with(&mut l, &c, &ch, &s, &plan, in_gemm).unwrap();
        let auto = in_gemm.sequential.passes().nth(1).unwrap().dispatches[0];
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
    let tuning = l.fused.as_ref().expect("fused mode lowers").tuning;
    assert_eq!(
        tuning,
        // The SIMT GEMM's configuration does not follow the transfers' weight.
        crate::lower::fused::FusedTuning::paying(3, 2, c.link, 0.0),
        "{tuning:?}"
    );
    let pass = &l
        .fused
        .as_ref()
        .unwrap()
        .recording
        .passes()
        .next()
        .unwrap()
        .clone();
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
        let t = l.fused.as_ref().expect("fused mode lowers").tuning;
        assert_eq!((t.grid, t.spares), (grid, Some(spares)), "K {k}: {t:?}");
        // No landing beside the cooperative GEMM: its transfers lag the link already, and landing
        // adds the inbox's traffic.
        assert!(!t.land, "K {k}");
    }
    // Unknown: the triggering epilogue with spares in the GEMM's dispatch, as before.
    let l = lower(&c, &ch, &s, &plan, TARGET);
    let t = l.fused.as_ref().unwrap().tuning;
    assert_eq!(
        (t.trigger, t.spare_dispatch, t.grid),
        (
            crate::lower::fused::Trigger::Epilogue,
            crate::lower::fused::SpareDispatch::Gemm,
            0
        )
    );
}

#[test]
fn fused_binds_b_and_the_output_in_two_windows_past_one_binding() {
    // 4 ranks of 40x3000x19: packed A 71 KiB, packed B 1.5 MiB (ranks of 384 KiB), outputs 1.8 MiB,
    // against 1 MiB bindings: A in one, B and the output in two windows each.
    let c = Config {
        shape: Shape::new(40, 3000, 19).unwrap(),
        chunks: 1,
        ..config(Collective::ReduceScatter, ReduceVia::Update)
    };
    let ch = Chunking::new(c.shape.m, c.ranks, c.chunks).unwrap();
    let s = Schedule::new(c.collective, &ch);
    let plan = Plan::new(&s, &ch, c.shape.n, TARGET.tile_n, c.via);
    let rank_b = super::super::packing::Packing::new(&c, &ch).b_sizes()[0];
    assert_eq!(rank_b, 384 * 1024, "the ranks' B this test assumes");
    let window = |r: &Resource| match r {
        Resource::Window(s) => (s.offset, s.bytes),
        other => panic!("not a window: {other:?}"),
    };
    // B's split, its windows (bindings 3 and 8) and the window each rank's jobs read.
    let lowered_with = |max_binding: u64, knob: Option<u32>, m: usize| {
        let mut t = TARGET;
        t.max_binding = max_binding;
        let c = Config {
            shape: Shape::new(m, 3000, 19).unwrap(),
            fused: crate::config::fused::FusedOptions {
                window: knob,
                ..c.fused
            },
            ..c.clone()
        };
        let ch = Chunking::new(m, c.ranks, c.chunks).unwrap();
        let s = Schedule::new(c.collective, &ch);
        let plan = Plan::new(&s, &ch, c.shape.n, TARGET.tile_n, c.via);
        let l = lower(&c, &ch, &s, &plan, t);
        let fused = l.fused.as_ref().unwrap();
        let d = fused.recording.passes().next().unwrap().dispatches[0];
        let b = &l.bindings[d.binding];
        let Params::Gemm(p) = b.params else {
            panic!("fused params {:?}", b.params)
        };
        let jobs: &[crate::kernels::gemm::Job] = bytemuck::cast_slice(
            l.pool
                .iter()
                .find(|b| b.label == "fused jobs")
                .and_then(|b| b.init.as_deref())
                .unwrap(),
        );
        let mut by_rank = vec![None; c.ranks];
        for j in jobs {
            let rank = j.counter as usize / ch.count();
            assert!(
                by_rank[rank].is_none_or(|w| w == j.b_window),
                "rank {rank}'s jobs read one window"
            );
            by_rank[rank] = Some(j.b_window);
        }
        let windows = (window(&b.resources[3]), window(&b.resources[8]));
        (p.b_split, windows, by_rank)
    };
    // The second window starts at the first rank past the first (rank 2, at 768 KiB), as ranks 2
    // and 3 fit one binding: every rank's tiles read one window.
    let (split, (lo, hi), by_rank) = lowered_with(1 << 20, None, 40);
    assert_eq!(
        split,
        (2 * rank_b / 4) as u32,
        "elements of B before rank 2"
    );
    assert_eq!(lo, (0, 1 << 20));
    assert_eq!(hi, (2 * rank_b, 2 * rank_b));
    assert_eq!(by_rank, [Some(0), Some(0), Some(1), Some(1)]);
    // A first window of 640 KiB (`--fused window`) on 1 MiB bindings (8 output rows, which fit
    // them): ranks 1-3 (1152 KiB) would not fit one binding from rank 1's start, so the second
    // starts where the first ends and rank 1, across both, reads each word from its own.
    let (split, (lo, hi), by_rank) = lowered_with(1 << 20, Some(640 * 1024), 8);
    assert_eq!(split, (640 * 1024 / 4) as u32);
    assert_eq!(lo, (0, 640 * 1024));
    assert_eq!(hi, (640 * 1024, 4 * rank_b - 640 * 1024));
    assert_eq!(by_rank, [Some(0), Some(2), Some(1), Some(1)]);
    // B fitting one binding reads only the first window.
    let (split, _, by_rank) = lowered_with(1 << 21, None, 40);
    assert_eq!(split, u32::MAX);
    assert_eq!(by_rank, [Some(0); 4]);
    // Twice the binding is the most either may be.
    let mut t = TARGET;
    t.max_binding = 1 << 19;
    let e = lower(&c, &ch, &s, &plan, t).fused.unwrap_err();
    assert!(e.contains("packed"), "{e}");
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
        crate::lower::fused::FusedTuning::resolve(&o, &t, Link::Workgroups(16), 300.0)
    };
    let paying = crate::lower::fused::FusedTuning::paying(132, 1, Link::Workgroups(16), 300.0);
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
            "--fused window",
        ),
        (
            FusedOptions {
                help: Help::Never,
                spare_dispatch: Some(SpareDispatch::Own),
                ..auto
            },
            "--fused help",
        ),
    ] {
        let e = resolve(o, Some(132)).unwrap_err();
        assert!(e.contains(name), "{e}");
    }
}

#[test]
fn fused_mode_lowers_every_f32_preset_at_tp_4_and_8_on_an_h200_and_past_it_only_the_outputs_stop_it(
) {
    use crate::workload::{presets, DEFAULT_TOKENS};
    // An H200's limits and multiprocessors, the SIMT GEMM's two workgroups per multiprocessor: the
    // paying defaults there are a dispatch per stage and run of ranks, each binding its own
    // operands (MT-NLG's and PaLM's packed A or B pass a binding or a buffer at TP 4).
    let h200 = Target {
        max_buffer: 4_292_870_144,
        max_binding: 2_147_483_644,
        sms: Some(132),
        gemm_per_sm: 2,
        ..TARGET
    };
    let (mut lowered, mut checked) = (0, 0);
    for p in presets(DEFAULT_TOKENS, 1.0)
        .into_iter()
        .filter(|p| p.tp >= 4)
    {
        let c = Config {
            chunks: 1,
            collective: p.collective,
            ..Config::new(Shape::new(p.m, p.n, p.k).unwrap(), p.tp)
        };
        let ch = Chunking::new(c.shape.m, c.ranks, c.chunks).unwrap();
        let s = Schedule::new(c.collective, &ch);
        let plan = Plan::new(&s, &ch, c.shape.n, h200.tile_n, c.via);
        match lower(&c, &ch, &s, &plan, h200).fused {
            Ok(_) => lowered += usize::from(p.tp == 4),
            // Every rank's packed outputs past the buffer (the spares bind them all), at TP 8 and
            // up on the largest models.
            Err(e) => assert!(
                p.tp >= 8 && e.contains("packed outputs") && e.contains("max_buffer_size"),
                "{}: {e}",
                p.name
            ),
        }
        // With ten storage buffers a stage bound (an H200's Vulkan binds far more), every TP-8
        // preset lowers too: MT-NLG's and PaLM's outputs in four windows of two buffers, no rank's
        // output across the second's start. TP 16 passes even those.
        let many = Target {
            max_storage_buffers: 10,
            ..h200
        };
        let l = lower(&c, &ch, &s, &plan, many);
        match &l.fused {
            Ok(_) if p.tp > 8 => {}
            Ok(_) => {
                let four = l.bindings.iter().any(|b| b.group == Group::Fused4);
                let big = p.tp == 8 && (p.name.starts_with("mtnlg") || p.name.starts_with("palm"));
                assert_eq!(four, big, "{}", p.name);
                checked += usize::from(p.tp == 8);
            }
            Err(e) => assert!(
                p.tp >= 16 && e.contains("past the first buffer"),
                "{}: {e}",
                p.name
            ),
        }
    }
    assert_eq!(checked, 20, "every TP-8 preset");
    assert_eq!(lowered, 20, "every TP-4 preset");
}

/// Packed outputs past two windows of one buffer, on an adapter that binds ten storage buffers a
/// stage: four windows of two buffers, the rank that would cross the second's start beginning
/// there; both buffers cleared, every chunk copied back from the one that holds it, every binding
/// of the four-window layout; refused where the adapter binds eight, naming that limit.
#[test]
fn fused_outputs_past_one_buffer_lie_in_four_windows_of_two_buffers() {
    // 4 ranks of 2400 x 300 f32 outputs (2.88 MB each) in buffers of 8 MiB: ranks 0 and 1 in the
    // first, 2 (which would cross its end) and 3 in the second.
    let c = config(Collective::ReduceScatter, ReduceVia::Update);
    let ch = Chunking::new(c.shape.m, c.ranks, c.chunks).unwrap();
    let s = Schedule::new(c.collective, &ch);
    let plan = Plan::new(&s, &ch, c.shape.n, TARGET.tile_n, c.via);
    let t = Target {
        max_buffer: 8 << 20,
        max_binding: 8 << 20,
        max_storage_buffers: 10,
        ..TARGET
    };
    let l = lower(&c, &ch, &s, &plan, t);
    let rec = &l.fused.as_ref().expect("four windows").recording;
    let window = 4u64 << 20;
    let rank_bytes = (c.shape.m * c.shape.n * 4) as u64;
    assert!(!l.bindings.iter().any(|b| b.group == Group::Fused));
    let whole = &l.bindings[rec.passes().next().unwrap().dispatches[0].binding];
    let windows: Vec<Span> = [0, 7, 9, 10]
        .map(|k| match whole.resources[k] {
            Resource::Window(s) => s,
            other => panic!("window {k}: {other:?}"),
        })
        .into();
    let (first, second) = (windows[0].buffer, windows[2].buffer);
    assert_ne!(first, second);
    let at: Vec<(Buffer, u64)> = windows.iter().map(|w| (w.buffer, w.offset)).collect();
    assert_eq!(
        at,
        [(first, 0), (first, window), (second, 0), (second, window)]
    );
    assert!(windows[..3].iter().all(|w| w.bytes == window));
    // The second buffer's last window reaches its ranks' outputs' end (and the inboxes past it).
    assert!(windows[3].offset + windows[3].bytes >= 2 * rank_bytes);
    let cleared: Vec<Buffer> = rec
        .commands
        .iter()
        .filter_map(|cmd| match cmd {
            Command::Clear(b) => Some(*b),
            _ => None,
        })
        .collect();
    assert!(cleared.contains(&first) && cleared.contains(&second));
    // Every chunk comes back from the buffer its rank lies in, at its offset there.
    for cmd in &rec.commands {
        if let Command::Copy {
            src,
            dst: Buffer::Data(loc),
            ..
        } = cmd
        {
            let at = ch.rows(loc.chunk).start as u64 * c.shape.n as u64 * 4;
            let want = match loc.rank {
                0 | 1 => (first, loc.rank as u64 * rank_bytes + at),
                _ => (second, (loc.rank as u64 - 2) * rank_bytes + at),
            };
            assert_eq!((src.buffer, src.offset), want, "{loc:?}");
        }
    }
    for pass in rec.passes() {
        for d in &pass.dispatches {
            check_dispatch(&l, d);
        }
    }
    // A dispatch per stage and run of ranks (the watched GEMM a workgroup per tile, each rank's
    // output a window of its own): each binds its run's window of the buffer its ranks lie in,
    // and each buffer is bound as itself by the first dispatch into it, through views after.
    use crate::config::fused::{FusedOptions, SpareDispatch, Trigger};
    let per_run = Config {
        fused: FusedOptions {
            trigger: Some(Trigger::Spares),
            spare_dispatch: Some(SpareDispatch::Own),
            grid: Some(0),
            ..FusedOptions::default()
        },
        ..c.clone()
    };
    // Buffers of 10 MiB (the ring's landed hops add an inbox): ranks 0-2 in the first, 3 in the
    // second.
    let t = Target {
        max_buffer: 10 << 20,
        max_binding: 10 << 20,
        ..t
    };
    let l = lower(&per_run, &ch, &s, &plan, t);
    let rec = &l
        .fused
        .as_ref()
        .expect("four windows, a dispatch per run")
        .recording;
    let outs: Vec<Span> = rec
        .passes()
        .flat_map(|p| &p.dispatches)
        .filter(|d| matches!(d.kernel, Kernel::Fused { .. }))
        .map(|d| match l.bindings[d.binding].resources[0] {
            Resource::Window(s) => s,
            other => panic!("{other:?}"),
        })
        .collect();
    assert!(
        outs.len() >= c.ranks,
        "a dispatch per stage and run: {}",
        outs.len()
    );
    let direct: Vec<Buffer> = outs
        .iter()
        .map(|s| s.buffer)
        .filter(|b| matches!(b, Buffer::Pool(_)))
        .collect();
    assert_eq!(direct.len(), 2);
    assert_ne!(direct[0], direct[1]);
    let mut ranks = Vec::new();
    for s in &outs {
        let buffer = match s.buffer {
            Buffer::View(i, _) | Buffer::Pool(i) => Buffer::Pool(i),
            other => panic!("{other:?}"),
        };
        let before = usize::from(buffer != direct[0]) * 3;
        ranks.push(before + (s.offset / rank_bytes) as usize);
        assert!(s.bytes <= 5 << 20, "{s:?}");
    }
    ranks.sort();
    ranks.dedup();
    assert_eq!(ranks, [0, 1, 2, 3]);
    // Every view a binding names is one its pool buffer has.
    for b in &l.bindings {
        for r in &b.resources {
            if let Some(Buffer::View(i, n)) = r.buffer() {
                assert!(n <= l.pool[i].views, "view {n} of {:?}", l.pool[i]);
            }
        }
    }
    let eight = Target {
        max_storage_buffers: 8,
        ..t
    };
    let e = lower(&c, &ch, &s, &plan, eight).fused.unwrap_err();
    assert!(e.contains("max_storage_buffers_per_shader_stage"), "{e}");
}
