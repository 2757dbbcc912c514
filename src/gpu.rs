//! The GPU context: instance, adapter, device, queue, enabled features and limits; error scopes, bounded waits and readback.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::error::{Error, Result};

/// Optional features the tool uses when the adapter has them; none is required to run.
pub const WANTED_FEATURES: wgpu::Features = wgpu::Features::TIMESTAMP_QUERY
    .union(wgpu::Features::TIMESTAMP_QUERY_INSIDE_PASSES)
    .union(wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS)
    .union(wgpu::Features::SHADER_F16)
    .union(wgpu::Features::SUBGROUP)
    .union(wgpu::Features::SHADER_FLOAT32_ATOMIC)
    .union(wgpu::Features::MEMORY_DECORATION_COHERENT)
    .union(wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX);

/// Names of [`WANTED_FEATURES`], in the order `t3 info` lists them.
pub const FEATURE_NAMES: [(&str, wgpu::Features); 8] = [
    ("TIMESTAMP_QUERY", wgpu::Features::TIMESTAMP_QUERY),
    (
        "TIMESTAMP_QUERY_INSIDE_PASSES",
        wgpu::Features::TIMESTAMP_QUERY_INSIDE_PASSES,
    ),
    (
        "TIMESTAMP_QUERY_INSIDE_ENCODERS",
        wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS,
    ),
    ("SHADER_F16", wgpu::Features::SHADER_F16),
    ("SUBGROUP", wgpu::Features::SUBGROUP),
    (
        "SHADER_FLOAT32_ATOMIC",
        wgpu::Features::SHADER_FLOAT32_ATOMIC,
    ),
    (
        "MEMORY_DECORATION_COHERENT",
        wgpu::Features::MEMORY_DECORATION_COHERENT,
    ),
    (
        "COOPERATIVE_MATRIX",
        wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX,
    ),
];

/// How to pick an adapter. Empty fields fall back to WGPU_BACKEND, WGPU_ADAPTER_NAME and WGPU_POWER_PREF.
#[derive(Clone, Debug, Default)]
pub struct GpuOptions {
    /// Comma list of backends (vulkan, metal, dx12, gl).
    pub backend: Option<String>,
    /// Case-insensitive substring of the adapter name.
    pub adapter: Option<String>,
    /// "high", "low" or "none".
    pub power: Option<String>,
    /// Bound on every wait, exactly (overrides the derived bound); default from T3_TIMEOUT_S, else
    /// 120 s plus a share derived from the work.
    pub timeout: Option<Duration>,
    /// Lower the storage-binding and buffer-size limits below the adapter's (tests of the limit paths).
    pub limit_override: Option<u64>,
    /// Lower the workgroups per dispatch dimension below the adapter's (tests of 2-D folding).
    pub dispatch_limit: Option<u32>,
}

/// What `t3 info` shows about one adapter.
#[derive(Clone, Debug, Serialize)]
pub struct AdapterReport {
    pub name: String,
    pub backend: String,
    pub device_type: String,
    pub driver: String,
    pub driver_info: String,
    pub vendor: u32,
    pub device: u32,
    pub features: Vec<String>,
    /// Smallest and largest subgroup width.
    pub subgroup_sizes: [u32; 2],
    /// Cooperative-matrix configurations, "MxNxK ab->cr" (empty without the feature).
    pub cooperative_matrix: Vec<String>,
    pub max_storage_buffer_binding_size: u64,
    pub max_buffer_size: u64,
    pub max_compute_workgroups_per_dimension: u32,
    pub max_compute_invocations_per_workgroup: u32,
    pub max_compute_workgroup_storage_size: u32,
    pub max_storage_buffers_per_shader_stage: u32,
    pub min_storage_buffer_offset_alignment: u32,
    pub min_uniform_buffer_offset_alignment: u32,
    pub timestamp_period_ns: Option<f32>,
}

fn backends(opts: &GpuOptions) -> wgpu::Backends {
    match &opts.backend {
        Some(list) => wgpu::Backends::from_comma_list(list),
        // GL is left out unless asked for: EGL probing prints noise on headless machines, and every
        // GPU that GL reaches is also reached by Vulkan, Metal or DX12.
        None => wgpu::Backends::from_env().unwrap_or(wgpu::Backends::PRIMARY),
    }
}

