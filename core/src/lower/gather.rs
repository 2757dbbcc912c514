//! The gather of tracker counters as data: a binding per [`PER_DISPATCH`] trackers of a device, the
//! dispatches a trigger loop appends to a submission's last pass, and the decoding of the one read.

use super::{Binding, Buffer, Command, Dispatch, Group, Kernel, Lowered, Params, Resource, Span};
use crate::kernels::gather::{GatherParams, PER_DISPATCH};
use crate::plan::{Kind, Loc, Plan};

/// The gather bindings: [`PER_DISPATCH`] trackers each (the last group's spare slots repeat its first
/// tracker; `count` keeps them unread), and the buffer they gather into. Trackers go in the order of
/// the level of the first op that bumps them (a GEMM's before a step's), then rank: a trigger loop
/// reads back the trackers its submission bumped, and those of one GEMM stage (one per rank) then
/// sit in neighbouring slots, gathered by one or two dispatches instead of one per rank (each
/// dispatch waits at a barrier).
pub(super) fn lower_gather(l: &mut Lowered, plan: &Plan) {
    // (level, not a GEMM's) of the first op bumping each tracker: within a level, the GEMM stage's.
    let mut first: std::collections::HashMap<Loc, (usize, bool)> = Default::default();
    for o in &plan.ops {
        let key = (o.level, o.kind != Kind::Gemm);
        let f = first.entry(o.dst).or_insert(key);
        *f = (*f).min(key);
    }
    let mut order = l.locs.clone();
    order.sort_by_key(|loc| {
        (
            first.get(loc).copied().unwrap_or((usize::MAX, true)),
            loc.rank,
        )
    });
    l.gather_order = order;
    let groups = l.locs.len().div_ceil(PER_DISPATCH).max(1);
    let gathered = l.pool_buffer(
        "gathered tracker counters",
        (4 * PER_DISPATCH * groups).next_multiple_of(16) as u64,
        None,
    );
    l.gathered = gathered;
    for g in 0..l.locs.len().div_ceil(PER_DISPATCH) {
        let n = l.gather_order.len();
        let group = &l.gather_order[g * PER_DISPATCH..((g + 1) * PER_DISPATCH).min(n)];
        let roles = Group::Gather.roles();
        let trackers = (0..PER_DISPATCH).map(|k| {
            let t = Buffer::Tracker(*group.get(k).unwrap_or(&group[0]));
            (roles[2 + k], Resource::Buffer(t))
        });
        let named: Vec<(&str, Resource)> =
            [("dst", Resource::Buffer(gathered)), ("p", Resource::Params)]
                .into_iter()
                .chain(trackers)
                .collect();
        l.bindings.push(Binding::new(
            Group::Gather,
            Params::Gather(GatherParams {
                count: group.len() as u32,
                at: (g * PER_DISPATCH) as u32,
                ..Default::default()
            }),
            &named,
        ));
        l.gather.push(l.bindings.len() - 1);
    }
}

impl Lowered {
    /// The dispatches that gather the counters of `locs` (trackers of this device) into
    /// [`Lowered::gathered`], to go at the end of a pass that follows their writers, and the read of
    /// the gathered counters: one copy however many trackers ([`Lowered::counter_values`] decodes it).
    pub fn counters_of(&self, locs: &[Loc]) -> (Vec<Dispatch>, Command) {
        let mut groups: Vec<usize> = locs
            .iter()
            .map(|l| self.tracker_index(l) / PER_DISPATCH)
            .collect();
        groups.sort_unstable();
        groups.dedup();
        let dispatches = groups
            .iter()
            .map(|&g| Dispatch {
                kernel: Kernel::Gather,
                binding: self.gather[g],
                workgroups: 1,
            })
            .collect();
        let last = groups.last().map_or(0, |&g| g + 1);
        let read = Command::Read(vec![Span {
            buffer: self.gathered,
            offset: 0,
            bytes: (4 * PER_DISPATCH * last) as u64,
        }]);
        (dispatches, read)
    }

    /// The counters of `locs` from the bytes the read of [`Lowered::counters_of`] returned.
    pub fn counter_values(&self, locs: &[Loc], bytes: &[u8]) -> Vec<u32> {
        let words: Vec<u32> = bytemuck::pod_collect_to_vec(bytes);
        locs.iter().map(|l| words[self.tracker_index(l)]).collect()
    }

    fn tracker_index(&self, l: &Loc) -> usize {
        self.gather_order
            .iter()
            .position(|x| x == l)
            .unwrap_or_else(|| panic!("{l:?} has no tracker on device {}", self.target.device))
    }
}
