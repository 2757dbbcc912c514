//! The executor: binds a lowered plan to its device once (every binding's params in one uniform
//! buffer, the pooled buffers, the bind groups) and encodes and submits any of its recordings, timing
//! their passes with the one pass timer; or binds standalone work over pool buffers and handed ones
//! (the tracked GEMM of tests and benches, the link calibrations' and the step bench's steps) and
//! encodes its recordings into a caller's encoder. The one place that binds and encodes the modes'
//! and that work's dispatches.

use std::collections::HashMap;
use web_time::Instant;

use crate::error::{Error, Result};
use crate::gather::GatherKernel;
use crate::gemm::{Engine, FusedPut, GemmKernel};
use crate::gpu::Gpu;
use crate::lower::{Buffer, Command, DeviceId, Group, Kernel, LinkBox, Lowered, Resource, Target};
use crate::ranks::Ranks;
use crate::readback::PendingRead;
use crate::shapes::Dtype;
use crate::steps::StepKernel;
use crate::timestamps::Timestamps;

/// llvmpipe ends every loop of an invocation once all its loops together have iterated this often
/// (Mesa's gallivm, LP_MAX_TGSI_LOOP_ITERATIONS), whatever the shader says.
const LLVMPIPE_LOOP_LIMIT: u32 = 65535;

/// The loop cap of `gpu`'s driver, where it has one (llvmpipe).
pub(crate) fn loop_limit(gpu: &Gpu) -> Option<u32> {
    (gpu.info.device_type == wgpu::DeviceType::Cpu && gpu.info.driver == "llvmpipe")
        .then_some(LLVMPIPE_LOOP_LIMIT)
}

/// The device's kernels, made once and shared by every system on it.
pub struct Kernels {
    pub gemm: GemmKernel,
    pub step: StepKernel,
    pub gather: GatherKernel,
}

impl Kernels {
    /// The kernels of f32 runs.
    pub fn new(gpu: &Gpu) -> Result<Self> {
        Self::with(gpu, Dtype::F32, None)
    }

    /// The kernels of runs whose GEMM operands are `dtype`, computed by `engine` (None: the
    /// adapter's best, see [`Engine::resolve`]).
    pub fn with(gpu: &Gpu, dtype: Dtype, engine: Option<Engine>) -> Result<Self> {
        Self::with_put(gpu, dtype, engine, FusedPut::Auto)
    }

    /// As [`Kernels::with`], fused mode's put chosen by `put`.
    pub fn with_put(
        gpu: &Gpu,
        dtype: Dtype,
        engine: Option<Engine>,
        put: FusedPut,
    ) -> Result<Self> {
        Self::for_outputs(gpu, dtype, Dtype::F32, engine, put)
    }

    /// As [`Kernels::with_put`], the GEMM's plain stores and the steps' copies and adds moving
    /// outputs of type `out` (`Config::out_dtype`).
    pub fn for_outputs(
        gpu: &Gpu,
        dtype: Dtype,
        out: Dtype,
        engine: Option<Engine>,
        put: FusedPut,
    ) -> Result<Self> {
        if engine == Some(Engine::Coopmat2) {
            return Err(crate::Error::invalid(
                "GEMM kernel",
                "coopmat2",
                "auto, simt or coop (the coopmat2 kernel has only its tracked store and untracked \
                 GEMM so far: bench-gemm's --kernel coopmat2)",
            ));
        }
        Ok(Kernels {
            gemm: GemmKernel::for_outputs(gpu, dtype, out, engine, put)?,
            step: StepKernel::for_outputs(gpu, out)?,
            gather: GatherKernel::new(gpu)?,
        })
    }

    /// What lowering needs to know of `gpu` (as device `device`) and these kernels.
    pub fn target(&self, gpu: &Gpu, device: DeviceId) -> Target {
        target(gpu, self.gemm.engine, device)
    }
}

/// What lowering needs to know of `gpu` (as device `device`) and the `engine` of its GEMM kernel.
pub fn target(gpu: &Gpu, engine: Engine, device: DeviceId) -> Target {
    Target {
        device,
        tile_n: engine.tile_n(),
        tile_group: engine.tile_group(),
        max_workgroups_per_dim: gpu.max_workgroups_per_dim,
        uniform_align: u64::from(gpu.limits.min_uniform_buffer_offset_alignment).max(64),
        max_buffer: gpu.max_buffer,
        max_binding: gpu.max_binding,
        host_mapped: gpu.has(wgpu::Features::MAPPABLE_PRIMARY_BUFFERS),
        loop_limit: loop_limit(gpu),
        sms: gpu.sms,
        gemm_per_sm: engine.per_sm(),
    }
}

