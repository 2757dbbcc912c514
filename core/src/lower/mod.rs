//! Lowering: a plan and its config become recordings, the GPU work as data (passes of dispatches with
//! their kernel, workgroups, parameters and buffer references; clears; copies; reads) for one device.
//! Every decision about what a pass holds is taken here, on the CPU: the job tables, the arbitration
//! caps, the GEMM grid, the step lead and fused mode's packing. The executor (src/executor/) only
//! binds and encodes.

mod fused;
mod gather;
mod links;
mod ops;
mod recording;
mod standalone;

pub use fused::{
    counters, Forward, ForwardHeader, Fused, FusedLog, FusedTuning, ProgressLog, SPARE_INVOCATIONS,
};
pub use links::{Crossing, HostLinks, LinkSpec, MAX_SLOTS};
pub use ops::{
    beside_gemm_workgroups, HOST_LAND_BESIDE_GEMM_WORKGROUPS, HOST_LAND_WORKGROUPS,
    HOST_SEND_BESIDE_GEMM_WORKGROUPS, HOST_SEND_WORKGROUPS,
};
pub use recording::*;
pub use standalone::{
    lower_step, lower_tracked_gemm, StepEnd, StepLowering, StepSpec, TrackedGemmSpec,
    TrackedLowering,
};

use crate::config::Config;
use crate::kernels::gemm::{Job, Padding, StoreMode};
use crate::placement::Placement;
use crate::plan::{Loc, Plan};
use crate::schedule::{a_rows, Schedule};
use crate::shapes::{tiles, Chunking};

/// What lowering needs to know of the device and its GEMM kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Target {
    pub device: DeviceId,
    /// Output tile columns of the GEMM kernel (its tracker thresholds count these tiles).
    pub tile_n: usize,
    /// Tile rows its workgroups walk down before moving a tile column right (0: row-major):
    /// `Engine::tile_group`. Fused mode's landing follows the GEMM's issue order with it.
    pub tile_group: usize,
    pub max_workgroups_per_dim: u32,
    /// Bytes between two params slots of the uniform buffer (the offset alignment, at least 64).
    pub uniform_align: u64,
    pub max_buffer: u64,
    pub max_binding: u64,
    /// Storage buffers one kernel may bind (fused mode's output in four windows needs ten).
    pub max_storage_buffers: u32,
    /// Whether the host maps this device's host-link buffers in place (MAPPABLE_PRIMARY_BUFFERS);
    /// else the link's halves copy through staging buffers (see [`Lowered::drain`]).
    pub host_mapped: bool,
    /// Loop iterations one invocation may take in all, every loop of the shader counted together,
    /// before the driver ends its loops; None where no driver cap is known. llvmpipe (lavapipe) has
    /// one: 65535 (gallivm's LP_MAX_TGSI_LOOP_ITERATIONS). Fused mode keeps its spares' polling
    /// inside it (`lower_fused`).
    pub loop_limit: Option<u32>,
    /// Whether the device runs a pass's dispatches one after another (a CPU adapter's): then no
    /// kernel may wait for one dispatched after it.
    pub in_order: bool,
    /// Multiprocessors, where known (src/sms.rs): fused mode's defaults follow them
    /// (`FusedTuning::resolve`).
    pub sms: Option<u32>,
    /// GEMM workgroups one multiprocessor holds at once (the kernel's registers: `Engine::per_sm`).
    pub gemm_per_sm: u32,
}

/// Which ops a device runs when the ranks are placed on several: its ranks' GEMMs and steps, and its
/// half of every step that crosses to or from it.
#[derive(Clone, Copy, Debug)]
pub struct Share<'p> {
    pub placement: &'p Placement,
    pub links: &'p HostLinks,
}

/// A device's half of a step that crosses devices.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Half {
    /// On the sender: the step's source (plus its accumulator) copied into the link's outbox.
    Send,
    /// On the receiver: the link's inbox put (stored or added) into the step's destination, bumping
    /// its tracker as the whole step would.
    Receive,
}

