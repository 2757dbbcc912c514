//! The trigger loop's rules: which steps are ready, what each half needs, which trackers to read.
//!
//! Each is a function of the plan and the counters last read back: which steps are ready
//! ([`ready`]), which half of a step between devices needs which dependency ([`feeds`]), which
//! trackers are still worth reading ([`wanted`]) and how a stage's GEMM work is cut into
//! submissions ([`chunk_waves`]).

use std::collections::HashMap;

use crate::plan::{Kind, Loc, Plan};

/// The step ops a trigger loop submits next: those not submitted yet whose every dependency that
/// `needs(op, dep)` names is met, either by its buffer counter (as last read back) at the mark that
/// proves it complete, or, for a step already queued where the op runs, by the queue's order
/// (`queued(op, dep)`): a chain of steps on one device follows its queue, while whatever a GEMM
/// produces is tracked (T3's trigger). A step between devices is submitted as its send half, which
/// needs only what wrote its source ([`feeds`]); its receive half waits for the rest.
pub fn ready(
    plan: &Plan,
    counters: &HashMap<Loc, u32>,
    submitted: &[bool],
    needs: impl Fn(usize, usize) -> bool,
    queued: impl Fn(usize, usize) -> bool,
) -> Vec<usize> {
    (0..plan.ops.len())
        .filter(|&i| plan.ops[i].kind != Kind::Gemm && !submitted[i])
        .filter(|&i| {
            plan.ops[i]
                .deps
                .iter()
                .all(|&d| !needs(i, d) || met(plan, counters, d) || queued(i, d))
        })
        .collect()
}

/// Whether dependency `d` of step `i` wrote what the step reads (its source, or a forwarded
/// reduce's second input), as opposed to the destination's earlier writers and readers. A step's
/// send half between devices reads only those, so it may go before the destination's own chunk is
/// done (which T3's stagger makes the receiver's last): the transfer then hides under both GEMMs.
pub fn feeds(plan: &Plan, i: usize, d: usize) -> bool {
    let o = &plan.ops[i];
    let wrote = plan.ops[d].dst;
    match o.kind {
        Kind::Copy { src } | Kind::Reduce { src } => wrote == src || o.acc == Some(wrote),
        Kind::Gemm => true,
    }
}

/// Whether op `d`'s buffer counter (as last read back) shows it complete.
pub fn met(plan: &Plan, counters: &HashMap<Loc, u32>, d: usize) -> bool {
    let dep = &plan.ops[d];
    counters.get(&dep.dst).copied().unwrap_or(0) >= dep.mark
}

/// The trackers whose counters can still make a step ready: those a step still `open` (not
/// submitted, or a step between devices not yet received) depends on, below the mark it waits for,
/// where the queue's order does not meet the dependency. Counters only grow, so the set only
/// shrinks as the run goes on; each submission reads these alone (none once every step is out).
pub fn wanted(
    plan: &Plan,
    counters: &HashMap<Loc, u32>,
    open: impl Fn(usize) -> bool,
    queued: impl Fn(usize, usize) -> bool,
) -> Vec<Loc> {
    let mut seen = std::collections::HashSet::new();
    (0..plan.ops.len())
        .filter(|&i| plan.ops[i].kind != Kind::Gemm && open(i))
        .flat_map(|i| plan.ops[i].deps.iter().map(move |&d| (i, d)))
        .filter(|&(i, d)| !met(plan, counters, d) && !queued(i, d))
        .map(|(_, d)| plan.ops[d].dst)
        .filter(|&l| seen.insert(l))
        .collect()
}

