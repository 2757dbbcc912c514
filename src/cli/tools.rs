//! The small commands: `t3 info`, `t3 plot` and `t3 calibrate`.

use anyhow::Result;

use t3_wgpu::files;
use t3_wgpu::gpu::{self, Gpu, GpuOptions};
use t3_wgpu::link;

use super::args::*;
use super::output::out;

pub fn info(g: &GpuArgs, json: bool) -> Result<()> {
    let list = gpu::list_adapters(&GpuOptions {
        backend: g.backend.clone(),
        adapter: g.adapter.clone(),
        ..Default::default()
    })?;
    if json {
        return outln!("{}", serde_json::to_string_pretty(&list)?);
    }
    let mut s = String::new();
    if list.is_empty() {
        s += "no adapters found (install a Vulkan, Metal or DX12 driver; without a GPU: apt-get install mesa-vulkan-drivers)\n";
    }
    for a in &list {
        s += &format!("{} [{} {}]\n", a.name, a.backend, a.device_type);
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
        s += "  bf16 operands SIMT kernel only (wgpu 30 has no bf16 shader type or cooperative-matrix configuration)\n";
        s += &format!("  storage binding {} MiB, buffer {} MiB, workgroups/dim {}, invocations/wg {}, wg storage {} KiB\n",
            a.max_storage_buffer_binding_size >> 20, a.max_buffer_size >> 20, a.max_compute_workgroups_per_dimension,
            a.max_compute_invocations_per_workgroup, a.max_compute_workgroup_storage_size >> 10);
    }
    out(&s)
}

pub fn plot(csv: &str, x: PlotX, svg: &str, title: Option<&str>) -> Result<()> {
    files::check_outputs(&[("--svg", svg, false)])?;
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

pub fn calibrate(
    gpu: &Gpu,
    mib: Option<usize>,
    reps: usize,
    out_path: &str,
    json: bool,
) -> Result<()> {
    let kernel = t3_wgpu::steps::StepKernel::new(gpu)?;
    let cpu = gpu.info.device_type == wgpu::DeviceType::Cpu;
    let mib = mib.unwrap_or(if cpu { 16 } else { 256 });
    let t = link::calibrate(gpu, &kernel, (mib as u64) << 20, reps)?;
    t.save(out_path)?;
    if json {
        outln!("{}", serde_json::to_string_pretty(&t)?)?;
    } else {
        out(&t.text())?;
    }
    note!("saved {out_path}");
    Ok(())
}