/// How a plan op is dispatched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpDispatch {
    pub dispatch: Dispatch,
    /// Its dispatch in a pass that GEMM and step ops share, where that differs (None: as alone): a
    /// step's capped by arbitration, a GEMM's as a persistent grid (`Config::gemm_grid`).
    pub shared: Option<Dispatch>,
    /// A GEMM op the step lead puts after the steps of its pass.
    pub after_steps: bool,
    pub gemm: bool,
    /// The half this device runs of a step that crosses devices (None: the whole op).
    pub half: Option<(Half, Crossing)>,
    /// A zero-copy receive half's landing: its chunk copied out of host memory into this device's
    /// memory, first in any pass that holds the op. It shares no buffer with the GEMM work of the
    /// pass, so it runs beside it; the add then reads local memory, behind the barrier that its
    /// destination (written by the GEMM) puts before it anyway.
    pub land: Option<Dispatch>,
    /// A send half's dispatch (or a zero-copy receive half's landing) in a pass that holds GEMM work,
    /// by how many of its kind the pass holds: entry k for at most 2^k, each capped at that share of
    /// the budget beside GEMM work (`beside_gemm_workgroups`); None where the share is not below
    /// its workgroups alone.
    pub beside: [Option<Dispatch>; BESIDE_SHARES],
    /// A receive half's landing that waits for its gate, by share as `beside` (every entry set): on
    /// a gated link, what the flag handoff queues beside GEMM work ahead of the chunk.
    pub waiting: [Option<Dispatch>; BESIDE_SHARES],
    /// A send half that may wait in the kernel for the GEMM making its chunk (`Crossing::watches`,
    /// `--host-loop trigger=device`): that dispatch alone, and by share as `beside`.
    pub watching: Option<(Dispatch, [Option<Dispatch>; BESIDE_SHARES])>,
}

/// Shares of the link's budget beside GEMM work lowered per send half and landing: for 1, 2, 4, ...
/// 64 of them in one pass (more share as 64 do).
pub const BESIDE_SHARES: usize = 7;

/// The entry of [`OpDispatch::beside`] for `n` of a kind in one pass.
pub fn beside_share(n: usize) -> usize {
    (n.max(1).next_power_of_two().trailing_zeros() as usize).min(BESIDE_SHARES - 1)
}

/// A plan lowered for one target: bindings, pooled buffers, each op's dispatch, and every fixed
/// recording the modes run.
#[derive(Clone, Debug)]
pub struct Lowered {
    pub target: Target,
    pub bindings: Vec<Binding>,
    pub pool: Vec<PoolBuffer>,
    /// Each plan op's dispatch on this device (None: it runs on another).
    pub ops: Vec<Option<OpDispatch>>,
    /// Every buffer with a tracker on this device, in the order trackers are cleared and read.
    pub locs: Vec<Loc>,
    /// GEMM stages (`sequential` runs them all in its first pass).
    pub stages: usize,
    /// All GEMMs, then the collective: one pass of every GEMM op, then one per step level.
    pub sequential: Recording,
    /// Pass L holds GEMM stage L and every step of level L.
    pub encoded: Recording,
    /// The GEMM pass of `sequential` alone (T_gemm), and untracked (the tracker overhead's base).
    pub gemm_tracked: Recording,
    pub gemm_untracked: Recording,
    /// Fused mode's parts (or why it cannot run here).
    pub fused: std::result::Result<Fused, String>,
    /// Whether pool buffers with views get them (`FusedOptions::alias`; src/alias.rs): else the
    /// executor binds one buffer for all of a buffer's views.
    pub alias: bool,
    /// The gather dispatches' bindings, one per [`PER_DISPATCH`] trackers of `gather_order` in order,
    /// and the buffer they gather into (element i: the counter of `gather_order[i]`).
    pub gather: Vec<usize>,
    /// `locs` in the order they are gathered: by the level of the first op that bumps each (at one
    /// level, a GEMM's before a step's), then rank, so one GEMM stage's trackers take neighbouring
    /// slots (core/src/lower/gather.rs).
    pub gather_order: Vec<Loc>,
    pub gathered: Buffer,
}

/// What the host trigger loop adds to a pass that holds GEMM work.
#[derive(Clone, Copy, Debug, Default)]
pub struct HostPass<'a> {
    /// Landings that wait at their gates for chunks not yet written (the flag handoff), after the
    /// pass's sends.
    pub waits: &'a [usize],
    /// Landings of chunks already in host memory whose receive halves cannot go yet (their
    /// destinations are still being made): the chunk crosses beside the GEMM work, the put follows.
    pub ahead: &'a [usize],
    /// Receive halves among the pass's ops whose chunks a landing ahead (or waiting) already
    /// brought: no landing of their own.
    pub early: &'a [usize],
    /// Send halves that wait in the kernel for the GEMM work of the same pass making their chunks
    /// (`OpDispatch::watching`): first in the pass, or last where the device runs a pass's
    /// dispatches one after another ([`Target::in_order`]).
    pub watching: &'a [usize],
}

