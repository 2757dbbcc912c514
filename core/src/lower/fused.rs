//! Fused mode's lowering: every rank's operands packed into one buffer per role, the GEMM over all
//! ranks' staggered jobs in one pass (one dispatch, or one per stage and run of ranks), the forward
//! table its epilogue or spares trigger from, and the results handed back to the ranks' own buffers.

use std::ops::Range;

use super::{
    job_table, operands, Binding, Buffer, Command, Dispatch, Group, Kernel, Lowered, Params, Pass,
    Recording, Resource, Span, Target,
};
use crate::config::fused::{FusedOptions, Pieces, MAX_KNOB, MIN_WINDOW};
pub use crate::config::fused::{Help, SpareDispatch, Trigger};
use crate::config::Config;
use crate::kernels::gemm::{GemmParams, Job};
use crate::kernels::step::{Link, STEP_WG};
use crate::plan::{Buf, Plan, ReduceVia};
use crate::schedule::{Op, Schedule};
use crate::shapes::{fold, tiles, Chunking};

pub mod counters;
mod dispatches;
mod packing;
mod table;
#[cfg(test)]
mod tests;
mod tuning;

use counters::*;
use dispatches::*;
use packing::*;
use table::*;
pub use table::{Forward, ForwardHeader, FusedLog, ProgressLog};
use tuning::*;
pub use tuning::{FusedTuning, SPARE_INVOCATIONS};

/// What fused mode lowers to, besides the bindings and pool buffers it adds to the [`Lowered`]: its
/// parts together, so that the shared lowering names fused mode in one field.
#[derive(Clone, Debug)]
pub struct Fused {
    /// Its one dispatch (or one per stage and run of ranks).
    pub recording: Recording,
    /// Its own sequential run, the baseline of its efficiency: its GEMM alone (every rank's, packed,
    /// in its one dispatch, tracked only: the watched GEMM), then its transfers alone in a pass of
    /// their own (the finisher: the spares after the GEMM).
    pub sequential: Recording,
    /// Its progress log (its counters buffer, where the log sits), where a timeline is asked for.
    pub log: Option<FusedLog>,
    /// Bytes its transfers read and write more than the plan's steps: a landed hop writes its inbox
    /// and the landing reads it again (2 chunks' bytes more than the reduce it replaces).
    pub extra_bytes: u64,
    /// Its configuration (its knobs or their defaults).
    pub tuning: FusedTuning,
}

/// Fused mode: every rank's operands packed into one buffer per role, the GEMM over all ranks'
/// staggered jobs in one pass (and the spares' own dispatch where they have one), and the results handed back to
/// the ranks' own buffers (where checks and dumps read every mode's results). Tuned by
/// `config.fused` ([`FusedTuning::resolve`]).
pub(super) fn lower_fused(
    l: &mut Lowered,
    config: &Config,
    chunking: &Chunking,
    schedule: &Schedule,
    plan: &Plan,
) -> std::result::Result<Fused, String> {
    let intensity = config.shape.flops() * config.ranks as f64 / plan.step_bytes().max(1) as f64;
    let tuning = FusedTuning::resolve(&config.fused, &l.target, config.link, intensity)?;
    lower_fused_with(l, config, chunking, schedule, plan, tuning)
}

/// What fused mode cannot realise.
fn check_fusable(config: &Config) -> std::result::Result<(), String> {
    if config.via != ReduceVia::Update {
        return Err("fused mode realises every reduce as an update (T3's semantics); --reduce land and forward do not apply".into());
    }
    if !config.collective.fusable() {
        return Err(format!(
            "{}; a ring collective or the direct reduce-scatter runs it",
            crate::validate::FUSED_KEEPS_NO_PARTIAL
        ));
    }
    if config.out_dtype != crate::shapes::Dtype::F32 {
        return Err(format!(
            "fused mode moves f32 outputs only (its puts add f32 words); these are {}: \
             --out-dtype f32 runs it",
            config.out_dtype.name()
        ));
    }
    Ok(())
}