/// What lowering a step alone needs to know of `gpu` (as device `device`): it reads no GEMM field.
pub fn step_target(gpu: &Gpu, device: DeviceId) -> Target {
    target(gpu, Engine::Simt, device)
}

/// The kernels an executor dispatches: a device's whole set, or a caller's one kernel for standalone
/// work ([`Executor::pooled`]): the tracked GEMM's (coopmat2's included, which no [`Kernels`] holds)
/// or the calibrated step's.
#[derive(Clone, Copy)]
pub enum KernelSet<'a> {
    All(&'a Kernels),
    Gemm(&'a GemmKernel),
    Step(&'a StepKernel),
}

impl<'a> KernelSet<'a> {
    fn gemm(self) -> Result<&'a GemmKernel> {
        match self {
            KernelSet::All(k) => Ok(&k.gemm),
            KernelSet::Gemm(g) => Ok(g),
            KernelSet::Step(_) => Err(self.lacks("a GEMM")),
        }
    }

    fn step(self) -> Result<&'a StepKernel> {
        match self {
            KernelSet::All(k) => Ok(&k.step),
            KernelSet::Step(s) => Ok(s),
            KernelSet::Gemm(_) => Err(self.lacks("a step")),
        }
    }

    fn gather(self) -> Result<&'a GatherKernel> {
        match self {
            KernelSet::All(k) => Ok(&k.gather),
            _ => Err(self.lacks("a gather")),
        }
    }

    fn lacks(self, what: &str) -> Error {
        let held = match self {
            KernelSet::All(_) => "every kernel",
            KernelSet::Gemm(_) => "one GEMM kernel",
            KernelSet::Step(_) => "one step kernel",
        };
        Error::invalid(
            "recording",
            format!("one dispatching {what}"),
            format!("what this executor's kernels run (it holds {held})"),
        )
    }
}

/// How a recording's passes are timestamped: from [`Executor::timer`], or the first by a caller's
/// series ([`crate::timestamps::time_series`]).
enum Stamps<'t> {
    Timer,
    Given(Option<wgpu::ComputePassTimestampWrites<'t>>),
}

/// A submission handed to the queue and not waited for.
pub struct Launched {
    pub started: Instant,
    pub submitted: Instant,
    pub index: wgpu::SubmissionIndex,
    /// Its `Command::Read`, mapping once the submission completes.
    pub read: Option<PendingRead>,
    /// Set once the submission completed (polled: see [`Launched::is_done`]).
    done: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl Launched {
    /// Whether the submission completed, as of the device's last poll (never blocks).
    pub fn is_done(&self) -> bool {
        self.done.load(std::sync::atomic::Ordering::Acquire)
    }
}

/// One device's bound recordings.
pub struct Executor<'a> {
    gpu: &'a Gpu,
    kernels: KernelSet<'a>,
    device: DeviceId,
    /// Binding i's params at byte i * align.
    params: wgpu::Buffer,
    align: u64,
    pool: Vec<Option<wgpu::Buffer>>,
    /// Pool buffer i's further views where it has `views` and the device can make them.
    aliases: Vec<Vec<wgpu::Buffer>>,
    /// The host links' buffers on this device.
    links: HashMap<LinkBox, wgpu::Buffer>,
    groups: Vec<Option<wgpu::BindGroup>>,
    /// Device memory of the pooled working buffers made so far.
    allocated: u64,
    pub timer: Timestamps,
    /// Launches leave the timestamps unresolved (a trigger loop's series; `ticks` resolves them).
    pub defer_resolve: bool,
}

/// The buffers a recording's handles name, borrowed from their owners.
struct Buffers<'b> {
    /// None for recordings whose buffers are all pooled ([`Executor::pooled`]).
    ranks: Option<&'b Ranks>,
    pool: &'b [Option<wgpu::Buffer>],
    aliases: &'b [Vec<wgpu::Buffer>],
    links: &'b HashMap<LinkBox, wgpu::Buffer>,
}

/// The ranks whose buffers a handle names: present wherever one is named, since a recording run
/// without them is checked to name pool buffers alone.
fn ranked(ranks: Option<&Ranks>) -> &Ranks {
    ranks.expect("recordings run without ranks name pool buffers alone (`pool_only`)")
}

