//! The executor: binds a lowered plan to its device once (every binding's params in one uniform
//! buffer, the pooled buffers, the bind groups) and encodes and submits any of its recordings, timing
//! their passes with the one pass timer. The one place that touches wgpu for the modes.

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
        Target {
            device,
            tile_n: self.gemm.engine.tile_n(),
            tile_group: self.gemm.engine.tile_group(),
            max_workgroups_per_dim: gpu.max_workgroups_per_dim,
            uniform_align: u64::from(gpu.limits.min_uniform_buffer_offset_alignment).max(64),
            max_buffer: gpu.max_buffer,
            max_binding: gpu.max_binding,
            host_mapped: gpu.has(wgpu::Features::MAPPABLE_PRIMARY_BUFFERS),
            loop_limit: loop_limit(gpu),
            sms: gpu.sms,
            gemm_per_sm: self.gemm.engine.per_sm(),
        }
    }
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
    kernels: &'a Kernels,
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
    ranks: &'b Ranks,
    pool: &'b [Option<wgpu::Buffer>],
    aliases: &'b [Vec<wgpu::Buffer>],
    links: &'b HashMap<LinkBox, wgpu::Buffer>,
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
        Buffer::Data(l) => &ranks.locs[&l].data,
        Buffer::Tracker(l) => &ranks.locs[&l].tracker,
        Buffer::A(p) => &ranks.rank(p).a,
        Buffer::B(p) => &ranks.rank(p).b,
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
        let align = lowered.target.uniform_align;
        let mut bytes = vec![0u8; (align as usize) * lowered.bindings.len().max(1)];
        for (i, b) in lowered.bindings.iter().enumerate() {
            let p = b.params.bytes();
            bytes[i * align as usize..][..p.len()].copy_from_slice(p);
        }
        let params = gpu.init_buffer("binding params", &bytes, wgpu::BufferUsages::UNIFORM);
        let mut ex = Executor {
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
            timer: Timestamps::new(gpu, passes),
            defer_resolve: false,
        };
        let ops: Vec<usize> = lowered
            .ops
            .iter()
            .flatten()
            .flat_map(|o| std::iter::once(o.dispatch).chain(o.shared))
            .map(|d| d.binding)
            .collect();
        gpu.scoped("binding the plan's ops", || {
            ops.iter().try_for_each(|&b| ex.bind(ranks, lowered, b))
        })??;
        Ok(ex)
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

    fn bind(&mut self, ranks: &Ranks, lowered: &Lowered, i: usize) -> Result<()> {
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
            Group::Gemm => &self.kernels.gemm.layout,
            Group::Step => &self.kernels.step.layout,
            Group::Fused => &self.kernels.gemm.fused_layout,
            Group::Gather => &self.kernels.gather.layout,
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

    /// Makes what `commands` use that is not made yet (fused mode's packing, on its first run).
    fn prepare(&mut self, ranks: &Ranks, lowered: &Lowered, commands: &[Command]) -> Result<()> {
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
        self.prepare(ranks, lowered, commands)?;
        let gpu = self.gpu;
        let mut enc = gpu
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some(label) });
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
                    read = Some(gpu.encode_read(&mut enc, &spans));
                }
                Command::Pass(p) => {
                    let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                        label: Some(label),
                        timestamp_writes: self.timer.pass(),
                    });
                    for d in &p.dispatches {
                        let pipeline = match d.kernel {
                            Kernel::Gemm(store) => self.kernels.gemm.pipeline(store),
                            Kernel::GemmGrid => self.kernels.gemm.grid_pipeline(),
                            Kernel::Step { put, acc } => self.kernels.step.pipeline(put, acc),
                            Kernel::Fused {
                                split_b,
                                split_c,
                                grid,
                                watched,
                            } => self
                                .kernels
                                .gemm
                                .fused(gpu, split_b, split_c, grid, watched)?,
                            Kernel::Spares { watch, land } => {
                                self.kernels.gemm.spares(gpu, watch, land)?
                            }
                            Kernel::Gather => &self.kernels.gather.pipeline,
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
}