fn instance(opts: &GpuOptions) -> wgpu::Instance {
    let mut desc = wgpu::InstanceDescriptor::new_without_display_handle_from_env();
    desc.backends = backends(opts);
    wgpu::Instance::new(desc)
}

fn report(adapter: &wgpu::Adapter, period: Option<f32>) -> AdapterReport {
    let info = adapter.get_info();
    let f = adapter.features();
    let l = adapter.limits();
    AdapterReport {
        name: info.name.clone(),
        backend: format!("{:?}", info.backend),
        device_type: format!("{:?}", info.device_type),
        driver: info.driver.clone(),
        driver_info: info.driver_info.clone(),
        vendor: info.vendor,
        device: info.device,
        features: FEATURE_NAMES
            .iter()
            .filter(|(_, feat)| f.contains(*feat))
            .map(|(n, _)| n.to_string())
            .collect(),
        subgroup_sizes: [info.subgroup_min_size, info.subgroup_max_size],
        cooperative_matrix: adapter
            .cooperative_matrix_properties()
            .iter()
            .map(|c| {
                format!(
                    "{}x{}x{} {:?}->{:?}",
                    c.m_size, c.n_size, c.k_size, c.ab_type, c.cr_type
                )
                .to_lowercase()
            })
            .collect(),
        max_storage_buffer_binding_size: l.max_storage_buffer_binding_size,
        max_buffer_size: l.max_buffer_size,
        max_compute_workgroups_per_dimension: l.max_compute_workgroups_per_dimension,
        max_compute_invocations_per_workgroup: l.max_compute_invocations_per_workgroup,
        max_compute_workgroup_storage_size: l.max_compute_workgroup_storage_size,
        max_storage_buffers_per_shader_stage: l.max_storage_buffers_per_shader_stage,
        min_storage_buffer_offset_alignment: l.min_storage_buffer_offset_alignment,
        min_uniform_buffer_offset_alignment: l.min_uniform_buffer_offset_alignment,
        timestamp_period_ns: period,
    }
}

/// Every adapter the instance sees under `opts`' backends (the name filter is ignored: `t3 info` lists all).
pub fn list_adapters(opts: &GpuOptions) -> Vec<AdapterReport> {
    let inst = instance(opts);
    pollster::block_on(inst.enumerate_adapters(backends(opts)))
        .iter()
        .map(|a| report(a, None))
        .collect()
}

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
pub fn adapters(opts: &GpuOptions) -> (wgpu::Instance, Vec<wgpu::Adapter>) {
    let inst = instance(opts);
    let adapters = pollster::block_on(inst.enumerate_adapters(backends(opts)));
    (inst, adapters)
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
    pub instance: wgpu::Instance,
    pub adapter: wgpu::Adapter,
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
    pub info: wgpu::AdapterInfo,
    pub features: wgpu::Features,
    pub limits: wgpu::Limits,
    /// Limits the library enforces (the adapter's, or lower where `limit_override` asks).
    pub max_binding: u64,
    pub max_buffer: u64,
    /// Base bound on every wait.
    pub timeout: Duration,
    /// Whether `timeout` was given explicitly: then it is the whole bound, not a base plus a share of the work.
    timeout_fixed: bool,
    /// Workgroups per dispatch dimension the library uses (the adapter's, or lower when asked).
    pub max_workgroups_per_dim: u32,
    lost: Arc<Mutex<Option<String>>>,
    uncaptured: Arc<Mutex<Vec<String>>>,
}

impl Gpu {
    /// Picks an adapter per `opts` (and the WGPU_* variables) and opens a device with every wanted feature it has.
    pub fn new(opts: &GpuOptions) -> Result<Self> {
        Gpu::with_features(opts, WANTED_FEATURES)
    }