/// The bindings and buffers `commands` use.
fn uses(commands: &[Command]) -> (Vec<usize>, Vec<Buffer>) {
    let mut bindings = Vec::new();
    let mut buffers = Vec::new();
    for c in commands {
        match c {
            Command::Pass(p) => bindings.extend(p.dispatches.iter().map(|d| d.binding)),
            Command::Clear(b) => buffers.push(*b),
            Command::Copy { src, dst, .. } => buffers.extend([src.buffer, *dst]),
            Command::Read(spans) => buffers.extend(spans.iter().map(|s| s.buffer)),
        }
    }
    (bindings, buffers)
}

/// Refuses `bindings` or `buffers` of `lowered` that name a rank's buffer or a link's not in
/// `links`: what runs without ranks binds only what the executor makes or is handed.
fn pool_only(
    lowered: &Lowered,
    links: &HashMap<LinkBox, wgpu::Buffer>,
    bindings: &[usize],
    buffers: &[Buffer],
) -> Result<()> {
    let bound = bindings
        .iter()
        .flat_map(|&i| &lowered.bindings[i].resources)
        .filter_map(|r| r.buffer());
    let made_here = |b: &Buffer| match b {
        Buffer::Pool(_) | Buffer::View(..) => true,
        Buffer::Link(k) => links.contains_key(k),
        _ => false,
    };
    match buffers.iter().copied().chain(bound).find(|b| !made_here(b)) {
        None => Ok(()),
        Some(b) => Err(Error::invalid(
            "recording without ranks",
            format!("one naming {b:?}"),
            "pool buffers and the link buffers handed alone",
        )),
    }
}

/// What a caller hands [`Executor::pooled`]: the host links' buffers its recordings name, and
/// buffers of its own bound in place of plain pool buffers (what it uploads to or reads back, or
/// shares between executors, as the host link calibration's payload and counters).
#[derive(Default)]
pub struct Handed<'h> {
    pub links: HashMap<LinkBox, wgpu::Buffer>,
    pub pool: Vec<(Buffer, &'h wgpu::Buffer)>,
}

/// The wgpu buffer `b` names.
fn resolve<'b>(bufs: &Buffers<'b>, b: Buffer) -> &'b wgpu::Buffer {
    let Buffers {
        ranks,
        pool,
        aliases,
        links,
    } = *bufs;
    match b {
        Buffer::Link(k) => links
            .get(&k)
            .expect("the host links' buffers are imported before use"),
        Buffer::Data(l) => &ranked(ranks).locs[&l].data,
        Buffer::Tracker(l) => &ranked(ranks).locs[&l].tracker,
        Buffer::A(p) => &ranked(ranks).rank(p).a,
        Buffer::B(p) => &ranked(ranks).rank(p).b,
        Buffer::Pool(i) => pool[i]
            .as_ref()
            .expect("pooled buffers are made before use"),
        // No view of its own: the buffer itself (wgpu then orders the dispatches that share it).
        Buffer::View(i, k) => aliases[i]
            .get(k - 1)
            .or(pool[i].as_ref())
            .expect("pooled buffers are made before use"),
    }
}

impl<'a> Executor<'a> {
    /// Binds every plan op of `lowered` over `ranks`' buffers and `links` (the host links' buffers
    /// on this device; host mode picks among the ops at run time); what only fused mode uses is made
    /// on its first run. `passes`: most passes one series of submissions times.
    pub fn new(
        gpu: &'a Gpu,
        kernels: &'a Kernels,
        ranks: &Ranks,
        lowered: &Lowered,
        links: HashMap<LinkBox, wgpu::Buffer>,
        passes: u32,
    ) -> Result<Self> {
        let timer = Timestamps::new(gpu, passes);
        let mut ex = Self::unbound(gpu, KernelSet::All(kernels), lowered, links, timer);
        let ops: Vec<usize> = lowered
            .ops
            .iter()
            .flatten()
            .flat_map(|o| std::iter::once(o.dispatch).chain(o.shared))
            .map(|d| d.binding)
            .collect();
        gpu.scoped("binding the plan's ops", || {
            ops.iter()
                .try_for_each(|&b| ex.bind(Some(ranks), lowered, b))
        })??;
        Ok(ex)
    }