/// The job table of `specs` (each one chunk's rows, counter and offsets; `wg_start` is filled in):
/// every job's first workgroup follows the previous job's tiles, `tile_n` wide over `n` columns.
/// Returns the table and its workgroups. The one builder of every GEMM dispatch's table.
pub fn job_table(specs: impl IntoIterator<Item = Job>, n: usize, tile_n: usize) -> (Vec<Job>, u32) {
    let mut wg = 0u32;
    let jobs = specs
        .into_iter()
        .map(|j| {
            let j = Job { wg_start: wg, ..j };
            wg += tiles((j.row1 - j.row0) as usize, n, tile_n) as u32;
            j
        })
        .collect();
    (jobs, wg)
}

/// Lowers `plan` (of `schedule` on `chunking`) under `config` for `target`, every rank on it.
pub fn lower(
    config: &Config,
    chunking: &Chunking,
    schedule: &Schedule,
    plan: &Plan,
    target: Target,
) -> Lowered {
    let placement = Placement::new(config.ranks, 1).expect("ranks were validated");
    let links = HostLinks::new(plan, &placement);
    let share = Share {
        placement: &placement,
        links: &links,
    };
    lower_on(config, chunking, schedule, plan, target, share, true)
}

/// Lowers `plan` for device `target.device` of `share`'s placement: the recordings hold only its ops
/// and halves. Fused mode runs on one device only, and is lowered only where `fused` asks for it.
pub fn lower_on(
    config: &Config,
    chunking: &Chunking,
    schedule: &Schedule,
    plan: &Plan,
    target: Target,
    share: Share,
    fused: bool,
) -> Lowered {
    let here = |rank: usize| share.placement.device(rank) == target.device;
    let mut l = Lowered {
        locs: plan.locs().into_iter().filter(|l| here(l.rank)).collect(),
        stages: schedule.gemm_stages(),
        alias: config.fused.alias,
        ..Lowered::blank(target)
    };
    ops::lower_ops(&mut l, config, chunking, plan, share);
    gather::lower_gather(&mut l, plan);
    let n_ops = plan.ops.len();
    let is = |i: usize, gemm: bool| l.ops[i].as_ref().is_some_and(|o| o.gemm == gemm);
    let step_ops = || (0..n_ops).filter(|&i| is(i, false));
    let gemm_ops = || (0..n_ops).filter(|&i| is(i, true));
    // Sequential: every GEMM op in one pass, then one pass per step level. The baseline is the GEMM
    // at its best: a pass per stage ends each stage's last wave before the next stage's first, a
    // drain per stage that only a mode needing the boundary (to trigger there) should pay.
    let mut seq: Vec<Vec<usize>> = vec![gemm_ops().collect()];
    let mut levels: Vec<Vec<usize>> = vec![Vec::new(); plan.levels];
    for i in step_ops() {
        levels[plan.ops[i].level].push(i);
    }
    let gemm_passes = seq.clone();
    seq.extend(levels.into_iter().filter(|v| !v.is_empty()));
    // Encoded: GEMM dispatches first within a pass: encoded after them, steps overlap the GEMM's
    // tail; encoded before, they delay it by their whole duration (measured on an H200, DESIGN.md).
    let mut enc: Vec<Vec<usize>> = vec![Vec::new(); plan.levels];
    for i in gemm_ops().chain(step_ops()) {
        enc[plan.ops[i].level].push(i);
    }
    enc.retain(|p| !p.is_empty());
    let record = |l: &Lowered, label, passes: &[Vec<usize>], store| Recording {
        device: target.device,
        label,
        commands: l
            .reset()
            .into_iter()
            .chain(passes.iter().map(|ops| Command::Pass(l.pass(ops, store))))
            .collect(),
    };
    l.sequential = record(&l, "sequential", &seq, StoreMode::Store);
    l.encoded = record(&l, "encoded", &enc, StoreMode::Store);
    l.gemm_tracked = record(&l, "gemm alone (tracked)", &gemm_passes, StoreMode::Store);
    l.gemm_untracked = record(
        &l,
        "gemm alone (untracked)",
        &gemm_passes,
        StoreMode::Untracked,
    );
    l.fused = if !fused {
        Err("fused mode was not asked for".into())
    } else if share.placement.devices() > 1 {
        Err(format!(
            "fused mode runs on one device (its GEMM epilogue writes the peers' buffers); these ranks \
             are on {}",
            share.placement.devices()
        ))
    } else {
        fused::lower_fused(&mut l, config, chunking, schedule, plan)
    };
    l
}

