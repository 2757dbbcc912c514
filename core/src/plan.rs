//! The plan: a schedule lowered onto the ranks' buffers as kernel ops (GEMM chunks and step kernels),
//! each with the ops it depends on, the tracker counter it bumps and the counter value ("mark") that
//! proves it complete. Every mode executes the same plan, so they compute the same function.
//!
//! Dependencies are derived from buffer accesses in program order (all GEMMs by stage, then the steps
//! in schedule order): read-after-write, write-after-write and write-after-read. Two ops with no path
//! between them never touch one buffer in conflicting ways, which is exactly what lets wgpu run them in
//! one pass without a barrier.

use std::collections::HashMap;

use serde::Serialize;

use crate::schedule::{Op, Schedule};
use crate::shapes::{tiles, Chunking};

/// Which of a rank's two buffers for a chunk.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Buf {
    /// The tracked output (the GEMM's partial, then the reduced or gathered chunk).
    Out,
    /// The receive buffer a landing copy writes (land-then-reduce only).
    Inbox,
}

/// One rank's buffer for one chunk; each has its own data buffer and tracker buffer on the GPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Loc {
    pub rank: usize,
    pub chunk: usize,
    pub buf: Buf,
}

/// How a reduce step is realised.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ReduceVia {
    /// T3's update semantics: the source's chunk is added straight into the destination's output
    /// (read S, read-modify-write S: 3S bytes).
    Update,
    /// The baseline T3 improves on: land the chunk in the destination's inbox (2S), then a reduce
    /// kernel adds the inbox into the output (3S): 5S bytes.
    Land,
    /// Ring reduce forwarded without waiting for the destination: the sender adds the partial it
    /// received (its inbox) to its own and lands the sum in the next rank's inbox (3S; 2S for the
    /// first step), and the owner adds its inbox into its output at the end (3S). No step writes a
    /// chunk a GEMM is still producing, so ring step s runs beside GEMM stage s+1, not s+2. The
    /// direct reduce-scatter, whose owners receive several partials, keeps `Update`.
    Forward,
}

impl ReduceVia {
    pub fn name(self) -> &'static str {
        match self {
            ReduceVia::Update => "update",
            ReduceVia::Land => "land",
            ReduceVia::Forward => "forward",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [ReduceVia::Update, ReduceVia::Land, ReduceVia::Forward]
            .into_iter()
            .find(|v| v.name() == s)
    }
}

/// What an op runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Kind {
    /// Rank `rank`'s GEMM tiles of one chunk, at production stage `stage`.
    Gemm,
    /// A step kernel copying `src` into the destination (put = store).
    Copy { src: Loc },
    /// A step kernel adding `src` into the destination (put = add).
    Reduce { src: Loc },
}

/// One dispatch of the plan.
#[derive(Clone, Debug, Serialize)]
pub struct PlanOp {
    pub kind: Kind,
    /// The buffer it writes and whose tracker counter it bumps.
    pub dst: Loc,
    /// A second input added to a copy's source (forwarded reduces).
    pub acc: Option<Loc>,
    /// GEMM production stage, or the schedule stage of the step it belongs to.
    pub stage: usize,
    /// Index of the schedule step it realises (None for GEMM ops).
    pub step: Option<usize>,
    pub deps: Vec<usize>,
    /// Increments it adds to dst's counter: its tiles (GEMM) or 1 (step).
    pub bumps: u32,
    /// dst's counter value once this op (and every earlier writer of dst) is complete.
    pub mark: u32,
    /// Done-counter slot in dst's tracker (steps): slot 0 is the counter itself.
    pub done_slot: u32,
    /// Elements moved (steps) or produced (GEMM).
    pub elems: u64,
    /// Bytes read plus written by a step kernel (0 for GEMM ops).
    pub bytes: u64,
    /// Earliest pass when each op waits only for ops of earlier passes (GEMM ops: their stage).
    pub level: usize,
}

impl PlanOp {
    /// Whether the op moves data between two ranks, so the link's budget applies. A rank adding
    /// its own inbox into its output (a forwarded reduce's last add) is local: on real GPUs it
    /// runs at memory speed, not at the link's.
    pub fn crosses_link(&self) -> bool {
        match self.kind {
            Kind::Gemm => false,
            Kind::Copy { src } | Kind::Reduce { src } => src.rank != self.dst.rank,
        }
    }
}

