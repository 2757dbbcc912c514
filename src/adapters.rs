//! What `t3 info` shows: every adapter's name, backend, features and limits.

use serde::Serialize;

use crate::error::{Error, Result};
use crate::settings::{backends, name_filter, GpuOptions};

pub(crate) fn matches_name(a: &wgpu::Adapter, name: &Option<String>) -> bool {
    match name {
        Some(n) => a.get_info().name.to_lowercase().contains(&n.to_lowercase()),
        None => true,
    }
}

pub(crate) fn instance(backends: wgpu::Backends) -> wgpu::Instance {
    let mut desc = wgpu::InstanceDescriptor::new_without_display_handle_from_env();
    desc.backends = backends;
    wgpu::Instance::new(desc)
}

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
    /// What the adapter offers of VK_NV_cooperative_matrix2 (None: not offered), which the coopmat2
    /// GEMM runs on.
    pub cooperative_matrix2: Option<crate::coopmat2::Offer>,
    pub max_storage_buffer_binding_size: u64,
    pub max_buffer_size: u64,
    pub max_compute_workgroups_per_dimension: u32,
    pub max_compute_invocations_per_workgroup: u32,
    pub max_compute_workgroup_storage_size: u32,
    pub max_storage_buffers_per_shader_stage: u32,
    pub min_storage_buffer_offset_alignment: u32,
    pub min_uniform_buffer_offset_alignment: u32,
    pub timestamp_period_ns: Option<f32>,
    /// Multiprocessors (SMs), where the driver reports them or `T3_SMS` names them (src/sms.rs).
    pub multiprocessors: Option<u32>,
    /// Whether it can import host memory (`VK_EXT_external_memory_host`): zero-copy and engine
    /// links across devices; else the host copies.
    pub imports_host_memory: bool,
    /// Transfer queues (copy engines) t3 opens beside wgpu's queue, which engine links land on
    /// (0: an engine link lands on the device's own queue).
    pub transfer_queues: u32,
}

pub(crate) fn report(
    adapter: &wgpu::Adapter,
    period: Option<f32>,
    sms: Option<u32>,
) -> AdapterReport {
    let info = adapter.get_info();
    let f = adapter.features();
    let l = adapter.limits();
    AdapterReport {
        // `sms`: what the options name (T3_SMS, checked at the edge), else the driver's count.
        multiprocessors: crate::sms::sm_count(adapter, sms),
        imports_host_memory: crate::vkdevice::adapter_can_import(adapter),
        transfer_queues: crate::sidequeue::transfer_queues(adapter),
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
        cooperative_matrix2: crate::coopmat2::offer(adapter),
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

/// Every adapter the instance sees under `opts`' backends whose name contains the filter (the
/// option, else WGPU_ADAPTER_NAME); a filter that matches none is an error naming what was seen.
pub fn list_adapters(opts: &GpuOptions) -> Result<Vec<AdapterReport>> {
    Ok(numbered_adapters(opts)?
        .into_iter()
        .map(|(_, a)| a)
        .collect())
}

/// [`list_adapters`], each with its index in the unfiltered enumeration: the number `--devices i,j`
/// reads (a name filter leaves gaps rather than renumbering).
pub fn numbered_adapters(opts: &GpuOptions) -> Result<Vec<(usize, AdapterReport)>> {
    let b = backends(opts)?;
    let name = name_filter(opts)?;
    let all = crate::suspend::block_on(instance(b).enumerate_adapters(b));
    let list: Vec<(usize, AdapterReport)> = all
        .iter()
        .enumerate()
        .filter(|(_, a)| matches_name(a, &name))
        .map(|(i, a)| (i, report(a, None, opts.sms)))
        .collect();
    if let (Some(n), true) = (&name, list.is_empty()) {
        return Err(no_adapter(b, Some(n), &all));
    }
    Ok(list)
}

pub(crate) fn no_adapter(
    b: wgpu::Backends,
    name: Option<&String>,
    seen: &[wgpu::Adapter],
) -> Error {
    let seen = seen
        .iter()
        .map(|a| {
            let i = a.get_info();
            format!("{} ({:?})", i.name, i.backend)
        })
        .collect::<Vec<_>>()
        .join(", ");
    let names: Vec<&str> = [
        (wgpu::Backends::VULKAN, "vulkan"),
        (wgpu::Backends::METAL, "metal"),
        (wgpu::Backends::DX12, "dx12"),
        (wgpu::Backends::GL, "gl"),
        (wgpu::Backends::BROWSER_WEBGPU, "webgpu"),
    ]
    .into_iter()
    .filter(|(f, _)| b.contains(*f))
    .map(|(_, n)| n)
    .collect();
    Error::NoAdapter {
        wanted: format!(
            "backends {}{}",
            names.join(", "),
            name.map(|n| format!(", name containing '{n}'"))
                .unwrap_or_default()
        ),
        seen: if seen.is_empty() { "none".into() } else { seen },
    }
}