    /// Binds every binding of `lowered`, whose buffers must all be its pool's or `handed` links'
    /// (no plan's ranks: standalone work, core's `lower_tracked_gemm` and `lower_step`), to dispatch
    /// `kernels`, the pool buffers `handed` gives bound to its buffers. Its recordings run through
    /// [`Executor::record`], timed by the caller's series (its own timer has no query set).
    pub fn pooled(
        gpu: &'a Gpu,
        kernels: KernelSet<'a>,
        lowered: &Lowered,
        handed: Handed,
    ) -> Result<Self> {
        let all: Vec<usize> = (0..lowered.bindings.len()).collect();
        pool_only(lowered, &handed.links, &all, &[])?;
        let timer = Timestamps::host_clock();
        let mut ex = Self::unbound(gpu, kernels, lowered, handed.links, timer);
        for (b, buffer) in handed.pool {
            let plain = match b {
                Buffer::Pool(i) => lowered.pool.get(i).filter(|p| {
                    p.init.is_none() && p.views == 0 && !p.windowed && buffer.size() >= p.bytes
                }),
                _ => None,
            };
            let (Buffer::Pool(i), Some(_)) = (b, plain) else {
                return Err(Error::invalid(
                    "handed buffer",
                    format!("{} bytes for {b:?}", buffer.size()),
                    "one for a plain pool buffer of the lowering, at least as long",
                ));
            };
            ex.pool[i] = Some(buffer.clone());
        }
        gpu.scoped("binding a pooled recording", || {
            all.iter().try_for_each(|&b| ex.bind(None, lowered, b))
        })??;
        Ok(ex)
    }

    /// The executor of `lowered` with its params uploaded and nothing bound yet.
    fn unbound(
        gpu: &'a Gpu,
        kernels: KernelSet<'a>,
        lowered: &Lowered,
        links: HashMap<LinkBox, wgpu::Buffer>,
        timer: Timestamps,
    ) -> Self {
        let align = lowered.target.uniform_align;
        let mut bytes = vec![0u8; (align as usize) * lowered.bindings.len().max(1)];
        for (i, b) in lowered.bindings.iter().enumerate() {
            let p = b.params.bytes();
            bytes[i * align as usize..][..p.len()].copy_from_slice(p);
        }
        let params = gpu.init_buffer("binding params", &bytes, wgpu::BufferUsages::UNIFORM);
        Executor {
            gpu,
            kernels,
            device: lowered.target.device,
            params,
            align,
            pool: vec![None; lowered.pool.len()],
            aliases: vec![Vec::new(); lowered.pool.len()],
            links,
            groups: vec![None; lowered.bindings.len()],
            allocated: 0,
            timer,
            defer_resolve: false,
        }
    }

    /// Device memory of the pooled working buffers made so far (tables aside).
    pub fn allocated(&self) -> u64 {
        self.allocated
    }

    /// Pool buffer `b`, where a launch made it.
    fn made(&self, b: Buffer) -> Result<&wgpu::Buffer> {
        let made = match b {
            Buffer::Pool(i) => self.pool.get(i).and_then(|p| p.as_ref()),
            _ => None,
        };
        made.ok_or_else(|| Error::invalid("pool buffer", format!("{b:?}"), "one a launch made"))
    }

    /// `bytes` at byte `offset` of pool buffer `b` (one a launch made), read back now (bounded wait).
    pub fn read_pool(&self, what: &str, b: Buffer, offset: u64, bytes: u64) -> Result<Vec<u8>> {
        self.gpu.read(what, self.made(b)?, offset, bytes)
    }

    /// Writes `bytes` at byte `offset` of pool buffer `b` (one a launch made), before the next
    /// submission.
    pub fn write_pool(&self, b: Buffer, offset: u64, bytes: &[u8]) -> Result<()> {
        self.gpu.queue.write_buffer(self.made(b)?, offset, bytes);
        Ok(())
    }