/// The plan of one schedule on one chunking.
#[derive(Clone, Debug, Serialize)]
pub struct Plan {
    pub ops: Vec<PlanOp>,
    pub via: ReduceVia,
    /// Final counter value of every tracked buffer: its threshold.
    pub thresholds: HashMap<LocKey, u32>,
    /// Done slots each tracked buffer needs (1 + steps writing it).
    pub slots: HashMap<LocKey, u32>,
    pub levels: usize,
    /// Bytes per output element (4, or 2 for packed 2-byte outputs: [`Plan::stored`]).
    pub elem_bytes: u64,
}

/// A [`Loc`] as a map key that serialises as a string.
pub type LocKey = String;

pub fn key(l: Loc) -> LocKey {
    format!("r{}/c{}/{:?}", l.rank, l.chunk, l.buf)
}

impl Plan {
    /// The plan of `schedule` on `chunking` for outputs `n` wide, the GEMM's tiles `tile_n` wide.
    pub fn new(
        schedule: &Schedule,
        chunking: &Chunking,
        n: usize,
        tile_n: usize,
        via: ReduceVia,
    ) -> Plan {
        let mut ops = gemm_ops(schedule, chunking, n, tile_n);
        ops.extend(step_ops(schedule, chunking, n, via));
        let (counter, slots) = order(&mut ops);
        let levels = ops.iter().map(|o| o.level + 1).max().unwrap_or(0);
        Plan {
            thresholds: counter.iter().map(|(l, c)| (key(*l), *c)).collect(),
            slots: counter
                .keys()
                .map(|l| (key(*l), 1 + slots.get(l).copied().unwrap_or(0)))
                .collect(),
            ops,
            via,
            levels,
            elem_bytes: 4,
        }
    }

    /// The plan with outputs `n` wide stored `ldc` elements a row (`Padding::ldc`) of `elem_bytes`
    /// each: every op's elements and a step's bytes count what its kernel moves, pad columns
    /// included (a chunk moves whole).
    pub fn stored(mut self, n: usize, ldc: usize, elem_bytes: u64) -> Plan {
        for op in &mut self.ops {
            let per_elem = op.bytes / op.elems.max(1);
            op.elems = op.elems / n as u64 * ldc as u64;
            op.bytes = per_elem / 4 * elem_bytes * op.elems;
        }
        self.elem_bytes = elem_bytes;
        self
    }

    /// Most times one chunk's values are rounded by a step along the plan: the reduces, and the
    /// copies that add a forwarded partial sum (a plain copy moves the bits), in the history of any
    /// buffer's final value (a chain of them along a ring, a tree where partials gather first).
    pub fn reduces_per_chunk(&self) -> usize {
        let mut rounded: HashMap<Loc, usize> = HashMap::new();
        for op in &self.ops {
            let of = |l: &Loc| rounded.get(l).copied().unwrap_or(0);
            let n = match op.kind {
                Kind::Gemm => 0,
                Kind::Reduce { src } => of(&op.dst) + of(&src) + 1,
                Kind::Copy { src } => match op.acc {
                    Some(acc) => of(&src) + of(&acc) + 1,
                    None => of(&src),
                },
            };
            rounded.insert(op.dst, n);
        }
        rounded.into_values().max().unwrap_or(0)
    }

    /// Bytes of the output elements of op `i` (what one buffer of its chunk holds).
    pub fn op_bytes(&self, i: usize) -> u64 {
        self.ops[i].elems * self.elem_bytes
    }

    /// Bytes read plus written by all step kernels: the collective's data movement.
    pub fn step_bytes(&self) -> u64 {
        self.ops.iter().map(|o| o.bytes).sum()
    }

    /// Every buffer the plan writes (each needs a data buffer and a tracker).
    pub fn locs(&self) -> Vec<Loc> {
        let mut v: Vec<Loc> = self.ops.iter().map(|o| o.dst).collect();
        v.sort_by_key(|l| (l.rank, l.chunk, l.buf == Buf::Inbox));
        v.dedup();
        v
    }
}

/// The output of `rank`'s `chunk`.
fn out(rank: usize, chunk: usize) -> Loc {
    Loc {
        rank,
        chunk,
        buf: Buf::Out,
    }
}