/// `tuning` as this schedule and target can run it, and the steps that land. Only the spares that
/// watch land (nothing else adds an inbox in); the polls stay inside the driver's loop cap.
fn settle(
    tuning: FusedTuning,
    t: &Target,
    schedule: &Schedule,
    chunks: usize,
) -> (FusedTuning, Vec<usize>) {
    let tuning = FusedTuning {
        land: tuning.land && tuning.trigger == Trigger::Spares,
        ..tuning
    };
    let lands = if tuning.land {
        landing(schedule)
    } else {
        Vec::new()
    };
    let tuning = FusedTuning {
        polls: polls_within(
            t.loop_limit,
            tuning.polls,
            chunks + lands.len(),
            tuning.trigger == Trigger::Spares,
            tuning.pause,
        ),
        ..tuning
    };
    (tuning, lands)
}

/// How many spares run beside the GEMM, the finisher's workgroups, and the pieces they move.
#[derive(Clone, Copy, Debug)]
struct SpareCounts {
    spares: u32,
    movers: u32,
    pieces: u32,
}

fn spare_counts(
    tuning: &FusedTuning,
    table: &Table,
    ranks: usize,
) -> std::result::Result<SpareCounts, String> {
    let busiest = table
        .fwd
        .iter()
        .map(|f| f.pc0.max(f.pc1))
        .max()
        .unwrap_or(1);
    let auto_spares = (ranks as u32 * busiest).min(1024);
    let spares = tuning.spares.unwrap_or(auto_spares);
    // The finisher's workgroups (the spare pipeline alone moving whatever is left): the mode's own
    // spares where they are the spare pipeline's; spares in the GEMM's dispatch are GEMM workgroups,
    // a few filling a grid's free slots (far too few to move a preset's transfers in good time), so
    // there, and where there are none, as many as the busiest step's pieces on every rank.
    let movers = match tuning.spare_dispatch {
        SpareDispatch::Own if spares > 0 => spares,
        _ => auto_spares,
    };
    let pieces = table.header.pieces;
    if tuning.help == Help::Never && tuning.trigger == Trigger::Epilogue && pieces > 0 {
        if tuning.spare_dispatch != SpareDispatch::Own {
            return Err("--fused help=never needs spares that run after the GEMM (--fused spare-dispatch=own, --fused alias=off)".into());
        }
        if spares == 0 {
            return Err("--fused help=never leaves every piece to the spares, and there are none (--fused spares=0)".into());
        }
    }
    Ok(SpareCounts {
        spares,
        movers,
        pieces,
    })
}

/// Refuses packed buffers over the device's limits: one dispatch must bind every rank's, but the
/// operands where each run of ranks has its own (`own_operands`: `rank_runs` fitted each run's).
fn check_sizes(
    t: &Target,
    packing: &Packing,
    (out, out_bytes): (&OutLayout, u64),
    own_operands: bool,
) -> std::result::Result<(), String> {
    let window = out.window;
    // A dispatch per run of ranks lifts the operands' limits, not the outputs': the spares bind
    // every rank's.
    if !own_operands {
        for (what, bytes, window) in [
            ("packed A", packing.a_bytes, 0),
            ("packed B", packing.b_bytes, window),
        ] {
            check_windows(what, bytes, t, window).map_err(|e| {
                format!("one dispatch must bind every rank: {e}; a dispatch per run of ranks binds its own operands: --fused trigger=spares,spare-dispatch=own,grid=off")
            })?;
        }
    }
    let (what, bytes) = match out.second() {
        Some(second) => (
            "packed outputs past the first buffer (four windows of two)",
            out_bytes.saturating_sub(second),
        ),
        None => ("packed outputs", out_bytes),
    };
    check_windows(what, bytes, t, window)
        .map_err(|e| format!("the spares bind every rank's outputs: {e}"))?;
    Ok(())
}

/// The packed output's layout and the forward table (`table_of` it) that places its inboxes: two
/// windows of one buffer where it fits them, else four of two where the adapter binds ten storage
/// buffers a stage (an error naming the limit where not).
fn out_layout(
    t: &Target,
    config: &Config,
    knob: Option<u32>,
    table_of: impl Fn(&OutLayout) -> std::result::Result<Table, String>,
) -> std::result::Result<(OutLayout, Table), String> {
    let (r, rank_elems) = (config.ranks, config.shape.m * config.shape.n);
    let two = OutLayout::two(r, rank_elems, fused_window(t.max_binding, knob));
    let table = table_of(&two)?;
    // Whole vec4s: the coherent put binds the output as array<vec4<f32>>.
    let bytes = table.out_elems as u64 * 4;
    if bytes <= t.max_buffer.min(two.window + t.max_binding) {
        return Ok((two, table));
    }
    // Each buffer holds two windows.
    let four = OutLayout::four(
        r,
        rank_elems,
        fused_window(t.max_binding.min(t.max_buffer / 2), knob),
    );
    if t.max_storage_buffers < FOUR_WINDOWS_BINDINGS {
        return Err(format!(
            "the spares bind every rank's outputs: packed outputs of {bytes} bytes pass two \
             windows of one buffer (max_buffer_size {} bytes, max_storage_buffer_binding_size {} \
             bytes a window); four windows of two buffers bind {FOUR_WINDOWS_BINDINGS} storage \
             buffers a stage, and this adapter binds {} (max_storage_buffers_per_shader_stage)",
            t.max_buffer, t.max_binding, t.max_storage_buffers
        ));
    }
    let table = table_of(&four)?;
    Ok((four, table))
}

