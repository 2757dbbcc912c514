//! Modes: how triggers are realised. Each mode is one implementation of [`Mode`] over the same bound
//! plan ([`System`]); adding a mode means one new file here and one entry in [`all`].

mod encoded;
mod fused;
mod host;
pub mod sequential;

use std::time::Instant;

use crate::error::{Error, Result};
use crate::gemm::{self, Engine, GemmKernel, GemmParams, Job, StoreMode};
use crate::gpu::Gpu;
use crate::plan::{Kind, Plan, ReduceVia};
use crate::ranks::Ranks;
use crate::schedule::{Collective, Schedule};
use crate::shaders::Put;
use crate::shapes::{Chunking, Dtype, Shape};
use crate::steps::{Link, StepKernel, StepParams};
use crate::timeline::{Event, EventKind, Lane, Timeline};

pub use encoded::Encoded;
pub use fused::Fused;
pub use host::Host;
pub use sequential::Sequential;

/// One way of running the plan.
pub trait Mode {
    fn name(&self) -> &'static str;
    /// Why this mode cannot run here (a one-line reason), or None.
    fn skip_reason(&self, sys: &System) -> Option<String>;
    /// One repetition: reset the trackers, run the whole plan, return its timing and timeline.
    fn run(&self, sys: &System) -> Result<Run>;
}

/// Every mode, in report order.
pub fn all() -> Vec<Box<dyn Mode>> {
    vec![
        Box::new(Sequential),
        Box::new(Host),
        Box::new(Encoded),
        Box::new(Fused),
    ]
}

/// Mode names accepted on the command line.
pub fn names() -> Vec<&'static str> {
    all().iter().map(|m| m.name()).collect()
}

/// What one repetition measured.
#[derive(Clone, Debug)]
pub struct Run {
    /// First GPU activity to last, microseconds (host clock where the adapter has no timestamps).
    pub total_us: f64,
    /// GEMM-only and step-only time where the mode separates them (sequential), microseconds.
    pub gemm_us: Option<f64>,
    pub comm_us: Option<f64>,
    pub timeline: Timeline,
    /// Host trigger latencies (chunk complete on the GPU clock -> its steps submitted), microseconds.
    pub trigger_latency_us: Vec<f64>,
    /// For each plan op, the (start, end) µs of the interval that contains it at the timeline's grain.
    pub op_spans: Vec<(f64, f64)>,
}

impl Run {
    /// A run made of `passes` (op indices) that took `t` (µs intervals): its total, one timeline event
    /// per lane and pass, and each op's span. Modes add what only they know.
    pub fn from_passes(
        sys: &System,
        mode: &str,
        grain: String,
        passes: &[Vec<usize>],
        t: &[(f64, f64)],
    ) -> Run {
        let mut events = Vec::new();
        for (k, ops) in passes.iter().enumerate() {
            events.extend(sys.pass_events(ops, t[k].0, t[k].1, Some(k)));
        }
        Run {
            total_us: t.last().map(|l| l.1).unwrap_or(0.0) - t.first().map(|f| f.0).unwrap_or(0.0),
            gemm_us: None,
            comm_us: None,
            timeline: Timeline {
                mode: mode.into(),
                grain,
                ranks: sys.config.ranks,
                events,
            },
            trigger_latency_us: vec![],
            op_spans: op_spans(sys.plan.ops.len(), passes, t),
        }
    }
}

/// Each op's span from the passes it ran in.
pub fn op_spans(n_ops: usize, passes: &[Vec<usize>], t: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let mut spans = vec![(f64::NAN, f64::NAN); n_ops];
    for (ops, &span) in passes.iter().zip(t) {
        for &i in ops {
            spans[i] = span;
        }
    }
    spans
}

/// The device's kernels, made once and shared by every system on it.
pub struct Kernels {
    pub gemm: GemmKernel,
    pub step: StepKernel,
}

impl Kernels {
    /// The kernels of f32 runs.
    pub fn new(gpu: &Gpu) -> Result<Self> {
        Self::with(gpu, Dtype::F32, None)
    }

    /// The kernels of runs whose GEMM operands are `dtype`, computed by `engine` (None: the
    /// adapter's best, see [`Engine::resolve`]).
    pub fn with(gpu: &Gpu, dtype: Dtype, engine: Option<Engine>) -> Result<Self> {
        Ok(Kernels {
            gemm: GemmKernel::with(gpu, dtype, engine)?,
            step: StepKernel::new(gpu)?,
        })
    }
}

