//! Each plan op's binding and dispatch on one device: its GEMM's job, its step's or half's put and
//! link budget, the shared variant a pass with both GEMM and step work takes, and the step lead.

use super::{
    grid_workgroups, job_table, operands, Binding, Buffer, Crossing, Dispatch, End, Group, Half,
    Kernel, LinkBox, Lowered, OpDispatch, Params, PoolBuffer, Resource, Share, Wait, BESIDE_SHARES,
};
use crate::config::host::SendTrigger;
use crate::config::{Config, StepLead};
use crate::kernels::gemm::{GemmParams, Job, Padding, StoreMode};
use crate::kernels::step::{Link, StepParams, LANDING_SPINS};
use crate::kernels::Put;
use crate::plan::{Kind, Plan, PlanOp};
use crate::shapes::{fold, Chunking};

/// Workgroups a send half's kernel gets when the link is unthrottled, in a pass without GEMM work
/// (beside GEMM work a pass's sends share [`HOST_SEND_BESIDE_GEMM_WORKGROUPS`]). Alone, 16
/// workgroups already nearly saturate PCIe writing host memory; but a device of a pair or a ring
/// writes one link's host memory while it reads another's, and both ways at once its kernels move
/// about 18 GB/s each on 16 workgroups, 26-27 on 128, 29-30 on 512 and 25-26 on 1024 (BENCHMARKS.md,
/// "Real GPUs"). Nothing else runs in such a pass, so its kernels take the budget the bus rewards.
pub const HOST_SEND_WORKGROUPS: u32 = 512;

/// Workgroups that land a zero-copy chunk (read it out of host memory into the receiver's own) in a
/// pass without GEMM work: PCIe reads need many in flight (16 workgroups read about 22-38 GB/s, 128
/// about 49), and the landing reads while the same device's send half writes, as
/// [`HOST_SEND_WORKGROUPS`].
pub const HOST_LAND_WORKGROUPS: u32 = 512;

/// Workgroups a device's send kernels share in a pass that also holds GEMM work,
/// where the link is unthrottled and `--arbitrate` does not set them (a budget the user gives the
/// link holds beside GEMM work too). The link's kernels go first in such a pass (`Lowered::pass`) and
/// the GEMM's workgroups fill the slots they leave. A kernel writing host memory reaches the bus's
/// rate on few workgroups, and every SM slot it holds slows the GEMM: on two H200s host mode ran
/// 1.032-1.097x its sequential on the six TP-2 points with a pass's sends sharing 8, 0.983-1.050x
/// sharing 32 and 0.941x (gpt3-op f16) sharing 256 (BENCHMARKS.md, "Real GPUs"). The trigger loop
/// fills passes as counters come back, so the lowering makes each send's dispatch for every share
/// (`OpDispatch::beside`: 1, 2, 4, ... of them) and the pass takes the one for its count.
pub const HOST_SEND_BESIDE_GEMM_WORKGROUPS: u32 = 8;

/// Workgroups a device's zero-copy landings in one pass share beside GEMM work, as
/// [`HOST_SEND_BESIDE_GEMM_WORKGROUPS`] for its sends: reading host memory needs more in flight than
/// writing it (on an H200 a kernel on 8 workgroups reads about 21 GB/s, on 32 about 42-46), and
/// sending and landing at once on 16-64 workgroups hid 45-100% of their time under a GEMM stage, on
/// 128 only 15-43%.
pub const HOST_LAND_BESIDE_GEMM_WORKGROUPS: u32 = 32;

/// Workgroups a pass's send kernels share beside GEMM work, and its landings (None: each keeps the
/// link's budget there too): `--arbitrate`'s for both, else
/// [`HOST_SEND_BESIDE_GEMM_WORKGROUPS`] and [`HOST_LAND_BESIDE_GEMM_WORKGROUPS`] where the link is
/// unthrottled.
pub fn beside_gemm_workgroups(config: &Config) -> Option<(u32, u32)> {
    match (config.arbitrate, config.link) {
        (Some(w), _) => Some((w, w)),
        (None, Link::Unthrottled) => Some((
            HOST_SEND_BESIDE_GEMM_WORKGROUPS,
            HOST_LAND_BESIDE_GEMM_WORKGROUPS,
        )),
        _ => None,
    }
}