fn empty(target: Target, label: &'static str) -> Recording {
    Recording {
        device: target.device,
        label,
        commands: vec![],
    }
}

/// How rank p's operands sit in their buffers, and the row of the output its A starts at.
pub(super) fn operands(config: &Config, chunking: &Chunking, p: usize) -> (Padding, usize) {
    let rows = a_rows(config.collective, chunking, p);
    (
        Padding::new(rows.len(), config.shape.k, config.shape.n),
        rows.start,
    )
}

/// The fewest workgroups a persistent grid may give an op of `tiles` tiles where the driver caps an
/// invocation's loop iterations in all (`limit`; llvmpipe ends its loops there and would leave tiles
/// unwritten): a tile takes at most 9 per 8-deep slice of K (the SIMT kernel's slice loop and its
/// inner loop; the cooperative kernel's 32-deep slices take fewer) plus 256 for its epilogue and
/// tile lookup, and half the cap is kept in reserve.
fn grid_floor(tiles: u32, k: usize, limit: Option<u32>) -> u32 {
    let Some(limit) = limit else { return 1 };
    let per_tile = (k.div_ceil(8) * 9 + 256) as u64;
    let tiles_per_wg = (u64::from(limit / 2) / per_tile).max(1);
    u64::from(tiles).div_ceil(tiles_per_wg) as u32
}

/// Workgroups of a persistent grid asked for `asked` over `tiles` tiles of depth `k`: at least one,
/// and no fewer than keep each workgroup's loops inside the driver's cap (`grid_floor`).
pub fn grid_workgroups(asked: u32, tiles: u32, k: usize, limit: Option<u32>) -> u32 {
    asked.max(1).max(grid_floor(tiles, k, limit))
}

impl Lowered {
    /// A lowering of nothing yet for `target`: no bindings, buffers or ops, every recording empty.
    pub fn blank(target: Target) -> Lowered {
        Lowered {
            target,
            bindings: Vec::new(),
            pool: Vec::new(),
            ops: Vec::new(),
            locs: Vec::new(),
            stages: 0,
            sequential: empty(target, "sequential"),
            encoded: empty(target, "encoded"),
            gemm_tracked: empty(target, "gemm alone (tracked)"),
            gemm_untracked: empty(target, "gemm alone (untracked)"),
            fused: Err(String::new()),
            alias: false,
            gather: Vec::new(),
            gather_order: Vec::new(),
            gathered: Buffer::Pool(0),
        }
    }

    /// Zeroes every tracker (counters and done slots): the start of every run.
    pub fn reset(&self) -> Vec<Command> {
        self.locs
            .iter()
            .map(|&l| Command::Clear(Buffer::Tracker(l)))
            .collect()
    }

    /// The pass running plan ops `ops` (GEMMs through `store`'s pipeline): zero-copy landings, then
    /// send halves, then the rest in order, except that where the pass holds both GEMM and step
    /// ops, they take their shared dispatches (arbitration's caps, the link's budget beside a GEMM,
    /// the GEMM grid) and the GEMM ops the step lead names go after the steps. The link's kernels
    /// go first because they are bound by the bus, not the SMs: dispatched first they hold few SM
    /// slots for as long as the bus needs, and the GEMM fills the rest; dispatched after it, they
    /// wait for its last wave (BENCHMARKS.md, "Real GPUs").
    pub fn pass(&self, ops: &[usize], store: StoreMode) -> Pass {
        self.pass_handing(ops, store, HostPass::default())
    }