    fn make_pooled(&mut self, lowered: &Lowered, i: usize) -> Result<()> {
        if self.pool[i].is_some() {
            return Ok(());
        }
        let b = &lowered.pool[i];
        let buffer = match &b.init {
            Some(contents) => self.gpu.init_buffer(
                b.label,
                contents,
                // COPY_DST: a table may be changed between runs (fused mode's log switch).
                wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
            ),
            None => {
                let usage = wgpu::BufferUsages::STORAGE
                    | wgpu::BufferUsages::COPY_DST
                    | wgpu::BufferUsages::COPY_SRC;
                let views = if b.views > 0 && lowered.alias {
                    // The checks the unaliased buffers below make themselves.
                    if b.windowed {
                        self.gpu.check_windowed(b.label, b.bytes)?;
                    } else {
                        self.gpu.check_binding(b.label, b.bytes)?;
                    }
                    let bytes = crate::shapes::buffer_bytes(b.bytes);
                    // SAFETY: lowering gives views only to fused mode's output and counters; its
                    // recording clears both on every run before the pass, the GEMM's dispatches
                    // write disjoint tiles and distinct counters' increments (atomics), and the
                    // fused protocol orders the spares' accesses against them (src/alias.rs).
                    unsafe {
                        crate::alias::views(&self.gpu.device, b.label, bytes, usage, b.views + 1)
                    }
                } else {
                    None
                };
                let buffer = match views {
                    Some(mut views) => {
                        self.aliases[i] = views.split_off(1);
                        views.pop().expect("views(.., n >= 1) makes n")
                    }
                    None if b.windowed => self.gpu.windowed_buffer(b.label, b.bytes, usage)?,
                    None => self.gpu.buffer(b.label, b.bytes, usage)?,
                };
                self.allocated += buffer.size();
                buffer
            }
        };
        self.pool[i] = Some(buffer);
        Ok(())
    }