/// What of an op this device runs: nothing (None), the whole op (Some(None)) or one half.
type Run = Option<Option<(Half, Crossing)>>;

/// A step op's binding as it runs here, and what it needs besides its own buffers.
struct StepOp<'a> {
    op: &'a PlanOp,
    half: Option<(Half, Crossing)>,
    /// The tracker a send half or a landing binds, never bumped.
    unbumped: Option<Buffer>,
    /// Where a zero-copy receive half lands its chunk.
    landing: Option<Buffer>,
    /// Whether its link has the flag handoff's gates (`LinkSpec::gated`).
    gated: bool,
}

/// A receive half's landings: as it lands once its chunk is there, and the one that waits for its
/// gate ahead of the chunk (a gated link's).
type Landings = (Option<Dispatch>, Option<Dispatch>);

/// Each op's binding and dispatch, its shared variant (arbitration's cap, the GEMM grid) and the step
/// lead.
pub(super) fn lower_ops(
    l: &mut Lowered,
    config: &Config,
    chunking: &Chunking,
    plan: &Plan,
    share: Share,
) {
    let runs = runs(l, plan, share);
    let lands = |r: &Run| matches!(r, Some(Some((Half::Receive, c))) if share.links.links[c.link].zero_copy);
    let sends = |r: &Run| matches!(r, Some(Some((Half::Send, _))));
    let levels = plan.levels.max(1);
    let (mut steps_at_level, mut gemms_at_level) = (vec![0u32; levels], vec![0u32; levels]);
    for (op, _) in plan.ops.iter().zip(&runs).filter(|(_, r)| r.is_some()) {
        match op.kind {
            Kind::Gemm => gemms_at_level[op.level] += 1,
            _ => steps_at_level[op.level] += 1,
        }
    }
    // Beside GEMM work, the link's kernels of a pass share arbitration's budget, else the defaults
    // where the link is unthrottled: a variant per share (`OpDispatch::beside`).
    let beside = beside_gemm_workgroups(config);
    // What a send half's step kernel binds as its tracker: it bumps nothing (bump 0), the receive
    // half bumps the destination's. One each: a writable buffer two dispatches of a pass share puts
    // a barrier between them, which would serialize the pass.
    let unbumped: Vec<Option<Buffer>> = runs
        .iter()
        .map(|r| {
            (sends(r) || lands(r))
                .then(|| l.pool_buffer("send half's tracker (never bumped)", 4, None))
        })
        .collect();
    // Where each zero-copy receive half lands its chunk (the pool is filled before the job table).
    let landings: Vec<Option<Buffer>> = plan
        .ops
        .iter()
        .zip(&runs)
        .map(|(op, r)| {
            let bytes = (op.elems * plan.elem_bytes).div_ceil(16) * 16;
            lands(r).then(|| l.pool_buffer("zero-copy landing", bytes, None))
        })
        .collect();
    let mut jobs = Vec::new();
    // The job table goes into the pool once every op's jobs are known.
    let jobs_buffer = Buffer::Pool(l.pool.len());
    let device_trigger = config.host.trigger == Some(SendTrigger::Device);
    for (i, (((op, run), unbumped), landing)) in plan
        .ops
        .iter()
        .zip(&runs)
        .zip(unbumped)
        .zip(landings)
        .enumerate()
    {
        let Some(half) = *run else {
            l.ops.push(None);
            continue;
        };
        let (binding, kernel, workgroups, (land, waiting)) = match op.kind {
            Kind::Gemm => {
                let (binding, wg) = gemm_binding(l, config, chunking, op, &mut jobs, jobs_buffer);
                (binding, Kernel::Gemm(StoreMode::Store), wg, (None, None))
            }
            Kind::Copy { src } | Kind::Reduce { src } => {
                let step = StepOp {
                    op,
                    half,
                    unbumped,
                    landing,
                    gated: half.is_some_and(|(_, c)| share.links.links[c.link].gated),
                };
                step_binding(l, config, plan, src, step)
            }
        };
        let dispatch = Dispatch {
            kernel,
            binding: l.bindings.len(),
            workgroups,
        };
        l.bindings.push(binding);
        // Passes 0..stages hold GEMM work in the modes that share passes: there steps take
        // arbitration's cap, and GEMM ops beside steps the grid's share. The trigger loop may put
        // a send half beside GEMM work whatever its level.
        let cap = match l.bindings[dispatch.binding].params {
            Params::Step(_) if sends(run) => None,
            Params::Step(_) if op.level < l.stages => config
                .arbitrate
                .map(|w| (w / steps_at_level[op.level]).max(1)),
            Params::Gemm(_) if steps_at_level[op.level] > 0 => config.gemm_grid.map(|w| {
                grid_workgroups(
                    w / gemms_at_level[op.level],
                    workgroups,
                    config.shape.k,
                    l.target.loop_limit,
                )
            }),
            _ => None,
        };
        let shared = cap
            .filter(|&c| c < workgroups)
            .map(|cap| capped(l, dispatch, cap));
        // A send that waits in the kernel for the GEMM making its chunk (the device's trigger).
        let watching = match (half, share.links.watched(i, device_trigger)) {
            (Some((Half::Send, c)), Some(g)) if c.from == l.target.device => {
                // The unit past the largest chunk of the link (slots are that big, and one more unit).
                let status4 = share.links.links[c.link].capacity.div_ceil(16) as u32;
                let d = watching_send(l, dispatch, plan, (i, g), status4);
                Some((
                    d,
                    beside.map_or([None; BESIDE_SHARES], |(w, _)| by_share(l, d, w)),
                ))
            }
            _ => None,
        };
        // A send's own dispatch, or a landing's, in each share of its kind's budget.
        let shares = match (beside, land) {
            (Some((w, _)), _) if sends(run) => Some((dispatch, w)),
            (Some((_, w)), Some(d)) => Some((d, w)),
            _ => None,
        };
        let beside_by = shares.map_or([None; BESIDE_SHARES], |(d, w)| by_share(l, d, w));
        // The waiting landing goes only beside GEMM work: at each share of the landings' budget
        // there (as itself where the share is not below its workgroups, or no budget is set).
        let waiting_by = waiting.map_or([None; BESIDE_SHARES], |d| {
            let capped = beside.map_or([None; BESIDE_SHARES], |(_, w)| by_share(l, d, w));
            capped.map(|c| Some(c.unwrap_or(d)))
        });
        l.ops.push(Some(OpDispatch {
            dispatch,
            shared,
            after_steps: false,
            gemm: op.kind == Kind::Gemm,
            half,
            land,
            beside: beside_by,
            waiting: waiting_by,
            watching,
        }));
    }
    if jobs.is_empty() {
        jobs.push(Job::default());
    }
    l.pool.push(PoolBuffer {
        label: "gemm jobs",
        bytes: (jobs.len() * std::mem::size_of::<Job>()) as u64,
        init: Some(bytemuck::cast_slice(&jobs).to_vec()),
        windowed: false,
        views: 0,
    });
    step_lead(l, config, plan);
}