/// Storage buffers the fused kernels bind with the output in four windows (Group::Fused4).
const FOUR_WINDOWS_BINDINGS: u32 = 10;

/// A GEMM dispatch's (stage, run of ranks) and its jobs' (rank, chunk).
type Segment = ((usize, usize), Vec<(usize, usize)>);

/// Jobs in stagger order (stage by stage, every rank's chunk of that stage), cut where the stage or
/// the run of ranks changes if there are several runs.
fn segments(schedule: &Schedule, runs: &[RankRun]) -> Vec<Segment> {
    let run_of = |p: usize| runs.iter().position(|g| g.ranks.contains(&p)).unwrap_or(0);
    let mut segments: Vec<Segment> = Vec::new();
    for (stage, p, x) in schedule.staggered() {
        let key = if runs.len() == 1 {
            (0, 0)
        } else {
            (stage, run_of(p))
        };
        match segments.last_mut() {
            Some((k, jobs)) if *k == key => jobs.push((p, x)),
            _ => segments.push((key, vec![(p, x)])),
        }
    }
    segments
}

/// A GEMM dispatch's jobs in the one job table, its workgroups and its run of ranks.
type JobSpan = (Range<usize>, u32, usize);

/// One job table, each dispatch's segment numbering its workgroups from 0; offsets into its run's
/// windows.
fn job_tables(
    config: &Config,
    chunking: &Chunking,
    (packing, out): (&Packing, &OutLayout),
    runs: &[RankRun],
    segments: &[Segment],
    fwd: &[Forward],
    tile_n: usize,
) -> (Vec<Job>, Vec<JobSpan>) {
    let n = config.shape.n;
    let e = config.dtype.bytes() as u64;
    let nch = chunking.count();
    let mut jobs = Vec::new();
    let mut spans = Vec::new();
    for ((_, g), seg) in segments {
        let run = &runs[*g];
        let (seg_jobs, seg_wg) = job_table(
            seg.iter().map(|&(p, x)| {
                let rows = chunking.rows(x);
                Job {
                    row0: rows.start as u32,
                    row1: rows.end as u32,
                    counter: (p * nch + x) as u32,
                    a_off: ((packing.a_offs[p] - run.a.start) / e) as u32,
                    b_off: ((packing.b_offs[p] - run.b.start) / e) as u32,
                    b_window: packing.b_window[p],
                    c_off: (out.bases[p] as u64 - run.out.start / 4) as u32,
                    a_row_base: operands(config, chunking, p).1 as u32,
                    c_row_base: 0,
                    land: fwd
                        .iter()
                        .find(|f| f.land != 0 && f.into as usize == p * nch + x)
                        .map_or(0, |f| f.land),
                    ..Default::default()
                }
            }),
            n,
            tile_n,
        );
        spans.push((jobs.len()..jobs.len() + seg_jobs.len(), seg_wg, *g));
        jobs.extend(seg_jobs);
    }
    (jobs, spans)
}

/// The pool buffers fused mode binds (the packed operands: [`Operands`]).
#[derive(Clone, Copy, Debug)]
struct Buffers {
    out: Buffer,
    /// The packed output's second buffer, where it is in four windows ([`OutLayout`]).
    out2: Option<Buffer>,
    counters: Buffer,
    jobs: Buffer,
    forward: Buffer,
}