    fn bind(&mut self, ranks: Option<&Ranks>, lowered: &Lowered, i: usize) -> Result<()> {
        if self.groups[i].is_some() {
            return Ok(());
        }
        let binding = &lowered.bindings[i];
        for r in &binding.resources {
            if let Some(Buffer::Pool(p) | Buffer::View(p, _)) = r.buffer() {
                self.make_pooled(lowered, p)?;
            }
        }
        let bufs = Buffers {
            ranks,
            pool: &self.pool,
            aliases: &self.aliases,
            links: &self.links,
        };
        let entries: Vec<_> = binding
            .resources
            .iter()
            .map(|&r| match r {
                // Bound to its own slot: a binding that ran to the end of the buffer would exceed
                // max_uniform_buffer_binding_size once there are many ops.
                Resource::Params => wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                    buffer: &self.params,
                    offset: i as u64 * self.align,
                    size: wgpu::BufferSize::new(self.align),
                }),
                Resource::Buffer(b) => resolve(&bufs, b).as_entire_binding(),
                Resource::Window(s) => wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                    buffer: resolve(&bufs, s.buffer),
                    offset: s.offset,
                    size: wgpu::BufferSize::new(s.bytes),
                }),
            })
            .collect();
        let layout = match binding.group {
            Group::Gemm => &self.kernels.gemm()?.layout,
            Group::Step => &self.kernels.step()?.layout,
            Group::Fused => &self.kernels.gemm()?.fused_layout,
            Group::Gather => &self.kernels.gather()?.layout,
        };
        let named: Vec<_> = binding.group.roles().iter().copied().zip(entries).collect();
        let group = crate::shaders::bind(
            self.gpu,
            "plan binding",
            layout,
            binding.group.roles(),
            &named,
        );
        self.groups[i] = Some(group);
        Ok(())
    }

    /// Makes what a recording uses (its `bindings` and `buffers`) that is not made yet (fused mode's
    /// packing, on its first run).
    fn prepare(
        &mut self,
        ranks: Option<&Ranks>,
        lowered: &Lowered,
        (bindings, buffers): (Vec<usize>, Vec<Buffer>),
    ) -> Result<()> {
        for b in buffers {
            if let Buffer::Pool(i) | Buffer::View(i, _) = b {
                self.make_pooled(lowered, i)?;
            }
        }
        if bindings.iter().all(|&b| self.groups[b].is_some()) {
            return Ok(());
        }
        self.gpu.scoped("binding a recording", || {
            bindings
                .iter()
                .try_for_each(|&b| self.bind(ranks, lowered, b))
        })?
    }

    /// Encodes `commands` (of a recording of `lowered` on this executor's device) and submits them,
    /// returning at once: the caller waits (bounded) or polls the device, and collects the reads
    /// (already asked to map) when the submission is done. Passes take timestamps from
    /// [`Executor::timer`] (the caller resets it where a series starts).
    pub fn launch(
        &mut self,
        ranks: &Ranks,
        lowered: &Lowered,
        label: &str,
        commands: &[Command],
    ) -> Result<Launched> {
        debug_assert_eq!(lowered.target.device, self.device);
        self.prepare(Some(ranks), lowered, uses(commands))?;
        let gpu = self.gpu;
        let mut enc = gpu
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some(label) });
        let read = self.encode(&mut enc, Some(ranks), label, commands, Stamps::Timer)?;
        // The passes' timestamps travel with them: reading them later maps, it does not submit.
        // Except in a series that defers it: each copy after a submission's last pass idles the
        // GPU before the next (tens of µs on the H200), inside the time a trigger
        // loop measures; it reads them once, after its last submission.
        if !self.defer_resolve {
            self.timer.encode_resolve(&mut enc);
        }
        let cmds = enc.finish();
        let started = Instant::now();
        let index = gpu.submit(label, vec![cmds])?;
        let submitted = Instant::now();
        let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = done.clone();
        // Registered right after the submit: it fires when this submission (and all before it) is done.
        gpu.queue
            .on_submitted_work_done(move || flag.store(true, std::sync::atomic::Ordering::Release));
        Ok(Launched {
            started,
            submitted,
            index,
            read: read.map(|(staging, total)| gpu.map_later(label, staging, total)),
            done,
        })
    }

    /// Encodes `commands` of `lowered`, whose buffers are all its pool's or handed, into a caller's
    /// encoder, its first pass timestamped by `timestamps`: one run of a caller's series
    /// ([`crate::timestamps::time_series`], which submits and waits). A read is refused: it maps
    /// only after a launch.
    pub fn record(
        &mut self,
        enc: &mut wgpu::CommandEncoder,
        lowered: &Lowered,
        label: &str,
        commands: &[Command],
        timestamps: Option<wgpu::ComputePassTimestampWrites<'_>>,
    ) -> Result<()> {
        debug_assert_eq!(lowered.target.device, self.device);
        let (bindings, buffers) = uses(commands);
        pool_only(lowered, &self.links, &bindings, &buffers)?;
        if commands.iter().any(|c| matches!(c, Command::Read(_))) {
            return Err(Error::invalid(
                "recorded recording",
                format!("{label} with a read"),
                "no read (a read maps only after a launch)",
            ));
        }
        self.prepare(None, lowered, (bindings, buffers))?;
        self.encode(enc, None, label, commands, Stamps::Given(timestamps))?;
        Ok(())
    }

    /// Encodes `commands` into `enc` (everything they use made and bound); returns the staging
    /// buffer of their read, if any, and its bytes.
    fn encode(
        &mut self,
        enc: &mut wgpu::CommandEncoder,
        ranks: Option<&Ranks>,
        label: &str,
        commands: &[Command],
        mut stamps: Stamps<'_>,
    ) -> Result<Option<(wgpu::Buffer, u64)>> {
        let gpu = self.gpu;
        let mut read = None;
        let bufs = Buffers {
            ranks,
            pool: &self.pool,
            aliases: &self.aliases,
            links: &self.links,
        };
        for c in commands {
            let buf = |b| resolve(&bufs, b);
            match c {
                Command::Clear(b) => enc.clear_buffer(buf(*b), 0, None),
                Command::Copy {
                    src,
                    dst,
                    dst_offset,
                } => enc.copy_buffer_to_buffer(
                    buf(src.buffer),
                    src.offset,
                    buf(*dst),
                    *dst_offset,
                    src.bytes,
                ),
                Command::Read(spans) => {
                    let spans: Vec<_> = spans
                        .iter()
                        .map(|s| (buf(s.buffer), s.offset, s.bytes))
                        .collect();
                    read = Some(gpu.encode_read(enc, &spans));
                }
                Command::Pass(p) => {
                    let timestamp_writes = match &mut stamps {
                        Stamps::Timer => self.timer.pass(),
                        Stamps::Given(given) => given.take(),
                    };
                    let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                        label: Some(label),
                        timestamp_writes,
                    });
                    for d in &p.dispatches {
                        let k = self.kernels;
                        let pipeline = match d.kernel {
                            Kernel::Gemm(store) => k.gemm()?.pipeline(store),
                            Kernel::GemmGrid => k.gemm()?.grid_pipeline(),
                            Kernel::Step { put, acc } => k.step()?.pipeline(put, acc),
                            Kernel::Fused {
                                split_b,
                                split_c,
                                grid,
                                watched,
                            } => k.gemm()?.fused(gpu, split_b, split_c, grid, watched)?,
                            Kernel::Spares { watch, land } => k.gemm()?.spares(gpu, watch, land)?,
                            Kernel::Gather => &k.gather()?.pipeline,
                        };
                        gpu.dispatch(
                            &mut pass,
                            pipeline,
                            self.groups[d.binding].as_ref(),
                            d.workgroups,
                        );
                    }
                }
            }
        }
        Ok(read)
    }
}