/// What configures one system.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Config {
    pub shape: Shape,
    pub ranks: usize,
    pub chunks: usize,
    pub collective: Collective,
    pub via: ReduceVia,
    pub link: Link,
    /// Element type of the GEMM operands (outputs and steps are f32 either way).
    pub dtype: Dtype,
    /// Arbitration (software's stand-in for T3's memory-controller arbitration): while a pass holds
    /// GEMM work, the steps in it share at most this many workgroups, so communication yields to
    /// compute; passes without GEMM work, and sequential mode, keep the link budget.
    pub arbitrate: Option<u32>,
    /// Where a pass's steps go among the GEMM workgroups sharing it (encoded and host modes).
    pub step_lead: StepLead,
}

/// Where the steps of a pass that also holds GEMM work are dispatched among its GEMM ops. The GPU
/// starts workgroups in dispatch order, so steps dispatched after all of the pass's GEMM work start
/// only when its last wave leaves slots free, and a step that outlasts that wave stretches the pass
/// (the next GEMM stage waits for it). Dispatching the pass's last GEMM ops after the steps starts
/// the steps earlier; those ops then run in the slots the steps leave, beside them. Too many and
/// they wait for the steps instead. Ops move whole: the two halves of a split op would write one
/// buffer, and wgpu puts a barrier between such dispatches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StepLead {
    /// Where the pass holds at most one step per rank (one chunk per rank's shard), at least as
    /// many GEMM workgroups after the steps as the steps have: the steps take the places of the
    /// GEMM's last workgroups in the dispatch order. Where it holds more, the steps fill most
    /// slots by themselves and GEMM work after them would wait: none.
    Auto,
    /// At least this many GEMM workgroups after the steps, in whole ops (0: all GEMM work before).
    Workgroups(u32),
}

impl StepLead {
    /// "auto" or a workgroup count.
    pub fn parse(s: &str) -> Result<Self> {
        match s.trim() {
            "auto" => Ok(StepLead::Auto),
            v => v.parse().map(StepLead::Workgroups).map_err(|_| {
                Error::invalid(
                    "step lead",
                    s,
                    "auto, or a count of GEMM workgroups (0 = steps after all GEMM work)",
                )
            }),
        }
    }

    pub fn describe(self) -> String {
        match self {
            StepLead::Auto => "auto".into(),
            StepLead::Workgroups(w) => w.to_string(),
        }
    }

    /// GEMM workgroups to dispatch after `steps` steps of `ranks` ranks that use `step_wg`
    /// workgroups.
    pub fn workgroups(self, steps: usize, ranks: usize, step_wg: u32) -> u32 {
        match self {
            StepLead::Auto if steps <= ranks => step_wg,
            StepLead::Auto => 0,
            StepLead::Workgroups(w) => w,
        }
    }
}

impl Config {
    /// Floating-point operations of all ranks' GEMMs: each rank a full partial sum, or (row-split
    /// GEMM before an all-gather) one shard of a single GEMM each.
    pub fn total_flops(&self) -> f64 {
        if self.collective.row_split() {
            self.shape.flops()
        } else {
            self.shape.flops() * self.ranks as f64
        }
    }
}

/// A plan bound to the ranks' buffers: per-op bind groups and params, made once, encoded many times.
pub struct System<'a> {
    pub gpu: &'a Gpu,
    pub kernels: &'a Kernels,
    pub config: Config,
    pub chunking: Chunking,
    pub schedule: Schedule,
    pub plan: Plan,
    pub ranks: Ranks,
    binds: Vec<wgpu::BindGroup>,
    puts: Vec<Put>,
    workgroups: Vec<u32>,
    /// Step ops whose budget arbitration lowers: their bind group and workgroup count when it applies.
    arbitrated: Vec<Option<(wgpu::BindGroup, u32)>>,
    /// GEMM ops dispatched after the steps sharing their pass ([`StepLead`]).
    after_steps: Vec<bool>,
    pub timer: Timer,
    /// Fused mode's packed buffers (or why it cannot run), built on first use and kept.
    pub(crate) fused: std::cell::RefCell<Option<std::result::Result<fused::FusedState, String>>>,
}

