//! Fused mode's tuning, table and window arithmetic, on the CPU.

mod lowering;
mod spares;

use super::*;

#[test]
fn transfers_split_into_the_links_pieces_and_the_header_counts_them() {
    let t = |pieces| FusedTuning {
        pieces,
        spares: None,
        polls: 7,
        pause: 0,
        window: None,
        spare_dispatch: SpareDispatch::Gemm,
        spares_first: false,
        grid: 0,
        help: Help::Always,
        trigger: Trigger::Epilogue,
        land: false,
    };
    let big = STEP_WG as usize * PIECE_PER_INVOCATION * 100;
    assert_eq!(t(None).pieces(Link::Workgroups(16), big), 16);
    assert_eq!(t(None).pieces(Link::Unthrottled, big), 100);
    assert_eq!(t(Some(1)).pieces(Link::Workgroups(16), big), 1);
    // Never more pieces than a chunk has work for, never none.
    assert_eq!(t(Some(64)).pieces(Link::Workgroups(16), 5), 1);
    assert_eq!(t(None).pieces(Link::Unthrottled, 1), 1);
    assert_eq!(counter_words(4), 40 + PAUSE_WORDS);
    assert_eq!(fused_window(1 << 31, None), 1 << 31);
    assert_eq!(fused_window(1 << 31, Some(1000)), 768);
    assert_eq!(fused_window(100, Some(1000)), 256);
}

#[test]
fn known_multiprocessors_give_the_paying_configuration() {
    // An H100's 132 SMs, the cooperative kernel (one per SM), the 150 GB/s link's 16 workgroups:
    // the paying configuration (64 pieces of 64 invocations = 16 step workgroups of 256).
    let p = FusedTuning::paying(132, 1, Link::Workgroups(16), 300.0);
    assert_eq!(
        (p.trigger, p.spare_dispatch, p.grid, p.spares, p.pieces),
        (
            Trigger::Spares,
            SpareDispatch::Own,
            132,
            Some(396),
            Some(64)
        )
    );
    // The SIMT kernel holds two per SM: the registers they leave hold two spares per SM,
    // dispatched first, and the GEMM a workgroup per tile after them.
    let simt = FusedTuning::paying(132, 2, Link::Workgroups(16), 300.0);
    assert_eq!(
        (simt.grid, simt.spares, simt.spares_first, p.spares_first),
        (0, Some(264), true, false)
    );
    assert!(simt
        .describe()
        .contains("spares 264 of their own dispatch before the GEMM's; GEMM grid off"));
    assert_eq!(
        (p.pause, simt.pause),
        (32, 128),
        "idle spares pause between polls"
    );
    // Their poll budget shrinks with the pause, so that a spare's whole life (rounds and
    // pauses, in round trips) stays within the unpaused budget's.
    for t in [p, simt] {
        let life = u64::from(t.polls) * u64::from(PAUSE_ROUND + t.pause);
        assert!(life <= (1u64 << 20) * u64::from(PAUSE_ROUND), "{t:?}");
        assert!(t.polls >= (1 << 20) / 10, "{t:?}");
    }
    assert_eq!(paused_polls(1 << 20, 0), 1 << 20);
    assert_eq!(paused_polls(3, 1 << 20), 1);
    // Transfers that weigh about as much as the GEMM: an eighth of the SMs left to spares
    // beside the cooperative GEMM (a full SM of them each, two beside each GEMM workgroup); the
    // SIMT GEMM's configuration does not follow the intensity.
    let light = FusedTuning::paying(132, 1, Link::Workgroups(16), 101.0);
    assert_eq!((light.grid, light.spares), (116, Some(2 * 116 + 32 * 16)));
    assert_eq!(
        FusedTuning::paying(132, 2, Link::Workgroups(16), 101.0),
        simt
    );
    assert_eq!(
        FusedTuning::paying(4, 1, Link::Unthrottled, 300.0).pieces,
        None
    );
    assert_eq!(
        FusedTuning::paying(4, 1, Link::Workgroups(1), 300.0).pieces,
        Some(4)
    );
    let d = p.describe();
    assert!(
        d.contains("trigger the spares")
            && d.contains("spares 396 of their own dispatch")
            && d.contains("GEMM grid 132")
            && d.contains("pieces per transfer 64"),
        "{d}"
    );
}

#[test]
fn spares_poll_well_inside_a_drivers_loop_cap() {
    assert_eq!(polls_within(None, 1 << 14, 96, true, 9), 1 << 14);
    let capped = polls_within(Some(65535), 1 << 14, 96, false, 0);
    // Polls at their longest (every scan over the whole live list) spend half the cap at most,
    // and watching the counters as well.
    assert!(capped > 0 && capped * (2 + 2 * 96) <= 65535 / 2, "{capped}");
    let watching = polls_within(Some(65535), 1 << 14, 96, true, 0);
    assert!(
        watching > 0 && watching * (2 + 4 * 96) <= 65535 / 2,
        "{watching}"
    );
    // An idle spare's pause reads are loop iterations too.
    let pausing = polls_within(Some(65535), 1 << 14, 96, true, 100);
    assert!(
        pausing > 0 && pausing * (2 + 4 * 96 + 100) <= 65535 / 2,
        "{pausing}"
    );
    assert_eq!(polls_within(Some(65535), 3, 96, true, 100), 3);
}

