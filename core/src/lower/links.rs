//! Host links as data: for a placement of the ranks, the ordered device pairs that steps cross, each
//! link's slots (outbox/inbox pairs reused in turn) and capacity, the slot every crossing step uses,
//! and the copies through staging buffers where an end is not mapped in place.

use super::{Buffer, Command, End, Half, LinkBox, Lowered, Span};
use crate::placement::Placement;
use crate::plan::{Kind, Plan};

/// Slots a link keeps at most: chunks in flight on it at once. A crossing step whose slot is still
/// held by an earlier one waits for it, so more slots than chunks a trigger loop can overlap only
/// hold host memory.
pub const MAX_SLOTS: usize = 8;

/// One direction between two devices.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkSpec {
    pub from: usize,
    pub to: usize,
    pub slots: usize,
    /// Bytes of the largest chunk a step sends over it: every slot's size.
    pub capacity: u64,
    /// Whether its slots are host memory both devices bind (set once the link is made): the receiver
    /// then lands each chunk into its own memory beside the GEMM before adding it (see `lower_ops`).
    pub zero_copy: bool,
    /// Whether its slots have the flag handoff's gates (set once the link is made, zero-copy links
    /// only): its send halves then flag their chunks, and its landings may go ahead of them,
    /// waiting (see `lower_ops`).
    pub gated: bool,
}

/// Where a step that crosses devices goes: its link and slot, and the step that used the slot before.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Crossing {
    pub link: usize,
    pub slot: usize,
    /// Sending and receiving device.
    pub from: usize,
    pub to: usize,
    /// Bytes it moves (the chunk as stored: `Plan::op_bytes`).
    pub bytes: u64,
    /// The plan op that held this slot before: this one's send half waits until that one's receive
    /// half is submitted (the inbox is then free once that submission completes, which mapping it
    /// for writing waits for).
    pub after: Option<usize>,
    /// The GEMM op that may store this step's chunk straight into its slot (`--host-loop
    /// store=link`, zero-copy links): the step is that chunk's one use ([`stored_by`]) and its slot
    /// has no earlier user to wait for.
    pub stored_by: Option<usize>,
}

/// Every link of a placement, and each plan op's crossing (None: a GEMM, or a step within a device).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HostLinks {
    pub links: Vec<LinkSpec>,
    pub of_op: Vec<Option<Crossing>>,
}

impl HostLinks {
    /// The links `plan`'s steps need when its ranks are placed by `placement`: slots are given out in
    /// plan order, round robin over at most [`MAX_SLOTS`] per link.
    pub fn new(plan: &Plan, placement: &Placement) -> Self {
        let mut links: Vec<LinkSpec> = Vec::new();
        let mut users: Vec<Vec<usize>> = Vec::new();
        let mut of_op = vec![None; plan.ops.len()];
        for (i, op) in plan.ops.iter().enumerate() {
            let src = match op.kind {
                Kind::Gemm => continue,
                Kind::Copy { src } | Kind::Reduce { src } => src,
            };
            let (from, to) = (placement.device(src.rank), placement.device(op.dst.rank));
            if from == to {
                continue;
            }
            let link = match links.iter().position(|l| (l.from, l.to) == (from, to)) {
                Some(k) => k,
                None => {
                    links.push(LinkSpec {
                        from,
                        to,
                        slots: 0,
                        capacity: 0,
                        zero_copy: false,
                        gated: false,
                    });
                    users.push(Vec::new());
                    links.len() - 1
                }
            };
            let bytes = plan.op_bytes(i);
            links[link].capacity = links[link].capacity.max(bytes);
            users[link].push(i);
            of_op[i] = Some(Crossing {
                link,
                slot: 0,
                from,
                to,
                bytes,
                after: None,
                stored_by: None,
            });
        }
        for (link, ops) in users.iter().enumerate() {
            let slots = ops.len().min(MAX_SLOTS);
            links[link].slots = slots;
            for (k, &i) in ops.iter().enumerate() {
                let c = of_op[i].as_mut().expect("a user of the link");
                c.slot = k % slots;
                c.after = k.checked_sub(slots).map(|j| ops[j]);
                if c.after.is_none() {
                    c.stored_by = stored_by(plan, i);
                }
            }
        }
        HostLinks { links, of_op }
    }