impl<'a> System<'a> {
    pub fn new(gpu: &'a Gpu, kernels: &'a Kernels, config: Config) -> Result<Self> {
        if kernels.gemm.dtype != config.dtype {
            return Err(Error::invalid(
                "kernels",
                format!("GEMM kernels for {} operands", kernels.gemm.dtype.name()),
                format!("those of the run's {} operands", config.dtype.name()),
            ));
        }
        let chunking = Chunking::new(config.shape.m, config.ranks, config.chunks)?;
        let schedule = Schedule::new(config.collective, &chunking);
        let tile_n = kernels.gemm.engine.tile_n();
        let plan = Plan::new(&schedule, &chunking, config.shape.n, tile_n, config.via);
        let ranks = Ranks::new(
            gpu,
            config.shape,
            config.dtype,
            config.collective,
            &chunking,
            &plan,
        )?;
        let n = config.shape.n;
        // One uniform slot per op, aligned for binding at an offset.
        let align = gpu.limits.min_uniform_buffer_offset_alignment.max(64) as usize;
        // Slot i holds op i's params; slot n + i the arbitrated variant of step op i.
        let n_ops = plan.ops.len();
        let mut params = vec![0u8; 2 * align * n_ops.max(1)];
        let stages = schedule.gemm_stages();
        let mut steps_at_level = vec![0u32; plan.levels.max(1)];
        for op in plan.ops.iter().filter(|o| o.kind != Kind::Gemm) {
            steps_at_level[op.level] += 1;
        }
        let mut capped = vec![None; n_ops];
        let mut jobs = Vec::new();
        let mut workgroups = Vec::new();
        let mut puts = Vec::new();
        for (i, op) in plan.ops.iter().enumerate() {
            let slot = &mut params[i * align..];
            match op.kind {
                Kind::Gemm => {
                    let rows = chunking.rows(op.dst.chunk);
                    let rb = &ranks.ranks[op.dst.rank];
                    let wg = gemm::tiles(rows.len(), n, tile_n) as u32;
                    let j = jobs.len();
                    let p = GemmParams::new(gpu, config.shape, &rb.layout, tile_n, j..j + 1, wg);
                    jobs.push(Job {
                        row0: rows.start as u32,
                        row1: rows.end as u32,
                        c_row_base: rows.start as u32,
                        a_row_base: rb.a_row_base as u32,
                        ..Default::default()
                    });
                    slot[..std::mem::size_of::<GemmParams>()]
                        .copy_from_slice(bytemuck::bytes_of(&p));
                    workgroups.push(wg);
                    puts.push(Put::Store);
                }
                Kind::Copy { .. } | Kind::Reduce { .. } => {
                    let len4 = (op.elems as u32).div_ceil(4);
                    let link = if op.crosses_link() {
                        config.link
                    } else {
                        Link::Unthrottled
                    };
                    let wg = link.workgroups(len4);
                    let p = StepParams {
                        len4,
                        n_wg: wg,
                        dispatch_x: gpu.fold(wg).0,
                        counter: 0,
                        done_slot: op.done_slot,
                        bump: 1,
                        has_acc: u32::from(op.acc.is_some()),
                        ..Default::default()
                    };
                    slot[..std::mem::size_of::<StepParams>()]
                        .copy_from_slice(bytemuck::bytes_of(&p));
                    workgroups.push(wg);
                    // Passes 0..stages hold GEMM work in the modes that share passes.
                    if let (Some(w), true) = (config.arbitrate, op.level < stages) {
                        let cap = wg.min((w / steps_at_level[op.level]).max(1));
                        if cap < wg {
                            let q = StepParams {
                                n_wg: cap,
                                dispatch_x: gpu.fold(cap).0,
                                ..p
                            };
                            params[(n_ops + i) * align..][..std::mem::size_of::<StepParams>()]
                                .copy_from_slice(bytemuck::bytes_of(&q));
                            capped[i] = Some(cap);
                        }
                    }
                    puts.push(if matches!(op.kind, Kind::Copy { .. }) {
                        Put::Store
                    } else {
                        Put::Add
                    });
                }
            }
        }
        // The step lead: per pass holding both, the shortest run of its last GEMM ops with at least
        // the lead's workgroups goes after its steps.
        let mut after_steps = vec![false; n_ops];
        for level in 0..plan.levels {
            let ops = &plan.ops;
            let at = |gemm: bool| {
                (0..n_ops)
                    .filter(move |&i| ops[i].level == level && (ops[i].kind == Kind::Gemm) == gemm)
            };
            let step_wg: u32 = at(false).map(|i| capped[i].unwrap_or(workgroups[i])).sum();
            if step_wg == 0 {
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
                after_steps[i] = true;
                left = left.saturating_sub(workgroups[i]);
            }
        }
        let pbuf = gpu.init_buffer("op params", &params, wgpu::BufferUsages::UNIFORM);
        if jobs.is_empty() {
            jobs.push(Job::default());
        }
        let jbuf = gpu.init_buffer(
            "gemm jobs",
            bytemuck::cast_slice(&jobs),
            wgpu::BufferUsages::STORAGE,
        );
        let bind_op = |i: usize, slot: usize| {
            let op = &plan.ops[i];
            let dst = &ranks.locs[&op.dst];
            // Bound to its own slot: a binding that ran to the end of the buffer would exceed
            // max_uniform_buffer_binding_size once there are many ops.
            let uniform = wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                buffer: &pbuf,
                offset: (slot * align) as u64,
                size: wgpu::BufferSize::new(align as u64),
            });
            match op.kind {
                Kind::Gemm => {
                    let rb = &ranks.ranks[op.dst.rank];
                    crate::shaders::bind(
                        gpu,
                        "gemm op",
                        &kernels.gemm.layout,
                        &[
                            dst.data.as_entire_binding(),
                            uniform,
                            rb.a.as_entire_binding(),
                            rb.b.as_entire_binding(),
                            dst.tracker.as_entire_binding(),
                            jbuf.as_entire_binding(),
                        ],
                    )
                }
                Kind::Copy { src } | Kind::Reduce { src } => crate::shaders::bind(
                    gpu,
                    "step op",
                    &kernels.step.layout,
                    &[
                        dst.data.as_entire_binding(),
                        uniform,
                        ranks.locs[&src].data.as_entire_binding(),
                        dst.tracker.as_entire_binding(),
                        ranks.locs[&op.acc.unwrap_or(src)].data.as_entire_binding(),
                    ],
                ),
            }
        };
        let (binds, arbitrated) = gpu.scoped("binding the plan's ops", || {
            let binds: Vec<_> = (0..n_ops).map(|i| bind_op(i, i)).collect();
            let arbitrated: Vec<_> = (0..n_ops)
                .map(|i| capped[i].map(|w| (bind_op(i, n_ops + i), w)))
                .collect();
            (binds, arbitrated)
        })?;
        let timer = Timer::new(gpu, (2 * (plan.ops.len() + plan.levels + 8)) as u32);
        Ok(System {
            gpu,
            kernels,
            config,
            chunking,
            schedule,
            plan,
            ranks,
            binds,
            puts,
            workgroups,
            arbitrated,
            after_steps,
            timer,
            fused: Default::default(),
        })
    }

    /// Records op `i` into `pass`; `store` picks the GEMM's pipeline (tracked, or untracked for
    /// T_gemm); `shared` says the pass also holds GEMM work, where arbitration (if configured) lowers
    /// a step's workgroups.
    pub fn encode_op(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        i: usize,
        store: StoreMode,
        shared: bool,
    ) {
        match self.plan.ops[i].kind {
            Kind::Gemm => self.kernels.gemm.dispatch(
                self.gpu,
                pass,
                store,
                &self.binds[i],
                self.workgroups[i],
            ),
            _ => {
                let (bg, wg) = match (&self.arbitrated[i], shared) {
                    (Some((bg, wg)), true) => (bg, *wg),
                    _ => (&self.binds[i], self.workgroups[i]),
                };
                self.kernels
                    .step
                    .dispatch(self.gpu, pass, self.puts[i], bg, wg)
            }
        }
    }

    /// Records the ops of one pass: in order, except that where the pass holds both GEMM and step
    /// ops, the GEMM ops the step lead names go after the steps.
    pub fn encode_pass(&self, pass: &mut wgpu::ComputePass<'_>, ops: &[usize], store: StoreMode) {
        let is_gemm = |i: usize| self.plan.ops[i].kind == Kind::Gemm;
        let shared = ops.iter().any(|&i| is_gemm(i)) && ops.iter().any(|&i| !is_gemm(i));
        let late = |i: usize| shared && is_gemm(i) && self.after_steps[i];
        for &i in ops.iter().filter(|&&i| !late(i)) {
            self.encode_op(pass, i, store, shared);
        }
        for &i in ops.iter().filter(|&&i| late(i)) {
            self.encode_op(pass, i, store, shared);
        }
    }

    /// Indices of the GEMM ops and of the step ops, each in plan order.
    pub fn gemm_ops(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.plan.ops.len()).filter(|&i| self.plan.ops[i].kind == Kind::Gemm)
    }

    pub fn step_ops(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.plan.ops.len()).filter(|&i| self.plan.ops[i].kind != Kind::Gemm)
    }

    /// Device memory held: the ranks' buffers, plus fused mode's packed copies once built.
    pub fn device_bytes(&self) -> u64 {
        let fused = self.fused.borrow();
        self.ranks.allocated
            + fused
                .as_ref()
                .and_then(|f| f.as_ref().ok())
                .map_or(0, |f| f.bytes)
    }

    /// The bound on waiting for the whole plan.
    pub fn timeout(&self) -> std::time::Duration {
        self.gpu
            .timeout_for(self.config.total_flops(), self.plan.step_bytes() as f64)
    }

    /// Submits `enc` and waits for it (bounded), returning host seconds from submit to completion.
    pub fn submit_wait(&self, what: &str, enc: wgpu::CommandEncoder) -> Result<f64> {
        let t0 = Instant::now();
        let idx = self.gpu.submit(what, vec![enc.finish()])?;
        self.gpu.wait(Some(idx), what, self.timeout())?;
        Ok(t0.elapsed().as_secs_f64())
    }

    /// Timeline events for op indices that ran in one pass over [start, end] µs: one event per lane.
    pub fn pass_events(
        &self,
        ops: &[usize],
        start: f64,
        end: f64,
        stage: Option<usize>,
    ) -> Vec<Event> {
        let mut groups: Vec<(Lane, EventKind, usize, Vec<usize>)> = Vec::new();
        for &i in ops {
            let op = &self.plan.ops[i];
            let (lane, kind, rank) = match op.kind {
                Kind::Gemm => (
                    Lane::Gemm { rank: op.dst.rank },
                    EventKind::Gemm,
                    op.dst.rank,
                ),
                Kind::Copy { .. } => (
                    Lane::Step { rank: op.dst.rank },
                    EventKind::Copy,
                    op.dst.rank,
                ),
                Kind::Reduce { .. } => (
                    Lane::Step { rank: op.dst.rank },
                    EventKind::Reduce,
                    op.dst.rank,
                ),
            };
            match groups.iter_mut().find(|g| g.0 == lane && g.1 == kind) {
                Some(g) => g.3.push(op.dst.chunk),
                None => groups.push((lane, kind, rank, vec![op.dst.chunk])),
            }
        }
        groups
            .into_iter()
            .map(|(lane, kind, rank, chunks)| Event {
                lane,
                kind,
                name: format!(
                    "r{rank} {} c{}",
                    match kind {
                        EventKind::Gemm => "gemm",
                        EventKind::Copy => "copy",
                        _ => "reduce",
                    },
                    chunks
                        .iter()
                        .map(|c| c.to_string())
                        .collect::<Vec<_>>()
                        .join(",")
                ),
                rank,
                chunk: (chunks.len() == 1).then(|| chunks[0]),
                stage,
                start_us: start,
                end_us: end,
            })
            .collect()
    }
}

