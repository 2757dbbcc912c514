//! The state machine step by step: scenarios on two devices whose every submission is checked.

use super::*;

/// Two ranks of `per_rank` chunks on two devices under `collective` (update), over zero-copy
/// links: the plan, its placement and links, and its GEMM stages.
fn zero_copy_pair(collective: Collective, per_rank: usize) -> (Plan, Placement, HostLinks, usize) {
    zero_copy_ranks(collective, per_rank, 2)
}

/// [`zero_copy_pair`]'s two ranks on `devices` devices (one: both ranks on it).
fn zero_copy_ranks(
    collective: Collective,
    per_rank: usize,
    devices: usize,
) -> (Plan, Placement, HostLinks, usize) {
    let ch = Chunking::new(16 * per_rank, 2, per_rank).unwrap();
    let schedule = Schedule::new(collective, &ch);
    let plan = Plan::new(&schedule, &ch, 8, 128, ReduceVia::Update);
    let placement = Placement::new(2, devices).unwrap();
    let mut links = HostLinks::new(&plan, &placement);
    for l in &mut links.links {
        l.zero_copy = true;
    }
    (plan, placement, links, schedule.gemm_stages())
}

/// Submission `s` of device `d` completed with its GEMMs' counters at their marks, on zero-copy
/// links: nothing for the host to copy.
fn complete(plan: &Plan, m: &mut Machine, d: usize, s: &Submission) {
    let read = gemm_reads(plan, s);
    assert!(m.completed(d, read).is_empty(), "zero-copy: no host copy");
}

#[test]
fn a_zero_copy_chunk_lands_when_its_senders_submission_completes() {
    // Two ranks on two devices, one chunk each way, the link zero-copy.
    let (plan, placement, links, stages) = zero_copy_pair(Collective::ReduceScatter, 1);
    let gate = Gate::Tracked(HostGrain::Stage);
    let mut m = Machine::new(&plan, &placement, &links, stages, (gate, 2, false));
    // Each device's first GEMM stage (the chunk it sends), completed.
    for d in 0..2 {
        let s = m.next(d).expect("a GEMM stage");
        complete(&plan, &mut m, d, &s);
    }
    // The last GEMM stage and the send half go together.
    let second: Vec<Submission> = (0..2).map(|d| m.next(d).expect("a GEMM stage")).collect();
    for s in &second {
        assert_eq!((s.sends.len(), s.receives.len()), (1, 0), "{s:?}");
    }
    // Device 1 done, device 0's send still running: device 1 may not read that chunk yet.
    complete(&plan, &mut m, 1, &second[1]);
    assert!(
        m.next(1).is_none(),
        "a chunk read before its sender's submission completed"
    );
    // Device 0 done: each receiver takes the other's chunk.
    complete(&plan, &mut m, 0, &second[0]);
    for (d, s) in second.iter().enumerate() {
        let r = m.next(1 - d).expect("the receive half goes");
        assert_eq!(
            r.receives,
            s.sends,
            "device {} receives what device {d} sent",
            1 - d
        );
    }
}

#[test]
fn the_last_gemm_stage_waits_for_the_sends_it_would_otherwise_leave_alone() {
    // Two ranks, four chunks each, all-reduce: each rank's first GEMM stage makes the chunks it
    // sends. With two submissions allowed, queueing the last stage at once would leave those sends
    // nothing to go beside: on two devices it waits for the first stage; on one it does not.
    for devices in [2, 1] {
        let (plan, placement, links, stages) = zero_copy_ranks(Collective::AllReduce, 4, devices);
        let gate = Gate::Tracked(HostGrain::Stage);
        let mut m = Machine::new(&plan, &placement, &links, stages, (gate, 2, false));
        let gemms = |s: &Submission| {
            s.passes
                .iter()
                .flatten()
                .filter(|&&i| plan.ops[i].kind == Kind::Gemm)
                .count()
        };
        let first: Vec<Submission> = (0..devices).map(|d| m.next(d).unwrap()).collect();
        if devices == 1 {
            let second = m.next(0).expect("one device: the next stage goes at once");
            assert!(gemms(&second) > 0 && second.sends.is_empty(), "{second:?}");
            continue;
        }
        for (d, s) in first.iter().enumerate() {
            assert_eq!((gemms(s), s.sends.len()), (4, 0), "{s:?}");
            assert!(
                m.next(d).is_none(),
                "device {d}'s last stage queued at once"
            );
        }
        for (d, s) in first.iter().enumerate() {
            let read = gemm_reads(&plan, s);
            m.completed(d, read);
            let last = m.next(d).expect("the last stage, once the first completed");
            assert_eq!(gemms(&last), 4, "{last:?}");
            assert_eq!(
                last.sends.len(),
                4,
                "the first stage's chunks go beside it: {last:?}"
            );
            assert_eq!(last.passes[0].len(), 8, "in its first pass: {last:?}");
        }
    }
}