/// Every rank's GEMM of every chunk, in stage order: the first ops of every plan.
fn gemm_ops(schedule: &Schedule, chunking: &Chunking, n: usize, tile_n: usize) -> Vec<PlanOp> {
    let mut ops: Vec<PlanOp> = Vec::new();
    let elems = |x: usize| (chunking.rows(x).len() * n) as u64;
    for (s, p, x) in schedule.staggered() {
        ops.push(PlanOp {
            kind: Kind::Gemm,
            dst: out(p, x),
            acc: None,
            stage: s,
            step: None,
            deps: vec![],
            bumps: tiles(chunking.rows(x).len(), n, tile_n) as u32,
            mark: 0,
            done_slot: 0,
            elems: elems(x),
            bytes: 0,
            level: s,
        });
    }
    ops
}

/// The collective's steps as ops, in schedule order, as `via` realises a reduce (where forwarding,
/// with the adds that materialise what the inboxes still hold).
fn step_ops(schedule: &Schedule, chunking: &Chunking, n: usize, via: ReduceVia) -> Vec<PlanOp> {
    let mut ops: Vec<PlanOp> = Vec::new();
    let elems = |x: usize| (chunking.rows(x).len() * n) as u64;
    let inbox = |l: Loc| Loc {
        buf: Buf::Inbox,
        ..l
    };
    // Forwarding: which (rank, chunk) inboxes hold a partial sum not yet added to anything.
    let mut pending: Vec<(usize, usize)> = Vec::new();
    let forward = via == ReduceVia::Forward
        && schedule.collective != crate::schedule::Collective::DirectReduceScatter;
    let last_stage = schedule.steps.iter().map(|s| s.stage).max().unwrap_or(0);
    let materialize = |r: usize, x: usize, stage: usize, step: Option<usize>| PlanOp {
        kind: Kind::Reduce {
            src: inbox(out(r, x)),
        },
        dst: out(r, x),
        acc: None,
        stage,
        step,
        deps: vec![],
        bumps: 1,
        mark: 0,
        done_slot: 0,
        elems: elems(x),
        bytes: 12 * elems(x),
        level: 0,
    };
    // The direct all-reduce: a rank's own partial leaves whole, so the peers' partials gather in
    // its inbox (the first copied, the rest added) and join its output at the end of the first
    // stage by which every one has arrived and every send of its own has gone: per (rank, chunk),
    // the steps into it still awaited and the steps out of it still to go.
    let direct = schedule.collective == crate::schedule::Collective::DirectAllReduce;
    let mut awaited: HashMap<(usize, usize), usize> = HashMap::new();
    let mut sends_left: HashMap<(usize, usize), usize> = HashMap::new();
    if direct {
        for st in &schedule.steps {
            *awaited.entry((st.dst, st.chunk)).or_default() += 1;
            *sends_left.entry((st.src, st.chunk)).or_default() += 1;
        }
    }
    let mut gathered: Vec<(usize, usize)> = Vec::new();
    for (i, st) in schedule.steps.iter().enumerate() {
        let e = elems(st.chunk);
        let step_op = |kind, dst, bytes| PlanOp {
            kind,
            dst,
            acc: None,
            stage: st.stage,
            step: Some(i),
            deps: vec![],
            bumps: 1,
            mark: 0,
            done_slot: 0,
            elems: e,
            bytes,
            level: 0,
        };
        let src = out(st.src, st.chunk);
        let dst = out(st.dst, st.chunk);
        let key_src = (st.src, st.chunk);
        if forward && st.op == Op::Copy {
            // A finished chunk is copied on: first add in what its inbox still holds.
            if let Some(k) = pending.iter().position(|&p| p == key_src) {
                pending.remove(k);
                ops.push(materialize(st.src, st.chunk, st.stage, Some(i)));
            }
        }
        if direct {
            let left = awaited.get_mut(&(st.dst, st.chunk)).expect("counted above");
            if *left == schedule.ranks - 1 {
                ops.push(step_op(Kind::Copy { src }, inbox(dst), 8 * e));
            } else {
                ops.push(step_op(Kind::Reduce { src }, inbox(dst), 12 * e));
            }
            *left -= 1;
            if *left == 0 {
                gathered.push((st.dst, st.chunk));
            }
            *sends_left
                .get_mut(&(st.src, st.chunk))
                .expect("counted above") -= 1;
            let stage_ends = schedule
                .steps
                .get(i + 1)
                .is_none_or(|n| n.stage != st.stage);
            if stage_ends {
                gathered.retain(|&(r, x)| {
                    let sent = sends_left.get(&(r, x)).is_none_or(|&n| n == 0);
                    if sent {
                        ops.push(materialize(r, x, st.stage, Some(i)));
                    }
                    !sent
                });
            }
            continue;
        }
        match (st.op, via) {
            (Op::Copy, _) => ops.push(step_op(Kind::Copy { src }, dst, 8 * e)),
            (Op::Reduce, ReduceVia::Forward) if forward => {
                let mut op = step_op(Kind::Copy { src }, inbox(dst), 8 * e);
                if let Some(k) = pending.iter().position(|&p| p == key_src) {
                    pending.remove(k);
                    op.acc = Some(inbox(src));
                    op.bytes = 12 * e;
                }
                ops.push(op);
                pending.push((st.dst, st.chunk));
            }
            (Op::Reduce, ReduceVia::Update | ReduceVia::Forward) => {
                ops.push(step_op(Kind::Reduce { src }, dst, 12 * e))
            }
            (Op::Reduce, ReduceVia::Land) => {
                let inbox = Loc {
                    buf: Buf::Inbox,
                    ..dst
                };
                ops.push(step_op(Kind::Copy { src }, inbox, 8 * e));
                ops.push(step_op(Kind::Reduce { src: inbox }, dst, 12 * e));
            }
        }
    }
    for (r, x) in pending {
        ops.push(materialize(r, x, last_stage + 1, None));
    }
    ops
}