    /// The GEMM op whose chunk step `op` carries straight from the GEMM into its slot, where
    /// `store` asks for it and the step's link is zero-copy.
    pub fn stored(&self, op: usize, store: bool) -> Option<usize> {
        let c = self.of_op[op]?;
        c.stored_by
            .filter(|_| store && self.links[c.link].zero_copy)
    }

    /// Whether any step crosses devices.
    pub fn any(&self) -> bool {
        !self.links.is_empty()
    }

    /// Bytes each link (in `links` order) carries over one run of the plan: its crossings' chunks as
    /// stored.
    pub fn bytes(&self) -> Vec<u64> {
        let mut bytes = vec![0; self.links.len()];
        for c in self.of_op.iter().flatten() {
            bytes[c.link] += c.bytes;
        }
        bytes
    }
}

/// The GEMM op that makes step `i`'s source, where the step is that chunk's one use: it reads the
/// GEMM's output as is (no forwarded partial added), nothing else reads that value, and the chunk
/// is either overwritten whole after this step, before every other access, or not part of the
/// collective's result (a partial sum of another rank's shard). Then the GEMM may store the chunk
/// into the step's link slot instead of the rank's output, which holds nothing until that
/// overwrite, or nothing at all.
fn stored_by(plan: &Plan, i: usize) -> Option<usize> {
    let op = &plan.ops[i];
    let (Kind::Copy { src } | Kind::Reduce { src }) = op.kind else {
        return None;
    };
    if op.acc.is_some() {
        return None;
    }
    let g = plan
        .ops
        .iter()
        .position(|o| o.kind == Kind::Gemm && o.dst == src)?;
    if !op.deps.contains(&g) {
        return None;
    }
    let touches = |o: &crate::plan::PlanOp| match o.kind {
        Kind::Gemm => o.dst == src,
        Kind::Copy { src: s } | Kind::Reduce { src: s } => {
            s == src || o.acc == Some(src) || o.dst == src
        }
    };
    let overwrite = plan.ops.iter().position(|o| {
        matches!(o.kind, Kind::Copy { .. })
            && o.acc.is_none()
            && o.dst == src
            && o.deps.contains(&i)
    });
    // Left as the step read it, the chunk must not be part of the result.
    let dead = overwrite.is_some() || !plan.results.contains(&(src.rank, src.chunk));
    let one_use = (0..plan.ops.len())
        .filter(|&j| j != i && j != g && Some(j) != overwrite && touches(&plan.ops[j]))
        .all(|j| overwrite.is_some_and(|w| depends_on(plan, j, w)));
    (dead && one_use).then_some(g)
}

/// Whether op `j` depends on op `w`, directly or through others.
fn depends_on(plan: &Plan, j: usize, w: usize) -> bool {
    let mut seen = vec![false; plan.ops.len()];
    let mut stack = vec![j];
    while let Some(k) = stack.pop() {
        for &d in &plan.ops[k].deps {
            if d == w {
                return true;
            }
            if !std::mem::replace(&mut seen[d], true) {
                stack.push(d);
            }
        }
    }
    false
}

impl Lowered {
    /// Where this device's link ends are staged (not mapped in place): the copies that move the
    /// chunks of `ops`' send halves from their outboxes to the buffers the host maps. Encode after the
    /// pass that runs them, in the same submission.
    pub fn drain(&self, ops: &[usize]) -> Vec<Command> {
        self.staging(ops, Half::Send)
    }

    /// The copies that move the chunks the host wrote for `ops`' receive halves into their inboxes
    /// (staged ends only). Encode before the pass that runs them.
    pub fn land(&self, ops: &[usize]) -> Vec<Command> {
        self.staging(ops, Half::Receive)
    }