/// GPU timestamps at compute-pass boundaries (the grain every mode reports), or the host clock.
pub struct Timer {
    set: Option<wgpu::QuerySet>,
    resolve: Option<wgpu::Buffer>,
    cap: u32,
    next: std::cell::Cell<u32>,
    period_ns: f64,
    /// Whether the last run's passes all got timestamps (false once the query set ran out).
    covered: std::cell::Cell<bool>,
}

impl Timer {
    fn new(gpu: &Gpu, want: u32) -> Self {
        if !gpu.has(wgpu::Features::TIMESTAMP_QUERY) {
            return Timer {
                set: None,
                resolve: None,
                cap: 0,
                next: 0.into(),
                covered: false.into(),
                period_ns: 0.0,
            };
        }
        let cap = want.clamp(2, wgpu::QUERY_SET_MAX_QUERIES) & !1;
        let set = gpu.device.create_query_set(&wgpu::QuerySetDescriptor {
            label: Some("pass timestamps"),
            ty: wgpu::QueryType::Timestamp,
            count: cap,
        });
        let resolve = gpu.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("timestamp resolve"),
            size: (cap as u64 * 8).next_multiple_of(256),
            usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        Timer {
            set: Some(set),
            resolve: Some(resolve),
            cap,
            next: 0.into(),
            covered: true.into(),
            period_ns: gpu.queue.get_timestamp_period() as f64,
        }
    }