#[test]
fn a_persistent_grid_stays_within_a_drivers_loop_cap() {
    assert_eq!(grid_within(None, 1, 84, 84, 49), 1);
    assert_eq!(
        grid_within(Some(65535), 0, 84, 84, 49),
        0,
        "one per tile: no grid"
    );
    // 7 ranks x 12 chunks: 729 iterations a tile, 44 tiles a workgroup at most.
    let g = grid_within(Some(65535), 1, 84, 84, 49);
    assert_eq!(g, 2);
    assert!(84u32.div_ceil(g) * (4 * (2 + 2 * 84) + 49) <= 65535 / 2);
    assert_eq!(grid_within(Some(65535), 24, 84, 84, 49), 24);
}

#[test]
fn only_a_lone_reduce_into_a_chunk_produced_last_lands() {
    use crate::schedule::{Collective, Step};
    let step = |src, dst, chunk, op| Step {
        stage: 1,
        src,
        dst,
        chunk,
        op,
    };
    let s = Schedule {
        collective: Collective::ReduceScatter,
        ranks: 3,
        // Each rank produces chunk 0, then chunk 1.
        production: vec![vec![(0, 0), (1, 1)]; 3],
        steps: vec![
            // Two reduces into rank 0's chunk 1: neither lands (two landings would add into one
            // tile at once).
            step(1, 0, 1, Op::Reduce),
            step(2, 0, 1, Op::Reduce),
            // The lone reduce into rank 1's chunk 1, produced last: lands.
            step(0, 1, 1, Op::Reduce),
            // Into chunk 0, produced first: keeps its gate; a copy never lands.
            step(0, 2, 0, Op::Reduce),
            step(1, 2, 1, Op::Copy),
        ],
    };
    assert_eq!(landing(&s), [2]);
}

#[test]
fn a_table_index_out_of_bounds_is_refused() {
    let chunk = |off, len, to0| Forward {
        off,
        len,
        at0: 1,
        to0,
        op0: 1,
        pc0: 1,
        to1: NONE,
        ..Default::default()
    };
    let good = [chunk(0, 8, 1), chunk(8, 8, NONE)];
    assert!(check_table(&good, 16, 0).is_ok());
    let e = check_table(&good, 15, 0).unwrap_err();
    assert!(e.contains("counter 1") && e.contains("15 elements"), "{e}");
    let e = check_table(&[chunk(0, 8, 2), chunk(8, 8, NONE)], 16, 0).unwrap_err();
    assert!(e.contains("to 2"), "{e}");
    let mut no_pieces = good;
    no_pieces[0].pc0 = 0;
    assert!(check_table(&no_pieces, 16, 0).is_err());
    // An inbox whose landing state (2 words, then a slot per tile) passes the counters' words,
    // or that lands in no counter.
    let inbox = Forward {
        land: 1 + 10,
        into: 0,
        tiles: 3,
        ..chunk(8, 8, NONE)
    };
    let landed = [chunk(0, 8, 1), inbox];
    assert!(check_table(&landed, 16, 15).is_ok());
    let e = check_table(&landed, 16, 14).unwrap_err();
    assert!(e.contains("inbox 1") && e.contains("14 words"), "{e}");
    let astray = Forward { into: 2, ..inbox };
    assert!(check_table(&[chunk(0, 8, 1), astray], 16, 15).is_err());
}

#[test]
fn a_multiprocessor_count_given_wrong_does_not_crowd_the_device_with_spares() {
    // `--sms 65536`: the paying counts (two or three spares a multiprocessor) capped, so that a
    // tiny run is not left to its timeout with spares polling.
    for gemm_per_sm in [1, 2] {
        let many = FusedTuning::paying(65536, gemm_per_sm, Link::Workgroups(16), 300.0);
        assert_eq!(many.spares, Some(MAX_PAYING_SPARES), "{many:?}");
        let light = FusedTuning::paying(65536, gemm_per_sm, Link::Workgroups(16), 101.0);
        assert_eq!(light.spares, Some(MAX_PAYING_SPARES), "{light:?}");
    }
    // The largest GPUs' counts stay as they were: three a multiprocessor, or twice the GEMM's
    // and 32 on each free one.
    let large = |intensity| FusedTuning::paying(304, 1, Link::Workgroups(16), intensity).spares;
    assert_eq!(
        (large(300.0), large(101.0)),
        (Some(912), Some(2 * 266 + 32 * 38))
    );
}

#[test]
fn outputs_past_two_windows_say_the_windows_reach_not_the_binding_limit() {
    let t = Target {
        max_buffer: 1 << 30,
        max_binding: 1 << 27,
        ..crate::lower::tests::TARGET
    };
    let e = check_windows("packed outputs", 1 << 28, &t, 256).unwrap_err();
    assert!(
        e.contains(
            "over the 134217984 bytes that a window of 256 and a binding of the adapter's \
                    max_storage_buffer_binding_size (134217728) reach"
        ),
        "{e}"
    );
    assert!(check_windows("packed outputs", (1 << 27) + 256, &t, 256).is_ok());
    // Past the buffer, or one binding alone (no window): the adapter's limit, named.
    let e = check_windows("packed outputs", (1 << 30) + 1, &t, 256).unwrap_err();
    assert!(e.contains("max_buffer_size of 1073741824"), "{e}");
    let e = check_windows("packed A", (1 << 27) + 1, &t, 0).unwrap_err();
    assert!(
        e.contains("max_storage_buffer_binding_size of 134217728"),
        "{e}"
    );
}