/// Send half `send` of step `i` as the send that waits for the counter of GEMM op `g`,
/// which makes its source: bound to views of that source and its tracker, so that it runs beside the
/// GEMM writing them; bumping nothing; marking its slot's unit past the largest chunk if it gives up.
fn watching_send(
    l: &mut Lowered,
    send: Dispatch,
    plan: &Plan,
    (i, g): (usize, usize),
    status4: u32,
) -> Dispatch {
    let (Kind::Copy { src } | Kind::Reduce { src }) = plan.ops[i].kind else {
        unreachable!("a send half is a step's");
    };
    let mut binding = l.bindings[send.binding].clone();
    binding.rebind("src", Buffer::Watched(src));
    binding.rebind("acc", Buffer::Watched(src));
    binding.rebind("counters", Buffer::WatchedTracker(src));
    if let Params::Step(p) = binding.params {
        binding.params = Params::Step(StepParams {
            bump: 0,
            has_acc: 0,
            spins: LANDING_SPINS,
            mark: plan.ops[g].mark,
            status4,
            ..p
        });
    }
    l.bindings.push(binding);
    Dispatch {
        kernel: Kernel::Step {
            put: Put::Store,
            acc: false,
            wait: Wait::Mark,
        },
        binding: l.bindings.len() - 1,
        ..send
    }
}