impl Buffers {
    /// The fused kernels' binding with `params`: the output's windows `outs` (the last two bound
    /// only where the output has a second buffer: [`Group::Fused4`]), A, B, B's second window and
    /// the counters as given.
    fn binding(
        &self,
        params: Params,
        outs: [Resource; 4],
        [a_at, b_at, b_hi]: [Resource; 3],
        counters: Buffer,
    ) -> Binding {
        let mut named = vec![
            ("dst", outs[0]),
            ("p", Resource::Params),
            ("a", a_at),
            ("b", b_at),
            ("counters", Resource::Buffer(counters)),
            ("jobs", Resource::Buffer(self.jobs)),
            ("table", Resource::Buffer(self.forward)),
            ("dst_hi", outs[1]),
            ("b_hi", b_hi),
        ];
        let group = if self.out2.is_some() {
            named.extend([("dst_2", outs[2]), ("dst_3", outs[3])]);
            Group::Fused4
        } else {
            Group::Fused
        };
        Binding::new(group, params, &named)
    }

    /// The progress log `log` in these buffers.
    fn log(&self, log: ProgressLog) -> FusedLog {
        FusedLog {
            counters: self.counters,
            forward: self.forward,
            switch_at: std::mem::offset_of!(ForwardHeader, log_at) as u64,
            log,
            first: None,
        }
    }

    /// The packed output's buffers: the first, and the second where there is one.
    fn outs(&self) -> impl Iterator<Item = Buffer> {
        std::iter::once(self.out).chain(self.out2)
    }
}

/// Where the packed operands lie: per run of ranks (`RankRun`), the span of A and of B its
/// dispatch binds; and the A, B and B's second window that one dispatch over every rank binds (the
/// spares' binding too, which never reads them: stubs where each run's operands have buffers of
/// their own).
struct Operands {
    runs: Vec<[Span; 2]>,
    whole: [Resource; 3],
}