    /// Whether passes get GPU timestamps.
    pub fn gpu_clock(&self) -> bool {
        self.set.is_some()
    }

    /// Starts a run: pass numbering restarts.
    pub fn reset(&self) {
        self.next.set(0);
        self.covered.set(self.set.is_some());
    }

    /// Marks the current run as not fully timestamped (its times are host-clock estimates).
    pub fn mark_uncovered(&self) {
        self.covered.set(false);
    }

    /// Timestamp writes for the next pass (None once the query set is full or absent).
    pub fn writes(&self) -> Option<wgpu::ComputePassTimestampWrites<'_>> {
        let set = self.set.as_ref()?;
        let i = self.next.get();
        if i + 2 > self.cap {
            return None;
        }
        self.next.set(i + 2);
        Some(wgpu::ComputePassTimestampWrites {
            query_set: set,
            beginning_of_pass_write_index: Some(i),
            end_of_pass_write_index: Some(i + 1),
        })
    }

    /// Resolves and reads every pass's (begin, end) since `reset`, in µs from the first begin.
    pub fn read(&self, gpu: &Gpu) -> Result<Vec<(f64, f64)>> {
        let (Some(set), Some(resolve)) = (&self.set, &self.resolve) else {
            return Ok(vec![]);
        };
        let n = self.next.get();
        if n == 0 {
            return Ok(vec![]);
        }
        let mut enc = gpu.device.create_command_encoder(&Default::default());
        enc.resolve_query_set(set, 0..n, resolve, 0);
        let staging = gpu.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("timestamp readback"),
            size: n as u64 * 8,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        enc.copy_buffer_to_buffer(resolve, 0, &staging, 0, n as u64 * 8);
        let idx = gpu.submit("resolving timestamps", vec![enc.finish()])?;
        let bytes = gpu.map_read("timestamps", &staging, idx, n as u64 * 8)?;
        let ticks: Vec<u64> = bytemuck::pod_collect_to_vec(&bytes);
        let t0 = ticks[0];
        let us = |t: u64| t.saturating_sub(t0) as f64 * self.period_ns / 1e3;
        Ok(ticks
            .chunks(2)
            .map(|p| (us(p[0]), us(p[1]).max(us(p[0]))))
            .collect())
    }

    /// Nanoseconds per timestamp tick.
    pub fn period_ns(&self) -> f64 {
        self.period_ns
    }
}