/// `d` capped at each share of a budget of `w` workgroups beside GEMM work (entry k: `w / 2^k`, at
/// least 1), None where that share is not below its workgroups.
fn by_share(l: &mut Lowered, d: Dispatch, w: u32) -> [Option<Dispatch>; BESIDE_SHARES] {
    std::array::from_fn(|k| {
        let cap = (w >> k).max(1);
        (cap < d.workgroups).then(|| capped(l, d, cap))
    })
}

/// The half (or whole) of each op this device runs.
fn runs(l: &Lowered, plan: &Plan, share: Share) -> Vec<Run> {
    let device = l.target.device;
    plan.ops
        .iter()
        .zip(&share.links.of_op)
        .map(|(op, crossing)| match crossing {
            Some(c) if c.from == device => Some(Some((Half::Send, *c))),
            Some(c) if c.to == device => Some(Some((Half::Receive, *c))),
            Some(_) => None,
            None => (share.placement.device(op.dst.rank) == device).then_some(None),
        })
        .collect()
}

/// A GEMM op's binding (its one job appended to `jobs`, the table bound at `jobs_buffer`) and its
/// workgroups.
fn gemm_binding(
    l: &Lowered,
    config: &Config,
    chunking: &Chunking,
    op: &PlanOp,
    jobs: &mut Vec<Job>,
    jobs_buffer: Buffer,
) -> (Binding, u32) {
    let (t, n) = (l.target, config.shape.n);
    let rows = chunking.rows(op.dst.chunk);
    let (padding, a_row_base) = operands(config, chunking, op.dst.rank);
    let (table, wg) = job_table(
        [Job {
            row0: rows.start as u32,
            row1: rows.end as u32,
            c_row_base: rows.start as u32,
            a_row_base: a_row_base as u32,
            ..Default::default()
        }],
        n,
        t.tile_n,
    );
    let j = jobs.len();
    jobs.extend(table);
    let p = GemmParams {
        ldc: Padding::ldc(n, config.out_dtype) as u32,
        ..GemmParams::new(
            config.shape,
            &padding,
            t.tile_n,
            j..j + 1,
            wg,
            t.max_workgroups_per_dim,
        )
    };
    let binding = Binding::new(
        Group::Gemm,
        Params::Gemm(p),
        &[
            ("dst", Resource::Buffer(Buffer::Data(op.dst))),
            ("p", Resource::Params),
            ("a", Resource::Buffer(Buffer::A(op.dst.rank))),
            ("b", Resource::Buffer(Buffer::B(op.dst.rank))),
            ("counters", Resource::Buffer(Buffer::Tracker(op.dst))),
            ("jobs", Resource::Buffer(jobs_buffer)),
        ],
    );
    (binding, wg)
}