/// [`lower_fused`] under `tuning`.
pub(super) fn lower_fused_with(
    l: &mut Lowered,
    config: &Config,
    chunking: &Chunking,
    schedule: &Schedule,
    plan: &Plan,
    tuning: FusedTuning,
) -> std::result::Result<Fused, String> {
    check_fusable(config)?;
    let t = l.target;
    let r = config.ranks;
    let e = config.dtype.bytes() as u64;
    let nch = chunking.count();
    let mut packing = Packing::new(config, chunking);
    let (tuning, lands) = settle(tuning, &t, schedule, r * nch);
    // The output and B are bound as two windows of one buffer each and A in one (a ninth storage
    // binding would pass WebGPU's default limit of eight per stage); an output past one buffer in
    // four windows of two, where the adapter binds them.
    let (out, mut table) = out_layout(&t, config, tuning.window, |out| {
        let tiles = (t.tile_n, t.tile_group);
        forward_table(config, chunking, schedule, tiles, tuning, &lands, out)
    })?;
    let window = out.window;
    // The progress log where a timeline is asked for (the epilogue ticks its clock per tile; where
    // the spares trigger, their watchers tick it as they see the counters grow).
    let log = config.fused.timeline.then(|| table.add_progress(nch));
    let out_bytes = table.out_elems as u64 * 4;
    let (runs, per_run) = rank_runs_of(config, &tuning, &packing, out_bytes, &out);
    // No one buffer or binding need hold every rank's operands then ([`operand_buffers`]).
    let own_operands = per_run && (packing.a_bytes > window || packing.b_bytes > window);
    check_sizes(&t, &packing, (&out, out_bytes), own_operands)?;
    // Each landed hop writes its inbox and the adds read it again.
    let extra_bytes = 2 * 4 * table.inbox_elems;
    let counts = spare_counts(&tuning, &table, r)?;
    let (header, fwd) = (table.header, table.fwd);
    let segments = segments(schedule, &runs);
    // B's two windows where one dispatch binds every rank's (a dispatch per run binds its own).
    if !per_run {
        packing.split_b(window, t.max_binding);
    }
    let (jobs, spans) = job_tables(
        config,
        chunking,
        (&packing, &out),
        &runs,
        &segments,
        &fwd,
        t.tile_n,
    );
    let wg: u32 = spans.iter().map(|s| s.1).sum();
    let padding = operands(config, chunking, 0).0;
    // Elements of B from the second window's start on are read from it (never, where B fits one).
    let b_split = packing
        .b_second
        .map_or(u32::MAX, |second| (second / e) as u32);
    // The GEMM's workgroups: a grid no larger than its tiles, or one per tile. Spares in the GEMM's
    // dispatch follow them (ids past the grid, or past `total_wg`).
    let grid = grid_within(t.loop_limit, tuning.grid, wg, r * nch, config.shape.k).min(wg);
    let computing = if grid > 0 { grid } else { wg };
    let in_gemm = match tuning.spare_dispatch {
        SpareDispatch::Gemm => counts.spares,
        SpareDispatch::Own => 0,
    };
    let gemm_params = |jobs: Range<usize>, wg: u32| {
        GemmParams::new(
            config.shape,
            &padding,
            t.tile_n,
            jobs,
            wg,
            t.max_workgroups_per_dim,
        )
    };
    let params = GemmParams {
        dispatch_x: fold(computing + in_gemm, t.max_workgroups_per_dim).0,
        b_split,
        c_split: (window / 4) as u32,
        grid_wg: grid,
        ..gemm_params(0..jobs.len(), wg)
    };
    let (bufs, outs) = pool(
        l,
        (&out, out_bytes),
        table.counter_words,
        &jobs,
        (&header, &fwd),
    );
    let operands = operand_buffers(l, &packing, window, &runs, own_operands);
    let (counters, log) = (bufs.counters, log.map(|log| bufs.log(log)));
    l.bindings
        .push(bufs.binding(Params::Gemm(params), outs, operands.whole, counters));
    let binding = l.bindings.len() - 1;
    let watched = tuning.trigger == Trigger::Spares;
    let gemm: Vec<Dispatch> = if !per_run {
        vec![Dispatch {
            kernel: Kernel::Fused {
                split_b: b_split != u32::MAX,
                split_c: out_bytes > window,
                grid: grid > 0,
                watched,
            },
            binding,
            workgroups: computing + in_gemm,
        }]
    } else {
        per_run_dispatches(
            l,
            (bufs, &out),
            (&runs, &operands.runs),
            &spans,
            |jobs, wg| GemmParams {
                b_split: u32::MAX,
                c_split: u32::MAX,
                ..gemm_params(jobs, wg)
            },
        )
    };
    let dispatches = with_spares(l, bufs, binding, &gemm, &tuning, counts);
    // Cleared through the buffers themselves, as the copies of the previous run read them (a clear
    // through a view would not be ordered after those reads). The ranks' inputs may change between
    // runs: packed on every run.
    let mut commands = packing.copies(&runs, &operands.runs);
    commands.extend(bufs.outs().map(Command::Clear));
    commands.push(Command::Clear(counters));
    let sequential = own_sequential(&t, &commands, &gemm, plan, binding, counts, tuning.land);
    commands.push(Command::Pass(Pass {
        ops: (0..plan.ops.len()).collect(),
        dispatches,
    }));
    commands.extend(copies_back(l, (bufs, &out), &fwd, nch));
    Ok(Fused {
        recording: Recording {
            device: t.device,
            label: "fused",
            commands,
        },
        sequential,
        log,
        extra_bytes,
        tuning,
    })
}

/// The runs of ranks the GEMM's dispatches bind, and whether it has a dispatch per stage and run.
/// The watched GEMM a workgroup per tile is the tracked GEMM itself (the windowed stores' code
/// slows the f32 SIMT GEMM), in dispatches that each bind one run of
/// ranks' outputs and Bs (`rank_runs`): one dispatch where every rank's fit one binding, else one
/// per stage and run in stagger order (the hardware issues dispatches in order), each writing
/// through views of its own so that wgpu puts no barrier between them (so only where the views
/// are made). Elsewhere, and where one rank's output or B alone exceeds a binding, one dispatch
/// over every job through the windows.
fn rank_runs_of(
    config: &Config,
    tuning: &FusedTuning,
    packing: &Packing,
    out_bytes: u64,
    out: &OutLayout,
) -> (Vec<RankRun>, bool) {
    let rank_elems = config.shape.m * config.shape.n;
    let runs = (tuning.trigger == Trigger::Spares && tuning.grid == 0 && config.fused.alias)
        .then(|| rank_runs(out, rank_elems, out_bytes, packing))
        .flatten();
    let per_run = runs.is_some();
    let runs = runs.unwrap_or_else(|| {
        vec![RankRun {
            ranks: 0..config.ranks,
            out: 0..out_bytes,
            b: 0..packing.b_bytes,
            a: 0..packing.a_bytes,
        }]
    });
    (runs, per_run)
}

