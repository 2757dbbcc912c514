//! The GPU context: instance, adapter, device, queue, enabled features and limits; error scopes, bounded waits and readback.

use std::sync::{Arc, Mutex};
use std::time::Duration;
use web_time::Instant;

use crate::adapters::{instance, matches_name, no_adapter, report};
pub use crate::adapters::{list_adapters, numbered_adapters, AdapterReport, FEATURE_NAMES};
use crate::error::{Error, Result};
use crate::settings::{self, backends, name_filter};
pub use crate::settings::{GpuOptions, KernelFiles};

/// Optional features the tool uses when the adapter has them; none is required to run.
pub const WANTED_FEATURES: wgpu::Features = wgpu::Features::TIMESTAMP_QUERY
    .union(wgpu::Features::TIMESTAMP_QUERY_INSIDE_PASSES)
    .union(wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS)
    .union(wgpu::Features::SHADER_F16)
    .union(wgpu::Features::SUBGROUP)
    .union(wgpu::Features::SHADER_FLOAT32_ATOMIC)
    .union(wgpu::Features::MEMORY_DECORATION_COHERENT)
    .union(wgpu::Features::MEMORY_DECORATION_VOLATILE)
    .union(wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX)
    // SPIR-V straight to the driver: the coopmat2 GEMM (src/coopmat2.rs), which no WGSL can express.
    .union(wgpu::Features::PASSTHROUGH_SHADERS);

fn type_rank(t: wgpu::DeviceType, power: wgpu::PowerPreference) -> u8 {
    use wgpu::DeviceType::*;
    match (power, t) {
        (wgpu::PowerPreference::LowPower, IntegratedGpu) => 0,
        (wgpu::PowerPreference::LowPower, DiscreteGpu) => 1,
        (_, DiscreteGpu) => 0,
        (_, IntegratedGpu) => 1,
        (_, VirtualGpu) => 2,
        (_, Cpu) => 3,
        (_, Other) => 4,
    }
}

/// The instance for `opts`' backends and every adapter it sees, in the order `t3 info` lists them.
pub fn adapters(opts: &GpuOptions) -> Result<(wgpu::Instance, Vec<wgpu::Adapter>)> {
    let b = backends(opts)?;
    let inst = instance(b);
    let adapters = crate::suspend::block_on(inst.enumerate_adapters(b));
    Ok((inst, adapters))
}

/// A wgpu error with its description and source chain (its Display alone says only "Validation Error").
pub fn describe_error(e: &wgpu::Error) -> String {
    let mut s = match e {
        wgpu::Error::Validation { description, .. } | wgpu::Error::Internal { description, .. } => {
            description.clone()
        }
        other => other.to_string(),
    };
    let mut src = std::error::Error::source(e);
    while let Some(x) = src {
        s += &format!(": {x}");
        src = x.source();
    }
    s
}

/// The GPU context every other stage borrows.
pub struct Gpu {
    pub adapter: wgpu::Adapter,
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
    pub info: wgpu::AdapterInfo,
    pub features: wgpu::Features,
    pub limits: wgpu::Limits,
    /// Limits the library enforces (the adapter's, or lower where `limit_override` asks).
    pub max_binding: u64,
    pub max_buffer: u64,
    /// Multiprocessors, where the driver reports them or `T3_SMS` names them (src/sms.rs).
    pub sms: Option<u32>,
    /// WGSL files replacing the GEMM kernels (src/gemm.rs reads them as it builds a kernel).
    pub kernels: crate::settings::KernelFiles,
    /// Base bound on every wait.
    pub timeout: Duration,
    /// Whether `timeout` was given explicitly: then it is the whole bound, not a base plus a share of the work.
    timeout_fixed: bool,
    /// Workgroups per dispatch dimension the library uses (the adapter's, or lower when asked).
    pub max_workgroups_per_dim: u32,
    /// The instance the adapter came from (a device set opens more devices through it).
    pub instance: wgpu::Instance,
    lost: Arc<Mutex<Option<String>>>,
    uncaptured: Arc<Mutex<Vec<String>>>,
    /// MAP_READ buffers of finished readbacks, reused by the next (several threads may share a Gpu);
    /// capped (see [`crate::staging::StagingPool`]).
    pub(crate) staging: Mutex<crate::staging::StagingPool<wgpu::Buffer>>,
    /// Submissions made through [`Gpu::submit`] (tests count round trips with it).
    submissions: std::sync::atomic::AtomicU64,
}