/// A step op's (or half's) binding, kernel and workgroups, and a zero-copy receive half's landings.
fn step_binding(
    l: &mut Lowered,
    config: &Config,
    plan: &Plan,
    src: crate::plan::Loc,
    step: StepOp,
) -> (Binding, Kernel, u32, Landings) {
    let StepOp {
        op,
        half,
        unbumped,
        landing,
        gated,
    } = step;
    let t = l.target;
    let mut land = None;
    let mut waiting = None;
    // 16-byte units: four f32 elements, or eight packed 2-byte ones.
    let len4 = (op.elems * plan.elem_bytes).div_ceil(16) as u32;
    // The link's budget throttles what crosses between ranks; on several devices the
    // sender's half writes host memory under it (an unthrottled link: on
    // HOST_SEND_WORKGROUPS), the receiver's reads its own memory.
    let link = match half {
        Some((Half::Send, _)) => config.link.or_workgroups(HOST_SEND_WORKGROUPS),
        Some((Half::Receive, _)) => Link::Unthrottled,
        _ if op.crosses_link() => config.link,
        _ => Link::Unthrottled,
    };
    let wg = link.workgroups(len4);
    let p = StepParams {
        len4,
        n_wg: wg,
        dispatch_x: fold(wg, t.max_workgroups_per_dim).0,
        counter: 0,
        done_slot: op.done_slot,
        bump: 1,
        has_acc: u32::from(op.acc.is_some()),
        ..Default::default()
    };
    let put = if matches!(op.kind, Kind::Copy { .. }) {
        Put::Store
    } else {
        Put::Add
    };
    let buf = |end| Buffer::Link(LinkBox::of(half.expect("a crossing").1, end));
    // (dst, src, tracker, acc) and the put, whole or halved.
    let (dst, src, tracker, acc, p, put) = match half {
        None => (
            Buffer::Data(op.dst),
            Buffer::Data(src),
            Buffer::Tracker(op.dst),
            Buffer::Data(op.acc.unwrap_or(src)),
            p,
            put,
        ),
        // On a gated link its last workgroup bumps word 0 of its flag, counting them in word 1
        // (src/hostlink/gates.rs); else it bumps nothing.
        Some((Half::Send, _)) if gated => (
            buf(End::Outbox),
            Buffer::Data(src),
            buf(End::SendFlag),
            Buffer::Data(op.acc.unwrap_or(src)),
            StepParams {
                counter: 0,
                done_slot: 1,
                ..p
            },
            Put::Store,
        ),
        Some((Half::Send, _)) => (
            buf(End::Outbox),
            Buffer::Data(src),
            unbumped.expect("made for send halves"),
            Buffer::Data(op.acc.unwrap_or(src)),
            StepParams { bump: 0, ..p },
            Put::Store,
        ),
        Some((Half::Receive, _)) => {
            let mut from = buf(End::Inbox);
            if let (Some(tracker), Some(local)) = (unbumped, landing) {
                land = Some(landing_dispatch(
                    l,
                    config,
                    p,
                    from,
                    (tracker, local),
                    Wait::No,
                ));
                if gated {
                    let gate = buf(End::LandGate);
                    waiting = Some(landing_dispatch(
                        l,
                        config,
                        p,
                        from,
                        (gate, local),
                        Wait::Gate,
                    ));
                }
                from = local;
            }
            (
                Buffer::Data(op.dst),
                from,
                Buffer::Tracker(op.dst),
                from,
                StepParams { has_acc: 0, ..p },
                put,
            )
        }
    };
    let binding = step_binding_of(p, [dst, src, tracker, acc]);
    let acc = p.has_acc != 0;
    (
        binding,
        Kernel::Step {
            put,
            acc,
            wait: Wait::No,
        },
        wg,
        (land, waiting),
    )
}

/// A step kernel's binding of `p` and its buffers `[dst, src, tracker, acc]`.
fn step_binding_of(p: StepParams, [dst, src, tracker, acc]: [Buffer; 4]) -> Binding {
    Binding::new(
        Group::Step,
        Params::Step(p),
        &[
            ("dst", Resource::Buffer(dst)),
            ("p", Resource::Params),
            ("src", Resource::Buffer(src)),
            ("counters", Resource::Buffer(tracker)),
            ("acc", Resource::Buffer(acc)),
        ],
    )
}