/// Fused mode's pool buffers but the packed operands' ([`operand_buffers`]): the packed output (as
/// two windows of one buffer, `windows`, or four of two: `out`), the counters, and the uploaded job
/// and forward tables. Returns them and the output's windows.
fn pool(
    l: &mut Lowered,
    (out, out_bytes): (&OutLayout, u64),
    counter_words: usize,
    jobs: &[Job],
    (header, fwd): (&ForwardHeader, &[Forward]),
) -> (Buffers, [Resource; 4]) {
    let window = out.window;
    let (out, out2, outs) = match out.second() {
        None => {
            let (b, lo, hi) = windows(l, "fused outputs (all ranks)", out_bytes, window);
            (b, None, [lo, hi, hi, hi])
        }
        Some(second) => {
            let (b, lo, hi) = windows(
                l,
                "fused outputs (ranks in the first buffer)",
                second,
                window,
            );
            let (b2, lo2, hi2) = windows(
                l,
                "fused outputs (ranks in the second buffer, inboxes)",
                out_bytes - second,
                window,
            );
            (b, Some(b2), [lo, hi, lo2, hi2])
        }
    };
    let counters = l.pool_buffer(
        "fused trackers and transfer queue (all ranks)",
        (counter_words * 4) as u64,
        None,
    );
    let job_bytes = bytemuck::cast_slice(jobs).to_vec();
    let jobs = l.pool_buffer("fused jobs", job_bytes.len() as u64, Some(job_bytes));
    let fwd_bytes = [bytemuck::bytes_of(header), bytemuck::cast_slice(fwd)].concat();
    let forward = l.pool_buffer(
        "fused forward table",
        fwd_bytes.len() as u64,
        Some(fwd_bytes),
    );
    let bufs = Buffers {
        out,
        out2,
        counters,
        jobs,
        forward,
    };
    (bufs, outs)
}

/// The packed operands' buffers: every rank's A in one and B in another (B as two windows, its
/// second from `Packing::b_second` where it has one), each run binding its range of them; or, where
/// each run has operands of its own (`own`: where a dispatch per run binds them and every rank's
/// pass a window), a buffer for each run's A and each run's B.
fn operand_buffers(
    l: &mut Lowered,
    packing: &Packing,
    window: u64,
    runs: &[RankRun],
    own: bool,
) -> Operands {
    if own {
        let runs: Vec<[Span; 2]> = runs
            .iter()
            .map(|run| {
                let [a, b] = [
                    ("fused A (a run of ranks)", &run.a),
                    ("fused B (a run of ranks)", &run.b),
                ]
                .map(|(label, at)| {
                    let bytes = at.end - at.start;
                    span(l.pool_buffer(label, bytes, None), &(0..bytes))
                });
                [a, b]
            })
            .collect();
        let [a, b] = runs[0].map(|s| stub(s.buffer, 0));
        return Operands {
            whole: [a, b, b],
            runs,
        };
    }
    let a = l.pool_buffer("fused A (all ranks)", packing.a_bytes, None);
    let (b, b_lo, b_hi) = windows_from(
        l,
        "fused B (all ranks)",
        packing.b_bytes,
        window,
        packing.b_second.unwrap_or(window),
    );
    Operands {
        runs: runs
            .iter()
            .map(|run| [span(a, &run.a), span(b, &run.b)])
            .collect(),
        whole: [Resource::Buffer(a), b_lo, b_hi],
    }
}

/// Outside the timed pass: results and counters back to the ranks' own buffers.
fn copies_back(
    l: &Lowered,
    (bufs, out): (Buffers, &OutLayout),
    fwd: &[Forward],
    nch: usize,
) -> Vec<Command> {
    let mut commands = Vec::new();
    for loc in l.locs.iter().filter(|loc| loc.buf == Buf::Out) {
        let c = loc.rank * nch + loc.chunk;
        let at = u64::from(fwd[c].off) * 4;
        // A rank's output lies in one buffer (`OutLayout`), so each chunk does.
        let (k, at) = out.locate(&(at..at + u64::from(fwd[c].len) * 4));
        commands.push(Command::Copy {
            src: span(bufs.outs().nth(k).unwrap_or(bufs.out), &at),
            dst: Buffer::Data(*loc),
            dst_offset: 0,
        });
        commands.push(Command::Copy {
            src: Span {
                buffer: bufs.counters,
                offset: (c * 4) as u64,
                bytes: 4,
            },
            dst: Buffer::Tracker(*loc),
            dst_offset: 0,
        });
    }
    commands
}