    /// [`Gpu::new`] with those of `wanted` the adapter has.
    pub fn with_features(opts: &GpuOptions, wanted: wgpu::Features) -> Result<Self> {
        let inst = instance(opts);
        let adapters = pollster::block_on(inst.enumerate_adapters(backends(opts)));
        let seen = adapters
            .iter()
            .map(|a| {
                let i = a.get_info();
                format!("{} ({:?})", i.name, i.backend)
            })
            .collect::<Vec<_>>()
            .join(", ");
        let name = opts
            .adapter
            .clone()
            .or_else(|| std::env::var("WGPU_ADAPTER_NAME").ok())
            .filter(|s| !s.is_empty());
        let power = match &opts.power {
            Some(p) => match p.to_lowercase().as_str() {
                "low" => wgpu::PowerPreference::LowPower,
                "none" => wgpu::PowerPreference::None,
                "high" => wgpu::PowerPreference::HighPerformance,
                other => {
                    return Err(Error::invalid(
                        "power preference",
                        other,
                        "high, low or none",
                    ))
                }
            },
            None => {
                wgpu::PowerPreference::from_env().unwrap_or(wgpu::PowerPreference::HighPerformance)
            }
        };
        let adapter = adapters
            .into_iter()
            .filter(|a| match &name {
                Some(n) => a.get_info().name.to_lowercase().contains(&n.to_lowercase()),
                None => true,
            })
            .min_by_key(|a| type_rank(a.get_info().device_type, power))
            .ok_or_else(|| Error::NoAdapter {
                wanted: format!(
                    "backends {:?}{}",
                    backends(opts),
                    name.as_ref()
                        .map(|n| format!(", name containing '{n}'"))
                        .unwrap_or_default()
                ),
                seen: if seen.is_empty() { "none".into() } else { seen },
            })?;
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
        let info = adapter.get_info();
        let features = adapter.features() & wanted;
        let limits = adapter.limits();
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("t3 device"),
            required_features: features,
            required_limits: limits.clone(),
            experimental_features:
                if features.contains(wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX) {
                    // SAFETY: the only experimental feature requested is cooperative matrices, used by one
                    // kernel (shaders/gemm_coop.wgsl) whose results tests/gemm.rs checks against the f64
                    // reference on every shape class; wgpu asks callers to accept that the API may change.
                    unsafe { wgpu::ExperimentalFeatures::enabled() }
                } else {
                    wgpu::ExperimentalFeatures::disabled()
                },
            memory_hints: wgpu::MemoryHints::Performance,
            trace: wgpu::Trace::Off,
        }))
        .map_err(|e| Error::Gpu {
            during: format!("opening a device on {}", info.name),
            message: e.to_string(),
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
        let timeout = opts.timeout.or_else(|| {
            std::env::var("T3_TIMEOUT_S")
                .ok()
                .and_then(|s| s.parse::<f64>().ok())
                .and_then(|s| Duration::try_from_secs_f64(s).ok())
                .filter(|d| !d.is_zero())
        });
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
            timeout,
            timeout_fixed,
            max_workgroups_per_dim,
            lost,
            uncaptured,
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
            && self.limits.max_compute_workgroup_storage_size >= crate::gemm::COOP_WORKGROUP_BYTES
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

    /// `t3 info`'s view of the chosen adapter.
    pub fn report(&self) -> AdapterReport {
        let period = self
            .has(wgpu::Features::TIMESTAMP_QUERY)
            .then(|| self.queue.get_timestamp_period());
        report(&self.adapter, period)
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
        let e1 = pollster::block_on(val.pop());
        let e2 = pollster::block_on(oom.pop());
        if let Some(e) = e1.or(e2) {
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
        self.scoped(during, || self.queue.submit(cmds))
    }

    /// Blocks until `idx` has completed, or fails with [`Error::Timeout`] naming `pending`.
    pub fn wait(
        &self,
        idx: Option<wgpu::SubmissionIndex>,
        pending: &str,
        bound: Duration,
    ) -> Result<()> {
        let t0 = Instant::now();
        let r = self.device.poll(wgpu::PollType::Wait {
            submission_index: idx,
            timeout: Some(bound),
        });
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
        // Padded to 16 bytes: kernels read and write whole vec4s (see shaders/put/store.wgsl).
        let size = size.max(16).next_multiple_of(16);
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
        if bytes > self.max_buffer {
            return Err(Error::TooLarge {
                what: what.to_string(),
                bytes,
                limit_name: "max_buffer_size",
                limit: self.max_buffer,
            });
        }
        if bytes > self.max_binding {
            return Err(Error::TooLarge {
                what: what.to_string(),
                bytes,
                limit_name: "max_storage_buffer_binding_size",
                limit: self.max_binding,
            });
        }
        Ok(())
    }

    /// Copies `size` bytes at `offset` of `src` to a staging buffer, maps it (bounded wait) and returns the bytes.
    pub fn read(&self, what: &str, src: &wgpu::Buffer, offset: u64, size: u64) -> Result<Vec<u8>> {
        let size4 = size.next_multiple_of(4).max(4);
        let staging = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("t3 readback staging"),
            size: size4,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut enc = self.device.create_command_encoder(&Default::default());
        enc.copy_buffer_to_buffer(src, offset, &staging, 0, size4);
        let idx = self.submit(&format!("reading back {what}"), vec![enc.finish()])?;
        self.map_read(what, &staging, idx, size)
    }

    /// Maps a MAP_READ buffer after `idx` completes and returns its first `size` bytes.
    pub fn map_read(
        &self,
        what: &str,
        staging: &wgpu::Buffer,
        idx: wgpu::SubmissionIndex,
        size: u64,
    ) -> Result<Vec<u8>> {
        let slot: Arc<Mutex<Option<std::result::Result<(), wgpu::BufferAsyncError>>>> =
            Arc::default();
        let slot2 = slot.clone();
        staging.map_async(wgpu::MapMode::Read, .., move |r| {
            *slot2.lock().unwrap() = Some(r);
        });
        self.wait(Some(idx), &format!("reading back {what}"), self.timeout)?;
        // Another thread's poll may be the one that runs our callback: wait for it, bounded.
        let t0 = Instant::now();
        let result = loop {
            if let Some(r) = slot.lock().unwrap().take() {
                break r;
            }
            if t0.elapsed() > self.timeout {
                return Err(Error::Timeout {
                    pending: format!("the map callback of {what}"),
                    after: t0.elapsed(),
                });
            }
            let _ = self.device.poll(wgpu::PollType::Poll);
            std::thread::sleep(Duration::from_micros(50));
        };
        if let Err(e) = result {
            return Err(Error::Readback {
                what: what.to_string(),
                message: e.to_string(),
            });
        }
        let bytes = staging
            .get_mapped_range(..)
            .map_err(|e| Error::Readback {
                what: what.to_string(),
                message: e.to_string(),
            })?
            .to_vec();
        staging.unmap();
        Ok(bytes[..size as usize].to_vec())
    }

    /// Reads back `len` f32 values.
    pub fn read_f32(
        &self,
        what: &str,
        src: &wgpu::Buffer,
        offset: u64,
        len: usize,
    ) -> Result<Vec<f32>> {
        let b = self.read(what, src, offset, (len * 4) as u64)?;
        Ok(bytemuck::pod_collect_to_vec(&b))
    }

    /// Reads back `len` u32 values.
    pub fn read_u32(
        &self,
        what: &str,
        src: &wgpu::Buffer,
        offset: u64,
        len: usize,
    ) -> Result<Vec<u32>> {
        let b = self.read(what, src, offset, (len * 4) as u64)?;
        Ok(bytemuck::pod_collect_to_vec(&b))
    }

    /// Folds `groups` workgroups into a 2-D dispatch within max_compute_workgroups_per_dimension.
    /// Kernels recover the linear id as `id.x + id.y * dispatch_x` and ignore ids past `groups`.
    pub fn fold(&self, groups: u32) -> (u32, u32) {
        let max = self.max_workgroups_per_dim;
        if groups <= max {
            (groups.max(1), 1)
        } else {
            let y = groups.div_ceil(max);
            (groups.div_ceil(y), y)
        }
    }
}