/// A stage's GEMM ops (in plan order) as submissions of at most `per` chunks per rank: the k-th
/// `per` chunks of every rank together. The host sees counters only when a submission completes,
/// so a stage of several chunks per rank in one submission would hold every chunk's trigger until
/// its last chunk is done, and with a second submission queued behind it the steps would follow
/// the next stage (on two devices at 8 chunks per rank, no send would start before both stages
/// ended). At one chunk per rank a stage stays one submission. The cost: each submission's GEMM
/// fills the GPU alone, and there are more submissions ([`crate::config::host::HostGrain`] says
/// where each grain is the default).
pub fn chunk_waves(plan: &Plan, ops: Vec<usize>, per: usize) -> Vec<Vec<usize>> {
    let mut waves: Vec<Vec<usize>> = Vec::new();
    let mut seen: HashMap<usize, usize> = HashMap::new();
    for i in ops {
        let k = seen.entry(plan.ops[i].dst.rank).or_insert(0);
        let w = *k / per.max(1);
        if waves.len() <= w {
            waves.push(Vec::new());
        }
        waves[w].push(i);
        *k += 1;
    }
    waves
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{Buf, ReduceVia};
    use crate::schedule::{Collective, Schedule};
    use crate::shapes::Chunking;

    fn never(_: usize, _: usize) -> bool {
        false
    }

    fn all(_: usize, _: usize) -> bool {
        true
    }

    /// Marks every op's counters as the plan says they end once `done` ops completed.
    fn counters_after(plan: &Plan, done: &[usize]) -> HashMap<Loc, u32> {
        let mut c = HashMap::new();
        for &i in done {
            let o = &plan.ops[i];
            let v = c.entry(o.dst).or_insert(0);
            *v = (*v).max(o.mark);
        }
        c
    }

    /// A ring reduce-scatter's plan over 40 rows.
    fn ring_plan(ranks: usize, chunks: usize) -> Plan {
        let ch = Chunking::new(40, ranks, chunks).unwrap();
        let schedule = Schedule::new(Collective::ReduceScatter, &ch);
        Plan::new(&schedule, &ch, 8, 128, ReduceVia::Update)
    }

    #[test]
    fn steps_become_ready_when_their_inputs_reach_their_marks() {
        let plan = ring_plan(4, 1);
        let none = vec![false; plan.ops.len()];
        assert!(
            ready(&plan, &HashMap::new(), &none, all, never).is_empty(),
            "nothing before any GEMM"
        );
        // After GEMM stages 0 and 1, exactly the ring's first steps (stage 0) are ready.
        let gemms: Vec<usize> = (0..plan.ops.len())
            .filter(|&i| plan.ops[i].kind == Kind::Gemm && plan.ops[i].stage < 2)
            .collect();
        let r = ready(&plan, &counters_after(&plan, &gemms), &none, all, never);
        assert_eq!(r.len(), 4);
        assert!(r.iter().all(|&i| plan.ops[i].stage == 0));
        // Submitted steps are not offered again; a counter one short of its mark holds a step back.
        let mut submitted = none.clone();
        submitted[r[0]] = true;
        assert_eq!(
            ready(
                &plan,
                &counters_after(&plan, &gemms),
                &submitted,
                all,
                never
            )
            .len(),
            3
        );
        let mut short = counters_after(&plan, &gemms);
        let dep = plan.ops[r[1]].deps[0];
        *short.get_mut(&plan.ops[dep].dst).unwrap() -= 1;
        assert!(!ready(&plan, &short, &none, all, never).contains(&r[1]));
        assert!(plan.ops[r[1]].dst.buf == Buf::Out);
    }

    #[test]
    fn a_send_half_needs_only_what_feeds_it() {
        // Two ranks, update: each step adds the sender's partial into the receiver's own chunk, which
        // the receiver's GEMM computes last (T3's stagger).
        let plan = ring_plan(2, 1);
        let none = vec![false; plan.ops.len()];
        let step = (0..plan.ops.len())
            .find(|&i| plan.ops[i].kind != Kind::Gemm)
            .unwrap();
        let Kind::Reduce { src } = plan.ops[step].kind else {
            panic!("update reduces")
        };
        let (fed, rest): (Vec<usize>, Vec<usize>) = plan.ops[step]
            .deps
            .iter()
            .partition(|&&d| feeds(&plan, step, d));
        assert!(fed.iter().all(|&d| plan.ops[d].dst == src) && !fed.is_empty());
        assert!(rest.iter().any(|&d| plan.ops[d].dst == plan.ops[step].dst));
        // Only the source's GEMM done: the send half may go, the whole step may not.
        let c = counters_after(&plan, &fed);
        let needs_fed = |i: usize, d: usize| feeds(&plan, i, d);
        assert!(ready(&plan, &c, &none, needs_fed, never).contains(&step));
        assert!(!ready(&plan, &c, &none, all, never).contains(&step));
    }

    #[test]
    fn a_step_chain_follows_its_queue_while_gemm_output_is_tracked() {
        let plan = ring_plan(4, 1);
        let none = vec![false; plan.ops.len()];
        // Every GEMM complete, no step yet: the ring's first steps are ready; the later ones wait
        // for the steps before them.
        let gemms: Vec<usize> = (0..plan.ops.len())
            .filter(|&i| plan.ops[i].kind == Kind::Gemm)
            .collect();
        let c = counters_after(&plan, &gemms);
        let first = ready(&plan, &c, &none, all, never);
        assert!(first.iter().all(|&i| plan.ops[i].stage == 0));
        // With the first steps queued (and queue order meeting step dependencies), the next stage's
        // steps go too, though no counter shows the first ones complete.
        let mut submitted = none.clone();
        for &i in &first {
            submitted[i] = true;
        }
        let queued = |_: usize, d: usize| plan.ops[d].kind != Kind::Gemm && submitted[d];
        let next = ready(&plan, &c, &submitted, all, queued);
        assert!(!next.is_empty() && next.iter().all(|&i| plan.ops[i].stage == 1));
        // Only what the queue does not order is read back: fewer trackers than without it.
        assert!(
            wanted(&plan, &c, |i| !submitted[i], queued).len()
                < wanted(&plan, &c, |i| !submitted[i], never).len()
        );
        // A GEMM's output is never taken on queue order: without its counters nothing is ready.
        let all_queued = |_: usize, _: usize| true;
        let gemm_dep = |_: usize, d: usize| plan.ops[d].kind != Kind::Gemm && all_queued(0, d);
        assert!(ready(&plan, &HashMap::new(), &none, all, gemm_dep).is_empty());
    }

    #[test]
    fn only_counters_that_can_still_make_a_step_ready_are_read() {
        let plan = ring_plan(3, 2);
        let every = wanted(&plan, &HashMap::new(), |_| true, never);
        let unique: std::collections::HashSet<_> = every.iter().collect();
        assert_eq!(unique.len(), every.len(), "each tracker read once");
        // Every dependency of every step is wanted before anything ran.
        for o in plan.ops.iter().filter(|o| o.kind != Kind::Gemm) {
            assert!(o.deps.iter().all(|&d| every.contains(&plan.ops[d].dst)));
        }
        // A tracker at its mark for every step left is no longer read; with every step out, none is.
        let (first, _) = plan
            .ops
            .iter()
            .enumerate()
            .find(|(_, o)| o.kind != Kind::Gemm)
            .unwrap();
        let done: Vec<usize> = (0..plan.ops.len()).collect();
        let full = counters_after(&plan, &done);
        let dep = plan.ops[first].deps[0];
        let mut some = HashMap::new();
        some.insert(plan.ops[dep].dst, full[&plan.ops[dep].dst]);
        let fewer = wanted(&plan, &some, |_| true, never);
        assert!(!fewer.contains(&plan.ops[dep].dst));
        assert_eq!(fewer.len() + 1, every.len());
        assert!(wanted(&plan, &HashMap::new(), |_| false, never).is_empty());
    }

    #[test]
    fn a_stage_goes_one_chunk_per_rank_at_a_time() {
        let ch = Chunking::new(96, 2, 4).unwrap();
        let schedule = Schedule::new(Collective::AllReduce, &ch);
        let plan = Plan::new(&schedule, &ch, 8, 128, ReduceVia::Update);
        let stage0: Vec<usize> = (0..plan.ops.len())
            .filter(|&i| plan.ops[i].kind == Kind::Gemm && plan.ops[i].stage == 0)
            .collect();
        assert_eq!(stage0.len(), 2 * 4, "each rank's four chunks for the other");
        let waves = chunk_waves(&plan, stage0.clone(), 1);
        assert_eq!(waves.len(), 4);
        for w in &waves {
            let ranks: std::collections::HashSet<usize> =
                w.iter().map(|&i| plan.ops[i].dst.rank).collect();
            assert_eq!((w.len(), ranks.len()), (2, 2), "one chunk of each rank");
        }
        let mut all: Vec<usize> = waves.concat();
        all.sort();
        assert_eq!(all, stage0, "every op once");
        // Two chunks per rank at a time: the stage in two halves, each rank's chunks in order.
        let halves = chunk_waves(&plan, stage0.clone(), 2);
        assert_eq!(halves.len(), 2);
        for (h, w) in halves.iter().enumerate() {
            for r in 0..2 {
                let mine: Vec<usize> = stage0
                    .iter()
                    .copied()
                    .filter(|&i| plan.ops[i].dst.rank == r)
                    .collect();
                let got: Vec<usize> = w
                    .iter()
                    .copied()
                    .filter(|&i| plan.ops[i].dst.rank == r)
                    .collect();
                assert_eq!(
                    got,
                    mine[2 * h..2 * h + 2],
                    "rank {r}'s chunks {}..{}",
                    2 * h,
                    2 * h + 2
                );
            }
        }
        // Three at a time over four: a wave of three, then one.
        let lens: Vec<usize> = chunk_waves(&plan, stage0.clone(), 3)
            .iter()
            .map(Vec::len)
            .collect();
        assert_eq!(lens, [6, 2]);
        assert_eq!(
            chunk_waves(&plan, stage0.clone(), 4).len(),
            1,
            "a whole stage"
        );
        // One chunk per rank: the stage is one wave.
        let one = Chunking::new(96, 8, 1).unwrap();
        let plan = Plan::new(
            &Schedule::new(Collective::ReduceScatter, &one),
            &one,
            8,
            128,
            ReduceVia::Update,
        );
        let stage: Vec<usize> = (0..plan.ops.len())
            .filter(|&i| plan.ops[i].kind == Kind::Gemm && plan.ops[i].stage == 1)
            .collect();
        assert_eq!(chunk_waves(&plan, stage, 1).len(), 1);
    }
}