/// The dispatch that lands a zero-copy receive half's chunk (`p`'s) out of the link's inbox `from`
/// into `local`, binding `tracker` (never bumped); `wait`: the landing that waits for its gate
/// first, `tracker` being the gate (shaders/step.wgsl `WAIT`).
fn landing_dispatch(
    l: &mut Lowered,
    config: &Config,
    p: StepParams,
    from: Buffer,
    (tracker, local): (Buffer, Buffer),
    wait: Wait,
) -> Dispatch {
    // The link's budget where one is set, as for the send half.
    let budget = config.link.or_workgroups(HOST_LAND_WORKGROUPS);
    let n_wg = budget.workgroups(p.len4);
    let p = StepParams {
        n_wg,
        dispatch_x: fold(n_wg, l.target.max_workgroups_per_dim).0,
        bump: 0,
        has_acc: 0,
        spins: if wait == Wait::Gate { LANDING_SPINS } else { 0 },
        ..p
    };
    l.bindings
        .push(step_binding_of(p, [local, from, tracker, from]));
    Dispatch {
        kernel: Kernel::Step {
            put: Put::Store,
            acc: false,
            wait,
        },
        binding: l.bindings.len() - 1,
        workgroups: n_wg,
    }
}

/// `dispatch` capped at `cap` workgroups, on a binding of its own: a step's arbitration cap, or a
/// GEMM's persistent grid.
pub(super) fn capped(l: &mut Lowered, dispatch: Dispatch, cap: u32) -> Dispatch {
    let dispatch_x = fold(cap, l.target.max_workgroups_per_dim).0;
    let params = match l.bindings[dispatch.binding].params {
        Params::Step(p) => Params::Step(StepParams {
            n_wg: cap,
            dispatch_x,
            ..p
        }),
        Params::Gemm(p) => Params::Gemm(GemmParams {
            grid_wg: cap,
            dispatch_x,
            ..p
        }),
        other => other,
    };
    let capped = Binding {
        params,
        ..l.bindings[dispatch.binding].clone()
    };
    l.bindings.push(capped);
    Dispatch {
        kernel: match dispatch.kernel {
            Kernel::Gemm(_) => Kernel::GemmGrid,
            k => k,
        },
        binding: l.bindings.len() - 1,
        workgroups: cap,
    }
}

/// The step lead: per pass holding both, the shortest run of its last GEMM ops with at least
/// the lead's workgroups goes after its steps.
fn step_lead(l: &mut Lowered, config: &Config, plan: &Plan) {
    for level in 0..plan.levels {
        let ops = &l.ops;
        let at = |gemm: bool| {
            (0..plan.ops.len()).filter(move |&i| {
                plan.ops[i].level == level && ops[i].as_ref().is_some_and(|o| o.gemm == gemm)
            })
        };
        let op = |i: usize| ops[i].as_ref().expect("filtered to this device's ops");
        let step_wg: u32 = at(false)
            .map(|i| op(i).shared.unwrap_or(op(i).dispatch).workgroups)
            .sum();
        // A persistent grid is resident from the start, so `auto` puts no GEMM work after the steps
        // beside one; a count still does (the steps issued first, then the grid).
        let grid = at(true).any(|i| op(i).shared.is_some());
        if step_wg == 0 || (grid && config.step_lead == StepLead::Auto) {
            continue;
        }
        let mut left = config
            .step_lead
            .workgroups(at(false).count(), config.ranks, step_wg);
        let gemms: Vec<usize> = at(true).collect();
        for &i in gemms.iter().rev() {
            if left == 0 {
                break;
            }
            let o = l.ops[i].as_mut().expect("filtered to this device's ops");
            o.after_steps = true;
            left = left.saturating_sub(o.shared.unwrap_or(o.dispatch).workgroups);
        }
    }
}
