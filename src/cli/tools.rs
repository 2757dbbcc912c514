//! The small commands: `t3 info`, `t3 plot` and `t3 calibrate`.

use anyhow::Result;

use t3_wgpu::devices::Devices;
use t3_wgpu::files;
use t3_wgpu::gpu::{self, Gpu};
use t3_wgpu::hostlink::calibration;
use t3_wgpu::link;
use t3_wgpu::shapes::{Dtype, Shape};
use t3_wgpu::steps::Link;

use super::args::*;
use super::output::out;

/// An adapter as `t3 info --json` lists it: with the index `--devices i,j` reads.
#[derive(serde::Serialize)]
struct Numbered {
    index: usize,
    #[serde(flatten)]
    adapter: gpu::AdapterReport,
}

pub fn info(g: &GpuArgs, json: bool) -> Result<()> {
    let list = gpu::numbered_adapters(&super::run::gpu_options(g)?)?;
    if json {
        let list: Vec<Numbered> = list
            .into_iter()
            .map(|(index, adapter)| Numbered { index, adapter })
            .collect();
        return outln!("{}", serde_json::to_string_pretty(&list)?);
    }
    let mut s = String::new();
    if list.is_empty() {
        s += "no adapters found (install a Vulkan, Metal or DX12 driver; without a GPU: apt-get install mesa-vulkan-drivers)\n";
    }
    for (i, a) in &list {
        s += &format!("{i}: {} [{} {}]\n", a.name, a.backend, a.device_type);
        s += &format!("  driver        {} {}\n", a.driver, a.driver_info);
        s += &format!(
            "  features      {}\n",
            if a.features.is_empty() {
                "(none of the optional ones)".into()
            } else {
                a.features.join(" ")
            }
        );
        s += &format!(
            "  subgroups     {}..{} wide; cooperative matrices {}\n",
            a.subgroup_sizes[0],
            a.subgroup_sizes[1],
            if a.cooperative_matrix.is_empty() {
                "none".into()
            } else {
                a.cooperative_matrix.join(", ")
            }
        );
        s += &format!(
            "  coopmat2      {}\n",
            a.cooperative_matrix2.as_ref().map_or_else(
                || "not offered (VK_NV_cooperative_matrix2): no coopmat2 GEMM".into(),
                |o| format!(
                    "{} ({}); workgroup scope up to {} invocations, {} B reserved; flexible \
                     dimensions up to {}: {}",
                    if o.features.suffice() {
                        "the coopmat2 GEMM can run"
                    } else {
                        "offered without the features the coopmat2 GEMM needs"
                    },
                    o.features.names().join(" "),
                    o.workgroup_scope_max_workgroup_size,
                    o.reserved_shared_memory,
                    o.flexible_max_dimension,
                    if o.flexible.is_empty() {
                        "none listed".into()
                    } else {
                        o.flexible.join(", ")
                    }
                )
            )
        );
        s += &format!(
            "  multiprocessors {}\n",
            a.multiprocessors.map_or_else(
                || "not reported (T3_SMS names them; fused mode's defaults need them)".into(),
                |n| n.to_string()
            )
        );
        s += &format!(
            "  host links    {}\n",
            match (a.imports_host_memory, a.transfer_queues) {
                (false, _) => "host copy only (no VK_EXT_external_memory_host)".to_string(),
                (true, 0) =>
                    "zero-copy; engine links land on the device's own queue (no transfer queue)"
                        .into(),
                (true, n) => format!(
                    "zero-copy, and engine links landing on {n} transfer queue(s) (copy engines)"
                ),
            }
        );
        s += "  bf16 operands SIMT kernel only (wgpu 30 has no bf16 shader type or cooperative-matrix configuration)\n";
        s += &format!("  storage binding {} MiB, buffer {} MiB, workgroups/dim {}, invocations/wg {}, wg storage {} KiB\n",
            a.max_storage_buffer_binding_size >> 20, a.max_buffer_size >> 20, a.max_compute_workgroups_per_dimension,
            a.max_compute_invocations_per_workgroup, a.max_compute_workgroup_storage_size >> 10);
    }
    out(&s)
}

pub fn plot(csv: &str, x: PlotX, svg: &str, title: Option<&str>) -> Result<()> {
    files::Files::default()
        .input("--csv", csv)
        .output("--svg", svg)
        .check()?;
    let x = x.column();
    let text = files::read_text(csv, "sweep CSV", files::MAX_CSV_BYTES)?;
    let points =
        t3_wgpu::plot::points_from_csv(&text, x).map_err(|e| anyhow::anyhow!("{csv}: {e}"))?;
    let title = title
        .map(str::to_string)
        .unwrap_or_else(|| format!("{csv}: speedup and overlap efficiency vs {x}"));
    let picture = t3_wgpu::plot::svg(&points, x, &title);
    if svg == "-" {
        return out(&picture);
    }
    files::write(svg, &picture)?;
    note!("wrote {svg}");
    Ok(())
}

