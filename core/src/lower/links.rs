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
    /// Whether the receiver lands its chunks by a copy out of host memory both devices bind (set once
    /// the link is made): the sender's step writes host memory as on zero-copy, and the receiver's
    /// kernels read an inbox in its own memory; a slot, whose inbox the copy writes outside the
    /// queue that reads it, is used again only once that read completed (as a zero-copy slot).
    pub engine: bool,
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
    /// The GEMM op whose chunk this step sends as made (it reads nothing else), where its slot has
    /// no earlier user to wait for: the send may then go with that GEMM work and wait for its
    /// counter in the kernel (`--host-loop trigger=device`, zero-copy links).
    pub watches: Option<usize>,
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
                        engine: false,
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
                watches: None,
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
                    c.watches = made_by_gemm(plan, i);
                }
            }
        }
        HostLinks { links, of_op }
    }

    /// The GEMM op whose counter step `op`'s send waits for in the kernel, where `device` (the
    /// device's trigger) asks for it and the step's link is zero-copy.
    pub fn watched(&self, op: usize, device: bool) -> Option<usize> {
        let c = self.of_op[op]?;
        c.watches.filter(|_| device && self.links[c.link].zero_copy)
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

/// The GEMM op that makes step `i`'s source, where the step sends that chunk as the GEMM made it
/// (no forwarded partial added): its send half then needs only that GEMM's counter.
fn made_by_gemm(plan: &Plan, i: usize) -> Option<usize> {
    let op = &plan.ops[i];
    let (Kind::Copy { src } | Kind::Reduce { src }) = op.kind else {
        return None;
    };
    if op.acc.is_some() {
        return None;
    }
    op.deps
        .iter()
        .copied()
        .find(|&g| plan.ops[g].kind == Kind::Gemm && plan.ops[g].dst == src)
        .filter(|_| {
            // What else writes the source before the step (a reduce into it) would feed it too.
            !op.deps
                .iter()
                .any(|&d| plan.ops[d].kind != Kind::Gemm && plan.ops[d].dst == src)
        })
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

    /// The steps whose sends may watch a GEMM's counter, each with the GEMM making its source.
    fn watching(plan: &Plan, l: &HostLinks) -> Vec<usize> {
        (0..plan.ops.len())
            .filter(|&i| {
                l.of_op[i].and_then(|c| c.watches).is_some_and(|g| {
                    let src = match plan.ops[i].kind {
                        Kind::Copy { src } | Kind::Reduce { src } => src,
                        Kind::Gemm => panic!("a GEMM crosses"),
                    };
                    assert_eq!((plan.ops[g].kind, plan.ops[g].dst), (Kind::Gemm, src));
                    true
                })
            })
            .collect()
    }

    #[test]
    fn a_send_watches_the_gemm_that_made_its_chunk() {
        // Two ranks: each reduce-scatter step sends a GEMM chunk as made; each all-gather step a
        // chunk a step added into.
        let (plan, l) = links(Collective::AllReduce, ReduceVia::Update, 2, 4);
        let w = watching(&plan, &l);
        assert_eq!(w.len(), 2 * 4);
        assert!(w
            .iter()
            .all(|&i| matches!(plan.ops[i].kind, Kind::Reduce { .. })));
        // A ring of three: only each ring's first step.
        let (plan, l) = links(Collective::ReduceScatter, ReduceVia::Update, 3, 2);
        let w = watching(&plan, &l);
        assert_eq!(w.len(), 3 * 2);
        assert!(w.iter().all(|&i| plan.ops[i].stage == 0));
        // The direct reduce-scatter and the all-gather's first steps: GEMM chunks as made.
        let (plan, l) = links(Collective::DirectReduceScatter, ReduceVia::Update, 3, 2);
        assert_eq!(watching(&plan, &l).len(), l.of_op.iter().flatten().count());
        let (plan, l) = links(Collective::AllGather, ReduceVia::Update, 3, 2);
        assert_eq!(watching(&plan, &l).len(), 3 * 2);
        // The direct all-reduce: every send reads its rank's own GEMM chunk as made, so each into a
        // slot no earlier chunk used watches, at two ranks and at three.
        for ranks in [2, 3] {
            let (plan, l) = links(Collective::DirectAllReduce, ReduceVia::Update, ranks, 2);
            let fresh = l.of_op.iter().flatten().filter(|c| c.after.is_none());
            assert_eq!(watching(&plan, &l).len(), fresh.count());
            assert!(watching(&plan, &l).len() >= ranks * (ranks - 1));
        }
        // A forwarded partial sum adds the inbox on its way: never watched, the first step is.
        let (plan, l) = links(Collective::AllReduce, ReduceVia::Forward, 3, 2);
        let w = watching(&plan, &l);
        assert!(!w.is_empty() && w.iter().all(|&i| plan.ops[i].acc.is_none()));
        // A slot an earlier chunk used is never watched into: its reader may not be done.
        let (_, l) = links(Collective::AllReduce, ReduceVia::Update, 2, 8);
        assert!(l.of_op.iter().flatten().any(|c| c.after.is_some()));
        assert!(l
            .of_op
            .iter()
            .flatten()
            .all(|c| c.after.is_none() || c.watches.is_none()));
    }
}