#[test]
fn a_send_goes_with_the_gemm_making_its_chunk_and_the_chunk_lands_beside_the_last_stage() {
    // Two ranks on two devices, four chunks each, all-reduce over zero-copy links, the device's
    // trigger: each device's first GEMM stage makes the chunks it sends, and their sends go in its
    // pass, waiting for its counters. Each device's last stage waits for the other's chunks to be
    // in host memory, then lands them beside its GEMM work; their receive halves only put once
    // that stage completed.
    let (plan, placement, links, stages) = zero_copy_pair(Collective::AllReduce, 4);
    let gate = Gate::Tracked(HostGrain::Stage);
    let mut m = Machine::new(&plan, &placement, &links, stages, (gate, 2, true));
    let first: Vec<Submission> = (0..2).map(|d| m.next(d).unwrap()).collect();
    for (d, s) in first.iter().enumerate() {
        assert_eq!((s.watching.len(), s.sends.len()), (4, 4), "{s:?}");
        assert!(
            s.sends.iter().all(|i| s.passes[0].contains(i)),
            "the sends go in their GEMM's pass: {s:?}"
        );
        assert!(
            m.next(d).is_none(),
            "device {d}'s last stage before its chunks are in"
        );
    }
    complete(&plan, &mut m, 0, &first[0]);
    assert!(
        m.next(0).is_none(),
        "device 0 goes on before device 1's chunks are in"
    );
    complete(&plan, &mut m, 1, &first[1]);
    let last: Vec<Submission> = (0..2).map(|d| m.next(d).unwrap()).collect();
    for (d, s) in last.iter().enumerate() {
        assert_eq!(s.ahead, first[1 - d].sends, "device {d} lands ahead: {s:?}");
        assert!(s.receives.is_empty() && s.watching.is_empty(), "{s:?}");
    }
    for (d, s) in last.iter().enumerate() {
        complete(&plan, &mut m, d, s);
    }
    for (d, s) in first.iter().enumerate() {
        let r = m.next(1 - d).expect("the puts go");
        assert_eq!(r.receives, s.sends, "{r:?}");
        assert_eq!(r.early, s.sends, "landed ahead: only puts: {r:?}");
    }
}

#[test]
fn a_send_whose_wait_ran_out_goes_again() {
    // Device 0's first send gives up: it is not the receiver's to land, and goes in device 0's
    // next submission as the host triggers it.
    let (plan, placement, links, stages) = zero_copy_pair(Collective::ReduceScatter, 4);
    let gate = Gate::Tracked(HostGrain::Stage);
    let mut m = Machine::new(&plan, &placement, &links, stages, (gate, 2, true));
    let s = m.next(0).unwrap();
    let lost = s.watching[0];
    m.resend(0, lost);
    let read = gemm_reads(&plan, &s);
    m.completed(0, read);
    assert!(!m.landed(lost), "a send that gave up landed");
    let again = m.next(0).expect("the send again");
    assert!(
        again.sends.contains(&lost) && !again.watching.contains(&lost),
        "{again:?}"
    );
}

#[test]
fn a_chunk_made_in_its_senders_last_stage_holds_no_stage_back() {
    // An all-gather's one GEMM stage makes the chunks each device sends, and a direct
    // reduce-scatter's last one: the other device's last stage goes at once rather than idle until
    // they are in host memory (a chunk made in the sender's last stage could not be there sooner).
    for collective in [Collective::AllGather, Collective::DirectReduceScatter] {
        let (plan, placement, links, stages) = zero_copy_pair(collective, 4);
        let gate = Gate::Tracked(HostGrain::Stage);
        let mut m = Machine::new(&plan, &placement, &links, stages, (gate, 2, true));
        let mut watching = 0;
        for d in 0..2 {
            while let Some(s) = m.next(d) {
                watching += s.watching.len();
            }
        }
        let gemms_left = m.gemm_stages.iter().map(|q| q.len()).sum::<usize>();
        assert_eq!(gemms_left, 0, "{collective}: a GEMM stage held back");
        assert!(watching > 0, "{collective}: no send watched its GEMM");
    }
}

#[test]
fn gated_on_every_gemm_a_device_submits_its_whole_gemm_at_once() {
    // Sequential across devices: a submission per GEMM stage would drain each GPU between stages,
    // a cost its baseline must not carry. Four chunks per rank, all-reduce: two stages a device.
    let (plan, placement, links, stages) = zero_copy_pair(Collective::AllReduce, 4);
    assert!(stages > 1);
    let mut m = Machine::new(
        &plan,
        &placement,
        &links,
        stages,
        (Gate::AfterGemms, 2, false),
    );
    for d in 0..2 {
        let s = m.next(d).expect("the GEMM");
        let gemm: Vec<usize> = (0..plan.ops.len())
            .filter(|&i| {
                plan.ops[i].kind == Kind::Gemm && placement.device(plan.ops[i].dst.rank) == d
            })
            .collect();
        assert_eq!(s.passes.first(), Some(&gemm), "device {d}: {s:?}");
        assert!(
            s.sends.is_empty(),
            "device {d}: a step before every GEMM completed"
        );
        // Nothing more until that GEMM completes: no second GEMM submission, no step.
        assert!(m.next(d).is_none(), "device {d}: more after its whole GEMM");
    }
}