impl Gpu {
    /// Picks an adapter per `opts` and opens a device with every wanted feature it has.
    pub fn new(opts: &GpuOptions) -> Result<Self> {
        Gpu::with_features(opts, WANTED_FEATURES)
    }

    /// [`Gpu::new`] with those of `wanted` the adapter has.
    pub fn with_features(opts: &GpuOptions, wanted: wgpu::Features) -> Result<Self> {
        let b = backends(opts)?;
        let name = name_filter(opts)?;
        let power = settings::power(opts)?;
        let inst = instance(b);
        let adapters = crate::suspend::block_on(inst.enumerate_adapters(b));
        let Some(adapter) = adapters
            .iter()
            .filter(|a| matches_name(a, &name))
            .min_by_key(|a| type_rank(a.get_info().device_type, power))
            .cloned()
        else {
            return Err(no_adapter(b, name.as_ref(), &adapters));
        };
        Gpu::open(inst, adapter, opts, wanted)
    }

    /// Opens a device on `adapter` with those of `wanted` it has; `opts` gives the timeout and the limit
    /// overrides. Called again on one adapter, it opens another device that shares nothing with the first.
    pub fn open(
        inst: wgpu::Instance,
        adapter: wgpu::Adapter,
        opts: &GpuOptions,
        wanted: wgpu::Features,
    ) -> Result<Self> {
        let timeout = opts.timeout;
        let sms = crate::sms::sm_count(&adapter, opts.sms);
        let info = adapter.get_info();
        let features = adapter.features() & wanted;
        let limits = adapter.limits();
        let desc = wgpu::DeviceDescriptor {
            label: Some("t3 device"),
            required_features: features,
            required_limits: limits.clone(),
            experimental_features: if features
                .contains(wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX)
            {
                // SAFETY: the only experimental feature requested is cooperative matrices, used by one
                // kernel (shaders/gemm_coop.wgsl) whose results tests/gemm.rs checks against the f64
                // reference on every shape class; wgpu asks callers to accept that the API may change.
                unsafe { wgpu::ExperimentalFeatures::enabled() }
            } else {
                wgpu::ExperimentalFeatures::disabled()
            },
            memory_hints: wgpu::MemoryHints::Performance,
            trace: wgpu::Trace::Off,
        };
        // With the zero-copy link's and the coopmat2 GEMM's extensions where the adapter has them
        // (they change nothing else). A device their open refused is opened the usual way (its links
        // then copy, and the coopmat2 GEMM is refused).
        let (device, queue) = crate::vkdevice::request_device(&adapter, &desc)
            .filter(|opened| opened.is_ok())
            .unwrap_or_else(|| {
                crate::suspend::block_on(adapter.request_device(&desc)).map_err(|e| e.to_string())
            })
            .map_err(|message| Error::Gpu {
                during: format!("opening a device on {}", info.name),
                message,
            })?;
        let lost = Arc::new(Mutex::new(None));
        let lost2 = lost.clone();
        device.set_device_lost_callback(move |reason, msg| {
            *lost2.lock().unwrap() = Some(format!("{reason:?}: {msg}"));
        });
        // wgpu's default handler panics; errors outside a scope are kept and turned into an Error at the next check.
        let uncaptured = Arc::new(Mutex::new(Vec::new()));
        let unc2 = uncaptured.clone();
        device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
            unc2.lock().unwrap().push(describe_error(&e));
        }));
        let max_workgroups_per_dim = opts
            .dispatch_limit
            .unwrap_or(u32::MAX)
            .min(limits.max_compute_workgroups_per_dimension)
            .max(1);
        let timeout_fixed = timeout.is_some();
        let timeout = timeout.unwrap_or(Duration::from_secs(120));
        // Kernels index elements with u32 and bind at u32 byte sizes: cap at u32::MAX bytes whatever
        // the adapter reports (Metal can report its whole buffer size).
        let cap = opts.limit_override.unwrap_or(u64::MAX).min(u32::MAX as u64);
        Ok(Gpu {
            max_binding: limits.max_storage_buffer_binding_size.min(cap),
            max_buffer: limits.max_buffer_size.min(cap),
            instance: inst,
            adapter,
            device,
            queue,
            info,
            features,
            limits,
            kernels: opts.kernels.clone(),
            timeout,
            timeout_fixed,
            max_workgroups_per_dim,
            sms,
            lost,
            uncaptured,
            staging: Mutex::default(),
            submissions: Default::default(),
        })
    }

    /// Whether the device was opened with `f`.
    pub fn has(&self, f: wgpu::Features) -> bool {
        self.features.contains(f)
    }

    /// Whether the GEMM can run on cooperative matrices here: the adapter multiplies f16 x f16 -> f32
    /// at 16x16x16 (what shaders/gemm_coop.wgsl uses), its subgroups are exactly 32 wide (the kernel
    /// splits a 256-invocation workgroup into 8 subgroups) and it has the kernel's workgroup memory.
    pub fn has_coop_f16(&self) -> bool {
        self.has(wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX)
            && crate::reflect::interface("gemm_coop.wgsl", "track").is_some_and(|i| {
                self.limits.max_compute_workgroup_storage_size >= i.workgroup_bytes
            })
            && self.info.subgroup_min_size == 32
            && self.info.subgroup_max_size == 32
            && self
                .adapter
                .cooperative_matrix_properties()
                .iter()
                .any(|c| {
                    (c.m_size, c.n_size, c.k_size) == (16, 16, 16)
                        && c.ab_type == wgpu::CooperativeScalarType::F16
                        && c.cr_type == wgpu::CooperativeScalarType::F32
                })
    }

    /// Whether the coopmat2 GEMM can run here: the device was opened with VK_NV_cooperative_matrix2
    /// and the features it needs (src/vkdevice.rs), passthrough shaders, and what the WGSL
    /// cooperative kernel needs (its pipelines serve the modes coopmat2 does not cover yet).
    pub fn has_coopmat2(&self) -> bool {
        self.has(wgpu::Features::PASSTHROUGH_SHADERS)
            && self.has_coop_f16()
            && crate::coopmat2::device_ready(&self.device)
    }

    /// `t3 info`'s view of the chosen adapter.
    pub fn report(&self) -> AdapterReport {
        let period = self
            .has(wgpu::Features::TIMESTAMP_QUERY)
            .then(|| self.queue.get_timestamp_period());
        report(&self.adapter, period, self.sms)
    }

    /// A short adapter description for reports: "NVIDIA H200 (Vulkan, 580.159.04)".
    pub fn describe(&self) -> String {
        format!(
            "{} ({:?}, {})",
            self.info.name, self.info.backend, self.info.driver_info
        )
    }

    /// Turns a lost device or an error that escaped every scope into an [`Error`].
    pub fn check(&self, during: &str) -> Result<()> {
        if let Some(reason) = self.lost.lock().unwrap().clone() {
            return Err(Error::DeviceLost {
                adapter: self.info.name.clone(),
                reason,
            });
        }
        let mut unc = self.uncaptured.lock().unwrap();
        if !unc.is_empty() {
            let message = unc.join("; ");
            unc.clear();
            return Err(Error::Gpu {
                during: during.to_string(),
                message,
            });
        }
        Ok(())
    }

    /// Runs `f` under validation and out-of-memory error scopes; a caught error becomes [`Error::Gpu`].
    pub fn scoped<T>(&self, during: &str, f: impl FnOnce() -> T) -> Result<T> {
        let oom = self.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let val = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let out = f();
        let e1 = crate::suspend::block_on(val.pop());
        let e2 = crate::suspend::block_on(oom.pop());
        if let Some(e) = e1.or(e2) {
            // A lost device fails every call on it: say that, not the call's symptom.
            self.check(during)?;
            return Err(Error::Gpu {
                during: during.to_string(),
                message: describe_error(&e),
            });
        }
        self.check(during)?;
        Ok(out)
    }

    /// The bound for a wait on work of `flops` operations and `bytes` of traffic: the base timeout plus the
    /// time that work would take at 1 GFLOP/s and 1 GB/s, rates far below any GPU and below lavapipe too.
    pub fn timeout_for(&self, flops: f64, bytes: f64) -> Duration {
        if self.timeout_fixed {
            return self.timeout;
        }
        self.timeout + Duration::from_secs_f64((flops / 1e9 + bytes / 1e9).min(1e6))
    }

    /// Submits command buffers under an error scope.
    pub fn submit(
        &self,
        during: &str,
        cmds: Vec<wgpu::CommandBuffer>,
    ) -> Result<wgpu::SubmissionIndex> {
        self.submissions
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.scoped(during, || self.queue.submit(cmds))
    }

    /// Submissions made through [`Gpu::submit`] since the device was opened.
    pub fn submissions(&self) -> u64 {
        self.submissions.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Blocks until `idx` has completed, or fails with [`Error::Timeout`] naming `pending`.
    pub fn wait(
        &self,
        idx: Option<wgpu::SubmissionIndex>,
        pending: &str,
        bound: Duration,
    ) -> Result<()> {
        let t0 = Instant::now();
        #[cfg(not(target_arch = "wasm32"))]
        let r = self.device.poll(wgpu::PollType::Wait {
            submission_index: idx,
            timeout: Some(bound),
        });
        // The browser polls by itself and cannot block: wait for all submitted work (which covers
        // `idx`) through its callback, suspended (JSPI), bounded by a timer.
        #[cfg(target_arch = "wasm32")]
        let r = {
            let _ = idx;
            let (tx, rx) = futures::channel::oneshot::channel();
            self.queue.on_submitted_work_done(move || {
                let _ = tx.send(());
            });
            match crate::suspend::with_timeout(rx, bound) {
                Some(_) => Ok(()),
                None => Err(wgpu::PollError::Timeout),
            }
        };
        match r {
            Ok(_) => self.check(pending),
            Err(wgpu::PollError::Timeout) => Err(Error::Timeout {
                pending: pending.to_string(),
                after: t0.elapsed(),
            }),
            Err(e) => {
                self.check(pending)?;
                Err(Error::Gpu {
                    during: pending.to_string(),
                    message: e.to_string(),
                })
            }
        }
    }

    /// A buffer of `size` bytes, refused with the limit named when it exceeds what the adapter allows.
    pub fn buffer(
        &self,
        label: &str,
        size: u64,
        usage: wgpu::BufferUsages,
    ) -> Result<wgpu::Buffer> {
        self.check_binding(label, size)?;
        self.storage(label, size, usage)
    }

    /// A buffer bound only in windows of at most max_storage_buffer_binding_size (fused mode's packed
    /// output): refused only over max_buffer_size.
    pub fn windowed_buffer(
        &self,
        label: &str,
        size: u64,
        usage: wgpu::BufferUsages,
    ) -> Result<wgpu::Buffer> {
        self.check_windowed(label, size)?;
        self.storage(label, size, usage)
    }

    /// Whether a buffer bound only in windows fits: max_buffer_size alone bounds it.
    pub fn check_windowed(&self, what: &str, bytes: u64) -> Result<()> {
        Error::check_size(what, bytes, self.max_buffer, self.max_buffer)
    }

    fn storage(&self, label: &str, size: u64, usage: wgpu::BufferUsages) -> Result<wgpu::Buffer> {
        let size = crate::shapes::buffer_bytes(size);
        self.scoped(&format!("allocating {label} ({size} bytes)"), || {
            self.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size,
                usage,
                mapped_at_creation: false,
            })
        })
    }

    /// A small buffer made from `contents` (params, job and forward tables).
    pub fn init_buffer(
        &self,
        label: &str,
        contents: &[u8],
        usage: wgpu::BufferUsages,
    ) -> wgpu::Buffer {
        use wgpu::util::DeviceExt;
        self.device
            .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some(label),
                contents,
                usage,
            })
    }

    /// Refuses a storage binding over the adapter's limits, naming the limit.
    pub fn check_binding(&self, what: &str, bytes: u64) -> Result<()> {
        Error::check_size(what, bytes, self.max_buffer, self.max_binding)
    }

    /// Folds `groups` workgroups into a 2-D dispatch within max_compute_workgroups_per_dimension
    /// ([`crate::shapes::fold`]).
    pub fn fold(&self, groups: u32) -> (u32, u32) {
        crate::shapes::fold(groups, self.max_workgroups_per_dim)
    }

    /// Records `pipeline` over `bg` on `workgroups` workgroups, folded into 2-D where needed.
    pub fn dispatch<'a>(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        pipeline: &wgpu::ComputePipeline,
        bg: impl Into<Option<&'a wgpu::BindGroup>>,
        workgroups: u32,
    ) {
        let (x, y) = self.fold(workgroups);
        pass.set_pipeline(pipeline);
        pass.set_bind_group(0, bg.into(), &[]);
        pass.dispatch_workgroups(x, y, 1);
    }
}