    /// [`Lowered::pass`] with what the host loop adds (`host`): landings ahead and waiting at their
    /// gates, and sends waiting in the kernel for the GEMM work of the pass.
    pub fn pass_handing(&self, ops: &[usize], store: StoreMode, host: HostPass) -> Pass {
        let HostPass {
            waits,
            ahead,
            early,
            watching,
        } = host;
        let op = |i: usize| {
            self.ops[i].as_ref().unwrap_or_else(|| {
                panic!("op {i} runs on another device than {}", self.target.device)
            })
        };
        let gemm = |i: usize| op(i).gemm;
        let shared = ops.iter().any(|&i| gemm(i)) && ops.iter().any(|&i| !gemm(i));
        let late = |i: usize| shared && gemm(i) && op(i).after_steps;
        let send = |i: usize| matches!(op(i).half, Some((Half::Send, _)));
        // Beside GEMM work the pass's sends share their budget, and its landings theirs.
        let sends = beside_share(ops.iter().filter(|&&i| send(i)).count());
        let landing = |i: usize| op(i).land.is_some() && !early.contains(&i);
        let lands =
            beside_share(ops.iter().filter(|&&i| landing(i)).count() + waits.len() + ahead.len());
        let dispatch = |i: usize| {
            let o = op(i);
            if watching.contains(&i) {
                let (alone, by_share) = o
                    .watching
                    .unwrap_or_else(|| panic!("op {i} cannot watch its GEMM"));
                return by_share[sends].unwrap_or(alone);
            }
            match (o.dispatch.kernel, o.shared) {
                // The grid's pipeline stores plainly and tracks: the passes that share (encoded,
                // host) run StoreMode::Store.
                (Kernel::Gemm(_), Some(grid)) if shared => {
                    debug_assert_eq!(
                        store,
                        StoreMode::Store,
                        "the grid's pipeline stores plainly"
                    );
                    grid
                }
                (Kernel::Gemm(_), _) => Dispatch {
                    kernel: Kernel::Gemm(store),
                    ..o.dispatch
                },
                _ if shared && send(i) => o.beside[sends].unwrap_or(o.dispatch),
                (_, Some(capped)) if shared => capped,
                _ => o.dispatch,
            }
        };
        let order = ops
            .iter()
            .filter(|&&i| send(i))
            .chain(ops.iter().filter(|&&i| !send(i) && !late(i)))
            .chain(ops.iter().filter(|&&i| late(i)));
        let land = |i: usize| {
            let o = op(i);
            match o.beside[lands] {
                _ if !landing(i) => None,
                Some(d) if shared => Some(d),
                _ => o.land,
            }
        };
        let waiting = |i: usize| {
            op(i).waiting[lands].unwrap_or_else(|| panic!("op {i} has no waiting landing"))
        };
        // A landing ahead goes only beside GEMM work, at its share there.
        let landing_ahead = |i: usize| {
            let o = op(i);
            o.beside[lands]
                .or(o.land)
                .unwrap_or_else(|| panic!("op {i} has no landing"))
        };
        // The waiting landings after the sends: where a device runs a pass's dispatches one after
        // the other (a CPU's), a landing that waits for the other device's send does not hold back
        // its own device's, which the other may be waiting for.
        let (sends_first, rest): (Vec<&usize>, Vec<&usize>) = order.partition(|&&i| send(i));
        // A send waiting for its GEMM's counter goes first, so that its workgroups hold their slots
        // before the GEMM's fill the rest; where a device runs the dispatches one after another it
        // goes last instead, after the GEMM it waits for.
        let (watch, sends_first): (Vec<&usize>, Vec<&usize>) = sends_first
            .into_iter()
            .partition(|&&i| watching.contains(&i));
        let (watch_first, watch_last) = if self.target.in_order {
            (Vec::new(), watch)
        } else {
            (watch, Vec::new())
        };
        Pass {
            ops: ops.to_vec(),
            dispatches: watch_first
                .iter()
                .map(|&&i| dispatch(i))
                .chain(ops.iter().filter_map(|&i| land(i)))
                .chain(sends_first.iter().map(|&&i| dispatch(i)))
                .chain(ahead.iter().map(|&i| landing_ahead(i)))
                .chain(waits.iter().map(|&i| waiting(i)))
                .chain(rest.iter().map(|&&i| dispatch(i)))
                .chain(watch_last.iter().map(|&&i| dispatch(i)))
                .collect(),
        }
    }

    pub(super) fn pool_buffer(
        &mut self,
        label: &'static str,
        bytes: u64,
        init: Option<Vec<u8>>,
    ) -> Buffer {
        self.pool.push(PoolBuffer {
            label,
            bytes,
            init,
            windowed: false,
            views: 0,
        });
        Buffer::Pool(self.pool.len() - 1)
    }
}

#[cfg(test)]
mod tests;
