//! The executor: binds a lowered plan to its device once (every binding's params in one uniform
//! buffer, the pooled buffers, the bind groups) and encodes and submits any of its recordings, timing
//! their passes with the one pass timer; or binds standalone work over pool buffers and handed ones
//! (the tracked GEMM of tests and benches, the link calibrations' and the step bench's steps) and
//! encodes its recordings into a caller's encoder. The one place that binds and encodes the modes'
//! and that work's dispatches.

mod kernels;
mod pooled;

pub use kernels::{step_target, target, KernelSet, Kernels};
pub use pooled::{dispatch_parts, prepare_parts, record_one_pass, Handed, Part};

use std::collections::HashMap;
use web_time::Instant;

use crate::error::{Error, Result};
use crate::gpu::Gpu;
use crate::lower::{Buffer, Command, DeviceId, Group, Kernel, LinkBox, Lowered, Resource};
use crate::ranks::Ranks;
use crate::readback::PendingRead;
use crate::timestamps::Timestamps;

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
    /// Whether binding i is fused mode's in four windows ([`Group::Fused4`]): its pipelines are
    /// that family's.
    four: Vec<bool>,
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
        Buffer::Watched(l) => {
            let b = &ranked(ranks).locs[&l];
            b.watch.as_ref().map_or(&b.data, |w| &w.0)
        }
        Buffer::WatchedTracker(l) => {
            let b = &ranked(ranks).locs[&l];
            b.watch.as_ref().map_or(&b.tracker, |w| &w.1)
        }
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
            .flat_map(|o| {
                let beside = o.beside.into_iter().flatten();
                std::iter::once(o.dispatch)
                    .chain(o.shared)
                    .chain(o.land)
                    .chain(beside)
            })
            .map(|d| d.binding)
            .collect();
        gpu.scoped("binding the plan's ops", || {
            ops.iter()
                .try_for_each(|&b| ex.bind(Some(ranks), lowered, b))
        })??;
        Ok(ex)
    }

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
            four: lowered
                .bindings
                .iter()
                .map(|b| b.group == Group::Fused4)
                .collect(),
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
            Group::Fused => &self.kernels.gemm()?.fused_family(self.gpu, false)?.layout,
            Group::Fused4 => &self.kernels.gemm()?.fused_family(self.gpu, true)?.layout,
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
                    self.dispatch(&mut pass, p)?;
                }
            }
        }
        Ok(read)
    }

    /// Dispatches pass `p`'s work of this executor's bindings into `pass`.
    fn dispatch(&self, pass: &mut wgpu::ComputePass<'_>, p: &crate::lower::Pass) -> Result<()> {
        for d in &p.dispatches {
            let pipeline = self.pipeline(d)?;
            self.gpu.dispatch(
                pass,
                pipeline,
                self.groups[d.binding].as_ref(),
                d.workgroups,
            );
        }
        Ok(())
    }

    /// Dispatch `d`'s pipeline, made here where its kernel makes it on first use (fused mode's).
    fn pipeline(&self, d: &crate::lower::Dispatch) -> Result<&'a wgpu::ComputePipeline> {
        let (gpu, k) = (self.gpu, self.kernels);
        Ok(match d.kernel {
            Kernel::Gemm(store) => k.gemm()?.pipeline(store),
            Kernel::GemmGrid => k.gemm()?.grid_pipeline(),
            Kernel::Step { put, acc, wait } => k.step()?.pipeline(put, acc, wait),
            Kernel::Fused {
                split_b,
                split_c,
                grid,
                watched,
            } => k
                .gemm()?
                .fused(gpu, [split_b, split_c, grid, watched], self.four[d.binding])?,
            Kernel::Spares { watch, land } => {
                k.gemm()?.spares(gpu, watch, land, self.four[d.binding])?
            }
            Kernel::Gather => &k.gather()?.pipeline,
        })
    }

    /// Makes every pipeline `rec` dispatches, so that a driver's compile of those made on first use
    /// is not counted in the first run's time (a first run on a cold shader cache).
    pub fn make_pipelines(&self, rec: &crate::lower::Recording) -> Result<()> {
        for d in rec.passes().flat_map(|p| &p.dispatches) {
            self.pipeline(d)?;
        }
        Ok(())
    }
}