/// The most bytes one measured copy of `t3 calibrate` may move on every one of `gpus`.
fn largest_copy(gpus: &[Gpu]) -> u64 {
    gpus.iter()
        .map(link::largest_copy)
        .min()
        .unwrap_or(u64::MAX)
}

/// The `--mib` a calibration on `gpus` copies: the one given, where a copy that large fits (else
/// the error naming `--mib` and the limit), or the default (256, or 16 on a CPU adapter) within
/// what they bind.
fn mib_on(gpus: &[Gpu], mib: Option<usize>) -> t3_wgpu::Result<u64> {
    let fits = largest_copy(gpus);
    let cpu = gpus
        .iter()
        .any(|g| g.info.device_type == wgpu::DeviceType::Cpu);
    match mib {
        Some(m) => check_mib(m as u64, fits),
        None => Ok((if cpu { 16 } else { 256 }).min(fits >> 20)),
    }
}

/// `mib`, where a copy that large fits in `fits` bytes; else the error naming `--mib` and the limit.
fn check_mib(mib: u64, fits: u64) -> t3_wgpu::Result<u64> {
    if mib << 20 > fits {
        return Err(t3_wgpu::Error::invalid(
            "--mib",
            mib,
            format!(
                "at most {} MiB on these devices (a copy is one buffer, bound whole: \
                 max_buffer_size and max_storage_buffer_binding_size)",
                fits >> 20
            ),
        ));
    }
    Ok(mib)
}

pub fn calibrate(
    gpu: &Gpu,
    mib: Option<usize>,
    reps: usize,
    out_path: &str,
    json: bool,
) -> Result<()> {
    let kernel = t3_wgpu::steps::StepKernel::new(gpu)?;
    let mib = mib_on(std::slice::from_ref(gpu), mib)?;
    let t = link::calibrate(gpu, &kernel, mib << 20, reps)?;
    t.save(out_path)?;
    show_saved(&t, || t.text(), out_path, json)
}

/// `t3 calibrate --devices`: the host-staged link per direction between the devices `spec` opens,
/// chunks from 1 MiB up by factors of 4 to `mib` (default 256, or 16 on a CPU adapter).
/// What `t3 calibrate --devices` asks of the link: its path, the kernels' budget, the streamed
/// rows' copy threads and the GEMM to time each device's link beside.
pub struct HostlinkAsk {
    pub want: t3_wgpu::hostlink::Path,
    pub link_workgroups: Option<u32>,
    pub copy_threads: Option<usize>,
    pub in_flight: Option<usize>,
    pub stream_mib: Option<u64>,
    pub beside_gemm: Option<(Shape, Dtype)>,
}

pub fn calibrate_hostlink(
    devices: &Devices,
    ask: HostlinkAsk,
    (mib, reps): (Option<usize>, usize),
    out_path: &str,
    json: bool,
) -> Result<()> {
    let cpu = devices.gpus[0].info.device_type == wgpu::DeviceType::Cpu;
    // The largest chunk is one buffer, bound whole: refused before any of the smaller is timed.
    let top = mib_on(&devices.gpus, mib)?;
    let sizes = std::iter::successors(Some(1u64), |m| Some(m * 4)).take_while(|&m| m < top);
    let mut opts = calibration::Options {
        bytes: sizes.chain([top]).map(|m| m << 20).collect(),
        reps,
        // Streamed: 4 GiB per direction on a GPU, four of the largest chunks on a CPU adapter.
        stream_bytes: ask.stream_mib.unwrap_or(if cpu { 4 * top } else { 4096 }) << 20,
        want: ask.want,
        stream_threads: ask.copy_threads,
        stream_in_flight: ask.in_flight,
        beside_gemm: ask.beside_gemm,
        ..Default::default()
    };
    if let Some(w) = ask.link_workgroups {
        opts.step_link = Link::Workgroups(w);
        opts.beside_link = (Link::Workgroups(w), Link::Workgroups(w));
    }
    let t = calibration::calibrate(devices, &opts)?;
    if ask.beside_gemm.is_some() && t.duplex.is_empty() {
        note!("--beside-gemm: no device here sends and lands on zero-copy links, so nothing was timed beside a GEMM");
    }
    t.save(out_path)?;
    show_saved(&t, || t.text(), out_path, json)
}

/// Prints a saved calibration table as JSON or as its text, and says where it was saved.
fn show_saved(
    t: &impl serde::Serialize,
    text: impl FnOnce() -> String,
    out_path: &str,
    json: bool,
) -> Result<()> {
    if json {
        outln!("{}", serde_json::to_string_pretty(t)?)?;
    } else {
        out(&text())?;
    }
    note!("saved {out_path}");
    Ok(())
}
