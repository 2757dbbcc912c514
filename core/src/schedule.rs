//! Schedules: a collective as data, the ordered steps (source rank, destination rank, chunk, copy or
//! reduce, stage) for the ring p -> p+1 with T3's stagger, plus the direct (one-shot) reduce-scatter
//! and all-reduce.
//!
//! Tensor-parallel framing. Reduce-scatter and all-reduce follow a row-parallel GEMM: rank p holds
//! A[:, K_p] and B[K_p, :] and produces a full M x N partial sum; reduce-scatter leaves rank c holding
//! shard c of the total, all-reduce leaves every rank holding all of it. All-gather follows a GEMM
//! whose rows are split: rank p computes its shard (row band) of C = A·B and every rank ends holding
//! all of C. Each rank's output is split into R shards (shard c is owned by rank c) of `per_shard`
//! chunks each; a step moves one chunk.

use serde::Serialize;

use crate::shapes::Chunking;

/// The collective that follows the GEMM.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Collective {
    ReduceScatter,
    DirectReduceScatter,
    AllGather,
    AllReduce,
    /// Every rank sends its whole partial of each chunk to every other rank as its GEMM makes it,
    /// and adds the peers' partials in: no all-gather waits on a reduced chunk, so a send waits only
    /// for its own GEMM work. At two ranks it moves the ring's bytes; at R, R/2 times them.
    DirectAllReduce,
}

impl Collective {
    pub const ALL: [Collective; 5] = [
        Collective::ReduceScatter,
        Collective::DirectReduceScatter,
        Collective::AllGather,
        Collective::AllReduce,
        Collective::DirectAllReduce,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Collective::ReduceScatter => "reduce-scatter",
            Collective::DirectReduceScatter => "direct-reduce-scatter",
            Collective::AllGather => "all-gather",
            Collective::AllReduce => "all-reduce",
            Collective::DirectAllReduce => "direct-all-reduce",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.name() == s.to_lowercase())
    }

    /// Whether fused mode can run it: its spares add each partial straight into its destination,
    /// where the direct all-reduce keeps a rank's own partial whole until every peer has read it.
    pub fn fusable(self) -> bool {
        self != Collective::DirectAllReduce
    }

    /// The other collective the tuner may run in this one's place at `ranks` ranks: one that leaves
    /// the same sums in every rank's output and moves no more bytes. The direct all-reduce for the
    /// ring's at two ranks (past two it moves R/2 times the ring's bytes; at one, nothing moves).
    pub fn alternative(self, ranks: usize) -> Option<Collective> {
        (self == Collective::AllReduce && ranks == 2).then_some(Collective::DirectAllReduce)
    }

    /// Whether each rank computes only its own shard (row-split GEMM) rather than a full partial sum.
    pub fn row_split(self) -> bool {
        self == Collective::AllGather
    }
}

impl std::fmt::Display for Collective {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The order a rank's GEMM makes its chunks in, for the ring's reduce-scatter and all-reduce.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Order {
    /// Shard by shard (T3's stagger): a stage makes one shard's chunks, the shard the ring sends
    /// first made first and the rank's own last. A shard is reduced only once its owner's last
    /// stage made its own partial, and the all-gather forwards only reduced chunks, so the
    /// all-gather and the last reduce-scatter step wait for the GEMM's last stage.
    #[default]
    Stage,
    /// Chunk index by chunk index: stage j makes the j-th chunk of every shard, so chunk j is
    /// reduced and gathered while later stages compute, and what waits for the last stage is one
    /// chunk index's collective.
    Chunk,
}

impl Order {
    pub fn name(self) -> &'static str {
        match self {
            Order::Stage => "stage",
            Order::Chunk => "chunk",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [Order::Stage, Order::Chunk]
            .into_iter()
            .find(|o| o.name() == s.trim())
    }

    /// Whether `collective` takes this order: the chunk order only the ring's reduce-scatter and
    /// all-reduce, whose steps each follow one chunk index.
    pub fn fits(self, collective: Collective) -> bool {
        self == Order::Stage
            || matches!(
                collective,
                Collective::ReduceScatter | Collective::AllReduce
            )
    }
}

/// What a step does to the destination's copy of the chunk.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    /// The destination's chunk becomes the source's.
    Copy,
    /// The source's chunk is added into the destination's.
    Reduce,
}

/// One transfer of one chunk between two ranks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Step {
    pub stage: usize,
    pub src: usize,
    pub dst: usize,
    pub chunk: usize,
    pub op: Op,
}

/// A collective as data: which chunks each rank's GEMM produces at which stage, and the ordered steps.
#[derive(Clone, Debug, Serialize)]
pub struct Schedule {
    pub collective: Collective,
    pub ranks: usize,
    /// `production[p]` = (stage, chunk) in the order rank p's GEMM produces them (the stagger).
    pub production: Vec<Vec<(usize, usize)>>,
    pub steps: Vec<Step>,
}