/// Runs `passes` (each a list of op indices, GEMMs first) as one submission with a timestamp per pass;
/// returns the passes' intervals in µs (host-clock estimate when there are no timestamps).
pub fn run_passes(
    sys: &System,
    passes: &[Vec<usize>],
    store: StoreMode,
    what: &str,
) -> Result<Vec<(f64, f64)>> {
    sys.timer.reset();
    let mut enc = sys
        .gpu
        .device
        .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some(what) });
    sys.ranks.reset_trackers(&mut enc);
    for ops in passes {
        let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some(what),
            timestamp_writes: sys.timer.writes(),
        });
        sys.encode_pass(&mut pass, ops, store);
    }
    let host_s = sys.submit_wait(what, enc)?;
    let mut t = sys.timer.read(sys.gpu)?;
    if t.len() < passes.len() {
        // No (or not enough) timestamps: spread the host time evenly, and say so in the grain.
        sys.timer.mark_uncovered();
        let each = host_s * 1e6 / passes.len().max(1) as f64;
        t = (0..passes.len())
            .map(|i| (i as f64 * each, (i + 1) as f64 * each))
            .collect();
    }
    Ok(t)
}

/// The grain string for timelines of pass-structured modes.
pub fn grain(sys: &System) -> String {
    if sys.timer.gpu_clock() && sys.timer.covered.get() {
        "pass (GPU timestamps at compute-pass boundaries)".into()
    } else if sys.timer.gpu_clock() {
        "submission (host clock: more passes than the timestamp query set holds)".into()
    } else {
        "submission (host clock; adapter has no timestamp queries)".into()
    }
}