/// Each op's dependencies, tracker mark, done slot and level, from its accesses in program order.
/// Returns each tracked buffer's final count and its done slots.
fn order(ops: &mut [PlanOp]) -> (HashMap<Loc, u32>, HashMap<Loc, u32>) {
    // Dependencies from accesses in program order.
    let mut last_writer: HashMap<Loc, usize> = HashMap::new();
    let mut readers: HashMap<Loc, Vec<usize>> = HashMap::new();
    let mut counter: HashMap<Loc, u32> = HashMap::new();
    let mut slots: HashMap<Loc, u32> = HashMap::new();
    for i in 0..ops.len() {
        let reads: Vec<Loc> = match ops[i].kind {
            Kind::Gemm => vec![],
            Kind::Copy { src } | Kind::Reduce { src } => {
                std::iter::once(src).chain(ops[i].acc).collect()
            }
        };
        let dst = ops[i].dst;
        let mut deps = Vec::new();
        for s in &reads {
            deps.extend(last_writer.get(s).copied());
        }
        // A reduce reads its destination too; every write orders after the last writer and readers.
        deps.extend(last_writer.get(&dst).copied());
        deps.extend(readers.remove(&dst).unwrap_or_default());
        deps.sort();
        deps.dedup();
        for s in reads {
            readers.entry(s).or_default().push(i);
        }
        last_writer.insert(dst, i);
        let c = counter.entry(dst).or_insert(0);
        *c += ops[i].bumps;
        ops[i].mark = *c;
        if ops[i].kind != Kind::Gemm {
            let sl = slots.entry(dst).or_insert(0);
            *sl += 1;
            ops[i].done_slot = *sl;
            ops[i].level = deps.iter().map(|&d| ops[d].level + 1).max().unwrap_or(0);
        }
        ops[i].deps = deps;
    }
    (counter, slots)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schedule::Collective;

    #[test]
    fn ring_thresholds_follow_t3() {
        // Threshold of chunk c on rank p: tiles(c), plus 1 incoming update unless c == p-1.
        let ch = Chunking::new(4 * 200, 4, 1).unwrap();
        let s = Schedule::new(Collective::ReduceScatter, &ch);
        let plan = Plan::new(&s, &ch, 300, 128, ReduceVia::Update);
        let tiles = tiles(200, 300, 128) as u32;
        for p in 0..4 {
            for c in 0..4 {
                let want = tiles + u32::from(c != (p + 3) % 4);
                assert_eq!(
                    plan.thresholds[&key(Loc {
                        rank: p,
                        chunk: c,
                        buf: Buf::Out
                    })],
                    want,
                    "p{p} c{c}"
                );
            }
        }
    }

    #[test]
    fn deps_respect_program_order_and_levels() {
        for c in Collective::ALL {
            for via in [ReduceVia::Update, ReduceVia::Land, ReduceVia::Forward] {
                let ch = Chunking::new(60, 3, 2).unwrap();
                let plan = Plan::new(&Schedule::new(c, &ch), &ch, 8, 128, via);
                for (i, o) in plan.ops.iter().enumerate() {
                    for &d in &o.deps {
                        assert!(d < i, "{c} {via:?}: op {i} depends on later op {d}");
                        assert!(
                            plan.ops[d].level < o.level || o.kind == Kind::Gemm,
                            "{c}: level order"
                        );
                    }
                }
                // Ops sharing a level never write the same buffer, nor write what another reads.
                for a in 0..plan.ops.len() {
                    for b in a + 1..plan.ops.len() {
                        let (x, y) = (&plan.ops[a], &plan.ops[b]);
                        if x.level != y.level {
                            continue;
                        }
                        let reads = |o: &PlanOp| -> Vec<Loc> {
                            match o.kind {
                                Kind::Gemm => vec![],
                                Kind::Copy { src } | Kind::Reduce { src } => {
                                    std::iter::once(src).chain(o.acc).collect()
                                }
                            }
                        };
                        assert_ne!(
                            x.dst, y.dst,
                            "{c} {via:?}: ops {a} and {b} share a level and a buffer"
                        );
                        assert!(
                            !reads(x).contains(&y.dst),
                            "{c} {via:?}: {a} reads what {b} writes"
                        );
                        assert!(
                            !reads(y).contains(&x.dst),
                            "{c} {via:?}: {b} reads what {a} writes"
                        );
                    }
                }
            }
        }
    }

    /// The plan run symbolically (each buffer holds the set of ranks whose partial it sums) in
    /// level order, each level's ops backwards: any order the dependencies allow must end with every
    /// finished chunk whole, no partial added twice.
    #[test]
    fn every_plan_ends_right_in_any_order_its_levels_allow() {
        for c in Collective::ALL {
            for via in [ReduceVia::Update, ReduceVia::Land, ReduceVia::Forward] {
                for (r, per) in [(1, 1), (2, 1), (2, 3), (3, 2), (4, 2), (5, 1)] {
                    let ch = Chunking::new(r * per * 2, r, per).unwrap();
                    let plan = Plan::new(&Schedule::new(c, &ch), &ch, 8, 128, via);
                    let mut order: Vec<usize> = (0..plan.ops.len()).collect();
                    order.sort_by_key(|&i| (plan.ops[i].level, std::cmp::Reverse(i)));
                    let mut val: HashMap<Loc, u64> = HashMap::new();
                    let what = format!("{c} {via:?} r{r} x{per}");
                    for i in order {
                        let o = &plan.ops[i];
                        // Nothing reads a buffer before something wrote it.
                        let of = |l: &Loc| {
                            *val.get(l).unwrap_or_else(|| {
                                panic!("{what}: op {i} reads {l:?}, which nothing wrote yet")
                            })
                        };
                        let v = match o.kind {
                            Kind::Gemm => 1u64 << o.dst.rank,
                            Kind::Copy { src } => {
                                let acc = o.acc.map_or(0, |a| of(&a));
                                assert_eq!(of(&src) & acc, 0, "{what}: op {i} adds twice");
                                of(&src) | acc
                            }
                            Kind::Reduce { src } => {
                                assert_eq!(of(&src) & of(&o.dst), 0, "{what}: op {i} adds twice");
                                of(&src) | of(&o.dst)
                            }
                        };
                        val.insert(o.dst, v);
                    }
                    let all = (1u64 << r) - 1;
                    for x in 0..ch.count() {
                        let owner = ch.shard_of(x);
                        for p in 0..r {
                            let want = match c {
                                Collective::AllReduce | Collective::DirectAllReduce => all,
                                Collective::AllGather => 1 << owner,
                                _ if p == owner => all,
                                _ => continue,
                            };
                            assert_eq!(val[&out(p, x)], want, "{what}: rank {p} chunk {x}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn in_the_chunk_order_a_chunk_index_is_gathered_before_the_last_stage() {
        use crate::schedule::Order;
        // The latest GEMM stage each op waits for, through every dependency.
        let latest = |plan: &Plan| {
            let mut at = vec![0usize; plan.ops.len()];
            for (i, o) in plan.ops.iter().enumerate() {
                let own = if o.kind == Kind::Gemm { o.stage } else { 0 };
                at[i] = o.deps.iter().map(|&d| at[d]).fold(own, usize::max);
            }
            at
        };
        let (r, per) = (4, 3);
        let ch = Chunking::new(r * per * 5, r, per).unwrap();
        for via in [ReduceVia::Update, ReduceVia::Land, ReduceVia::Forward] {
            for (order, first_waits_for) in [(Order::Chunk, 0), (Order::Stage, r - 1)] {
                let s = Schedule::ordered(Collective::AllReduce, &ch, order);
                // Every rank makes every chunk once; in the chunk order stage j makes the j-th chunk
                // of each of the R shards.
                for prod in &s.production {
                    let mut made: Vec<usize> = prod.iter().map(|&(_, x)| x).collect();
                    made.sort();
                    assert_eq!(made, (0..ch.count()).collect::<Vec<_>>());
                    if order == Order::Chunk {
                        assert!(prod.iter().all(|&(j, x)| x % per == j), "{prod:?}");
                    }
                }
                let plan = Plan::new(&s, &ch, 8, 128, via);
                let at = latest(&plan);
                // The all-gather's copies of each shard's first chunk: how late a GEMM stage they
                // wait for. Shard by shard, the last (the owners' own shards); chunk by chunk, the
                // first.
                let waits = plan
                    .ops
                    .iter()
                    .enumerate()
                    .filter(|(_, o)| matches!(o.kind, Kind::Copy { .. }) && o.dst.chunk % per == 0)
                    .map(|(i, _)| at[i])
                    .max();
                assert_eq!(waits, Some(first_waits_for), "{order:?} {via:?}");
            }
        }
    }

    #[test]
    fn steps_overlap_later_gemm_stages() {
        let ch = Chunking::new(80, 4, 1).unwrap();
        let level_of_steps = |c, via| {
            let plan = Plan::new(&Schedule::new(c, &ch), &ch, 8, 128, via);
            let mut v: Vec<(usize, usize)> = plan
                .ops
                .iter()
                .filter(|o| o.kind != Kind::Gemm)
                .map(|o| (o.stage, o.level))
                .collect();
            v.sort();
            v.dedup();
            v
        };
        // Direct: the shard made at stage s lands while stage s+1's GEMM runs.
        assert_eq!(
            level_of_steps(Collective::DirectReduceScatter, ReduceVia::Update),
            vec![(1, 2), (2, 3), (3, 4)]
        );
        // Ring: a step updates the chunk its destination makes one stage later, so it waits for that
        // GEMM: step s shares a pass with GEMM stage s+2 (the last step runs after every GEMM).
        assert_eq!(
            level_of_steps(Collective::ReduceScatter, ReduceVia::Update),
            vec![(0, 2), (1, 3), (2, 4)]
        );
        // Forwarded, ring step s runs beside GEMM stage s+1; the owners' final adds (stage 3, one
        // past the last step) follow the last GEMM stage.
        assert_eq!(
            level_of_steps(Collective::ReduceScatter, ReduceVia::Forward),
            vec![(0, 1), (1, 2), (2, 3), (3, 4)]
        );
    }

    #[test]
    fn roundings_follow_each_values_history() {
        let rounds = |c, r, via| {
            let ch = Chunking::new(r * 4, r, 2).unwrap();
            Plan::new(&Schedule::new(c, &ch), &ch, 8, 128, via).reduces_per_chunk()
        };
        // Along the ring a partial sum is rounded once a hop; the direct all-reduce gathers the
        // peers' partials in an inbox (the first copied) and adds it to the rank's own once.
        for r in 2..6 {
            assert_eq!(rounds(Collective::AllReduce, r, ReduceVia::Update), r - 1);
            assert_eq!(rounds(Collective::AllReduce, r, ReduceVia::Forward), r - 1);
            assert_eq!(
                rounds(Collective::DirectAllReduce, r, ReduceVia::Update),
                r - 1
            );
            assert_eq!(rounds(Collective::AllGather, r, ReduceVia::Update), 0);
        }
    }

    #[test]
    fn land_moves_more_bytes_than_update() {
        let ch = Chunking::new(64, 4, 2).unwrap();
        let s = Schedule::new(Collective::ReduceScatter, &ch);
        let u = Plan::new(&s, &ch, 16, 128, ReduceVia::Update).step_bytes();
        let l = Plan::new(&s, &ch, 16, 128, ReduceVia::Land).step_bytes();
        assert_eq!(l * 3, u * 5);
    }
}