/// The rows of A rank p holds: all M rows (partial sums) or its own shard (row-split GEMM).
pub fn a_rows(collective: Collective, chunking: &Chunking, p: usize) -> std::ops::Range<usize> {
    if collective.row_split() {
        chunking.shard_rows(p)
    } else {
        0..chunking.total_rows()
    }
}

fn md(a: isize, r: usize) -> usize {
    a.rem_euclid(r as isize) as usize
}

impl Schedule {
    /// `collective`'s schedule with the GEMM's chunks made shard by shard ([`Order::Stage`]).
    pub fn new(collective: Collective, chunking: &Chunking) -> Self {
        Self::ordered(collective, chunking, Order::Stage)
    }

    /// `collective`'s schedule with the GEMM's chunks made in `order` (where the collective takes
    /// it, [`Order::fits`]; else shard by shard).
    pub fn ordered(collective: Collective, chunking: &Chunking, order: Order) -> Self {
        let r = chunking.shards;
        let shard_chunks = |s: usize| chunking.chunks_of(s);
        let mut production = vec![Vec::new(); r];
        let mut steps = Vec::new();
        let ring_rs = |steps: &mut Vec<Step>| {
            // Step s: rank p sends shard p-1-s to p+1; after R-1 steps shard c is complete on rank c.
            for s in 0..r.saturating_sub(1) {
                for p in 0..r {
                    for x in shard_chunks(md(p as isize - 1 - s as isize, r)) {
                        steps.push(Step {
                            stage: s,
                            src: p,
                            dst: (p + 1) % r,
                            chunk: x,
                            op: Op::Reduce,
                        });
                    }
                }
            }
        };
        let ring_ag = |steps: &mut Vec<Step>, first: usize| {
            // Step s: rank p forwards shard p-s, which it owns (s = 0) or received at step s-1.
            for s in 0..r.saturating_sub(1) {
                for p in 0..r {
                    for x in shard_chunks(md(p as isize - s as isize, r)) {
                        steps.push(Step {
                            stage: first + s,
                            src: p,
                            dst: (p + 1) % r,
                            chunk: x,
                            op: Op::Copy,
                        });
                    }
                }
            }
        };
        match collective {
            Collective::ReduceScatter | Collective::AllReduce => {
                // Stagger: rank p produces shard p-1 first (it leaves first), its own shard p last;
                // in the chunk order, so within each chunk index, one stage per index.
                for (p, prod) in production.iter_mut().enumerate() {
                    let shard = |s: usize| shard_chunks(md(p as isize - 1 - s as isize, r));
                    match order {
                        Order::Stage => {
                            for s in 0..r {
                                prod.extend(shard(s).map(|x| (s, x)));
                            }
                        }
                        Order::Chunk => {
                            for j in 0..chunking.per_shard {
                                prod.extend((0..r).map(|s| (j, shard(s).start + j)));
                            }
                        }
                    }
                }
                ring_rs(&mut steps);
                if collective == Collective::AllReduce {
                    ring_ag(&mut steps, r.saturating_sub(1));
                }
            }
            Collective::DirectReduceScatter => {
                // Stagger: rank p produces its own shard first, then shard p+1, p+2, ...; the shard
                // made at stage s goes straight to its owner, which has its own partial of it since
                // stage 0, so the update never waits on the owner, and each stage every owner
                // receives from exactly one rank.
                for (p, prod) in production.iter_mut().enumerate() {
                    for s in 0..r {
                        prod.extend(shard_chunks(md(p as isize + s as isize, r)).map(|x| (s, x)));
                    }
                }
                for s in 1..r {
                    for p in 0..r {
                        let o = md(p as isize + s as isize, r);
                        for x in shard_chunks(o) {
                            steps.push(Step {
                                stage: s,
                                src: p,
                                dst: o,
                                chunk: x,
                                op: Op::Reduce,
                            });
                        }
                    }
                }
            }
            Collective::DirectAllReduce => {
                // Every rank makes shard s at stage s, so a chunk's partials are all made in one
                // stage and its sends all go then; at each stage rank p sends to p+1, p+2, ...
                // (each link busy at once), reading its own partial, which the peers' partials
                // join only after every send of it (the plan lands them in an inbox meanwhile).
                for prod in production.iter_mut() {
                    for s in 0..r {
                        prod.extend(shard_chunks(s).map(|x| (s, x)));
                    }
                }
                for s in 0..r {
                    for k in 1..r {
                        for p in 0..r {
                            for x in shard_chunks(s) {
                                steps.push(Step {
                                    stage: s,
                                    src: p,
                                    dst: (p + k) % r,
                                    chunk: x,
                                    op: Op::Reduce,
                                });
                            }
                        }
                    }
                }
            }
            Collective::AllGather => {
                for (p, prod) in production.iter_mut().enumerate() {
                    prod.extend(shard_chunks(p).map(|x| (0, x)));
                }
                ring_ag(&mut steps, 0);
            }
        }
        Schedule {
            collective,
            ranks: r,
            production,
            steps,
        }
    }