    fn staging(&self, ops: &[usize], which: Half) -> Vec<Command> {
        if self.target.host_mapped {
            return Vec::new();
        }
        ops.iter()
            .filter_map(|&i| match self.ops[i].as_ref()?.half {
                Some((h, c)) if h == which => Some(c),
                _ => None,
            })
            .map(|c| {
                let (from, to) = match which {
                    Half::Send => (End::Outbox, End::OutboxMap),
                    Half::Receive => (End::InboxMap, End::Inbox),
                };
                Command::Copy {
                    src: Span {
                        buffer: Buffer::Link(LinkBox::of(c, from)),
                        offset: 0,
                        bytes: c.bytes,
                    },
                    dst: Buffer::Link(LinkBox::of(c, to)),
                    dst_offset: 0,
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::ReduceVia;
    use crate::schedule::{Collective, Schedule};
    use crate::shapes::Chunking;

    fn links(c: Collective, via: ReduceVia, ranks: usize, per: usize) -> (Plan, HostLinks) {
        let ch = Chunking::new(8 * ranks * per, ranks, per).unwrap();
        let plan = Plan::new(&Schedule::new(c, &ch), &ch, 8, 128, via);
        let placement = Placement::new(ranks, ranks).unwrap();
        let links = HostLinks::new(&plan, &placement);
        (plan, links)
    }

    #[test]
    fn a_gemm_stores_only_a_chunk_whose_one_use_is_its_step() {
        // Two ranks: each reduce-scatter step sends a GEMM chunk nothing else reads (stored), each
        // all-gather step a chunk a step made (not stored).
        let (plan, l) = links(Collective::AllReduce, ReduceVia::Update, 2, 4);
        for (i, c) in l.of_op.iter().enumerate() {
            let Some(c) = c else { continue };
            match plan.ops[i].kind {
                Kind::Reduce { src } => {
                    let g = c
                        .stored_by
                        .expect("a reduce-scatter step carries its GEMM's chunk");
                    assert_eq!((plan.ops[g].kind, plan.ops[g].dst), (Kind::Gemm, src));
                }
                _ => assert_eq!(c.stored_by, None, "op {i}"),
            }
        }
        // A ring of three: only each ring's first step sends a GEMM chunk as made; later steps
        // send partial sums a step added into.
        let (plan, l) = links(Collective::ReduceScatter, ReduceVia::Update, 3, 2);
        let stored: Vec<usize> = (0..plan.ops.len())
            .filter(|&i| l.of_op[i].is_some_and(|c| c.stored_by.is_some()))
            .collect();
        assert_eq!(stored.len(), 3 * 2, "{stored:?}");
        assert!(stored.iter().all(|&i| plan.ops[i].stage == 0));
        // The direct reduce-scatter: every step sends a GEMM chunk to its owner.
        let (_, l) = links(Collective::DirectReduceScatter, ReduceVia::Update, 3, 2);
        let steps = l.of_op.iter().flatten().count();
        assert_eq!(
            l.of_op
                .iter()
                .flatten()
                .filter(|c| c.stored_by.is_some())
                .count(),
            steps
        );
        // A forwarded partial sum adds the inbox to the GEMM's chunk on its way: never stored;
        // the first step of each ring still is.
        let (plan2, l) = links(Collective::AllReduce, ReduceVia::Forward, 3, 2);
        for (i, c) in l.of_op.iter().enumerate() {
            if c.is_some_and(|c| c.stored_by.is_some()) {
                assert_eq!(plan2.ops[i].acc, None, "op {i}");
            }
        }
        assert!(l.of_op.iter().flatten().any(|c| c.stored_by.is_some()));
        // An all-gather's chunk is its sender's result too: kept in the rank's output.
        let (_, l) = links(Collective::AllGather, ReduceVia::Update, 3, 2);
        assert!(l.of_op.iter().flatten().all(|c| c.stored_by.is_none()));
        // A slot an earlier chunk used is never stored into: its reader may not be done.
        let (_, l) = links(Collective::AllReduce, ReduceVia::Update, 2, 8);
        assert!(l.of_op.iter().flatten().any(|c| c.after.is_some()));
        assert!(l
            .of_op
            .iter()
            .flatten()
            .all(|c| c.after.is_none() || c.stored_by.is_none()));
    }
}