    /// Every rank's GEMM of every chunk as (stage, rank, chunk), stage by stage, then rank, then in
    /// the rank's production order within the stage (the chunk order's stage makes the shard its
    /// ring sends first first): the order GEMM work is issued in.
    pub fn staggered(&self) -> Vec<(usize, usize, usize)> {
        let mut order: Vec<(usize, usize, usize)> = self
            .production
            .iter()
            .enumerate()
            .flat_map(|(p, prod)| prod.iter().map(move |&(s, x)| (s, p, x)))
            .collect();
        order.sort_by_key(|&(s, p, _)| (s, p));
        order
    }

    pub fn gemm_stages(&self) -> usize {
        self.production
            .iter()
            .flat_map(|p| p.iter().map(|(s, _)| s + 1))
            .max()
            .unwrap_or(0)
    }

    /// Whether rank p's GEMM produces chunk x.
    pub fn produces(&self, p: usize, x: usize) -> bool {
        self.production[p].iter().any(|&(_, c)| c == x)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Symbolic execution: each rank's chunk holds the set of ranks whose partial it contains (a bitmask).
    fn simulate(c: Collective, r: usize, per: usize) -> (Schedule, Vec<Vec<u64>>) {
        let ch = Chunking::new(r * per * 3, r, per).unwrap();
        let s = Schedule::new(c, &ch);
        let n = ch.count();
        let mut val = vec![vec![0u64; n]; r];
        for (p, prod) in s.production.iter().enumerate() {
            for &(_, x) in prod {
                assert_eq!(
                    val[p][x], 0,
                    "{c} r{r}: chunk {x} produced twice on rank {p}"
                );
                val[p][x] = 1 << p;
            }
        }
        // Reduce steps each (rank, chunk) still expects: a partial may leave only when none is pending.
        let mut pending = vec![vec![0usize; n]; r];
        for st in s.steps.iter().filter(|st| st.op == Op::Reduce) {
            pending[st.dst][st.chunk] += 1;
        }
        let all = (1u64 << r) - 1;
        // The direct all-reduce's partials gather in an inbox beside the output, which keeps the
        // rank's own partial until its stage's steps have run (every send of a chunk goes in one
        // stage, so the plan adds the inbox in at its end).
        let mut inbox = vec![vec![0u64; n]; r];
        for (i, st) in s.steps.iter().enumerate() {
            if c == Collective::DirectAllReduce && i > 0 && s.steps[i - 1].stage != st.stage {
                join(&mut val, &mut inbox);
            }
            assert_ne!(
                val[st.src][st.chunk], 0,
                "{c} r{r}: step {st:?} reads an unproduced chunk"
            );
            match st.op {
                Op::Reduce if c == Collective::DirectAllReduce => {
                    assert_eq!(
                        val[st.src][st.chunk],
                        1 << st.src,
                        "{c} r{r}: step {st:?} sends more than its own partial"
                    );
                    assert_eq!(
                        (val[st.dst][st.chunk] | inbox[st.dst][st.chunk]) & (1 << st.src),
                        0,
                        "{c}: {st:?} adds a partial twice"
                    );
                    inbox[st.dst][st.chunk] |= 1 << st.src;
                }
                Op::Reduce => {
                    assert_eq!(
                        pending[st.src][st.chunk], 0,
                        "{c} r{r}: step {st:?} reads an incomplete chunk"
                    );
                    assert_eq!(
                        val[st.src][st.chunk] & val[st.dst][st.chunk],
                        0,
                        "{c}: {st:?} adds a partial twice"
                    );
                    val[st.dst][st.chunk] |= val[st.src][st.chunk];
                    pending[st.dst][st.chunk] -= 1;
                }
                Op::Copy => {
                    // A copy forwards a finished chunk: the full sum (all-reduce) or the owner's rows (all-gather).
                    let done = if c == Collective::AllGather {
                        1 << ch.shard_of(st.chunk)
                    } else {
                        all
                    };
                    assert_eq!(
                        val[st.src][st.chunk], done,
                        "{c} r{r}: step {st:?} copies an unfinished chunk"
                    );
                    val[st.dst][st.chunk] = val[st.src][st.chunk];
                }
            }
        }
        join(&mut val, &mut inbox);
        (s, val)
    }

    /// Adds every inbox into its rank's chunk and empties it (the direct all-reduce's last add).
    fn join(val: &mut [Vec<u64>], inbox: &mut [Vec<u64>]) {
        for (v, b) in val.iter_mut().zip(inbox) {
            for (v, b) in v.iter_mut().zip(b) {
                *v |= std::mem::take(b);
            }
        }
    }

    #[test]
    fn every_collective_ends_right() {
        for r in [1, 2, 3, 4, 5, 8] {
            for per in [1, 2, 3] {
                let all = (1u64 << r) - 1;
                let ch = Chunking::new(r * per * 3, r, per).unwrap();
                let (_, v) = simulate(Collective::ReduceScatter, r, per);
                let (_, d) = simulate(Collective::DirectReduceScatter, r, per);
                for x in 0..ch.count() {
                    let o = ch.shard_of(x);
                    assert_eq!(v[o][x], all, "ring RS r{r}: owner {o} of chunk {x}");
                    assert_eq!(d[o][x], all, "direct RS r{r}: owner {o} of chunk {x}");
                }
                let (_, ar) = simulate(Collective::AllReduce, r, per);
                let (_, dar) = simulate(Collective::DirectAllReduce, r, per);
                let (_, ag) = simulate(Collective::AllGather, r, per);
                for p in 0..r {
                    for x in 0..ch.count() {
                        assert_eq!(ar[p][x], all, "AR r{r}: rank {p} chunk {x}");
                        assert_eq!(dar[p][x], all, "direct AR r{r}: rank {p} chunk {x}");
                        assert_eq!(ag[p][x], 1 << ch.shard_of(x), "AG r{r}: rank {p} chunk {x}");
                    }
                }
            }
        }
    }

    #[test]
    fn the_chunk_order_makes_each_index_of_every_shard_in_the_stagger() {
        let (r, per) = (4, 3);
        let ch = Chunking::new(r * per * 2, r, per).unwrap();
        let s = Schedule::ordered(Collective::AllReduce, &ch, Order::Chunk);
        assert_eq!(s.gemm_stages(), per);
        // Rank p's stage j, as issued: the j-th chunk of shard p-1 (the ring's first send) first,
        // of its own shard last.
        let issued = s.staggered();
        for p in 0..r {
            for j in 0..per {
                let made: Vec<usize> = issued
                    .iter()
                    .filter(|&&(st, q, _)| st == j && q == p)
                    .map(|&(_, _, x)| x)
                    .collect();
                let want: Vec<usize> = (0..r).map(|k| (p + 2 * r - 1 - k) % r * per + j).collect();
                assert_eq!(made, want, "rank {p} stage {j}");
            }
        }
        // The steps are the ring's, whatever the order.
        assert_eq!(s.steps, Schedule::new(Collective::AllReduce, &ch).steps);
        assert!(!Order::Chunk.fits(Collective::DirectAllReduce));
        assert_eq!(Order::parse("chunk"), Some(Order::Chunk));
    }

    #[test]
    fn ring_follows_t3_stagger() {
        let ch = Chunking::new(40, 4, 1).unwrap();
        let s = Schedule::new(Collective::ReduceScatter, &ch);
        // Rank p produces chunk p-1 first and its own chunk last.
        for p in 0..4 {
            assert_eq!(s.production[p][0], (0, (p + 3) % 4));
            assert_eq!(s.production[p][3], (3, p));
        }
        // At step s rank p sends chunk (p-1-s) mod N to rank p+1.
        for st in &s.steps {
            assert_eq!(st.dst, (st.src + 1) % 4);
            assert_eq!(st.chunk, (st.src + 8 - 1 - st.stage) % 4);
        }
        assert_eq!(s.steps.len(), 4 * 3);
        // A step's chunk is produced by its source at the step's own stage.
        for st in &s.steps {
            let produced_at = s.production[st.src]
                .iter()
                .find(|&&(_, x)| x == st.chunk)
                .unwrap()
                .0;
            assert_eq!(produced_at, st.stage);
        }
    }

    #[test]
    fn counts_and_names() {
        let ch = Chunking::new(64, 8, 2).unwrap();
        assert_eq!(
            Schedule::new(Collective::AllReduce, &ch).steps.len(),
            2 * 8 * 7 * 2
        );
        assert_eq!(
            Schedule::new(Collective::DirectReduceScatter, &ch)
                .steps
                .len(),
            8 * 7 * 2
        );
        assert_eq!(
            Schedule::new(Collective::DirectAllReduce, &ch).steps.len(),
            8 * 7 * 2 * 8
        );
        for c in Collective::ALL {
            assert_eq!(Collective::parse(c.name()), Some(c));
        }
        assert_eq!(Collective::parse("nope"), None);
    }
}
