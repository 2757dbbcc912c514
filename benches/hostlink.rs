//! Calibrates the host-staged link between devices (src/hostlink/calibration.rs): per direction, GB/s of the
//! sender's kernel writing its outbox, of the maps, and of the host's threaded copy into the receiver's
//! inbox, by chunk size and copy threads. Prints the table; writes it as JSON.
//!
//! Environment: T3_BENCH_DEVICES (as `--devices`: `all`, a count, or adapter indices `0,1`; default 2
//! devices on the chosen adapter), T3_BENCH_MIB (comma list, default "1,4,16,64,256"; sizes over a
//! device's storage binding limit are skipped, said on stderr), T3_BENCH_THREADS (default
//! "1,2,4,8,16"), T3_BENCH_REPS (default 5), T3_BENCH_LINK_WG (the step kernel's workgroups, default 16;
//! 0 = unthrottled), T3_BENCH_PATH (`mapped` or `staged`, default mapped), T3_BENCH_JSON (file to append
//! one JSON line per row and per streamed row to), T3_BENCH_TABLE (file to write the whole table to as
//! JSON). Streams 1 GiB per direction on a GPU (two of the largest chunks on a CPU adapter).

#[allow(dead_code)]
mod common;

use common::*;
use std::process::ExitCode;

use anyhow::{bail, Context};
use t3_wgpu::devices::{DeviceSpec, Devices};
use t3_wgpu::gpu::GpuOptions;
use t3_wgpu::hostlink::calibration::{calibrate, Options};
use t3_wgpu::hostlink::Path;
use t3_wgpu::steps::Link;

fn main() -> ExitCode {
    exit_code(run())
}

fn run() -> anyhow::Result<()> {
    let spec: DeviceSpec = std::env::var("T3_BENCH_DEVICES")
        .unwrap_or_else(|_| "2".into())
        .parse()
        .context("T3_BENCH_DEVICES")?;
    let mibs: Vec<f64> = env_list("T3_BENCH_MIB", "1,4,16,64,256")?;
    let threads: Vec<usize> = env_list("T3_BENCH_THREADS", "1,2,4,8,16")?;
    let reps: usize = env_one("T3_BENCH_REPS", 5)?;
    let wg: u32 = env_one("T3_BENCH_LINK_WG", 16)?;
    let want = match std::env::var("T3_BENCH_PATH").as_deref() {
        Err(_) | Ok("") | Ok("mapped") => Path::Mapped,
        Ok("staged") => Path::Staged,
        Ok(other) => bail!("T3_BENCH_PATH = {other:?}: mapped or staged"),
    };
    let devices = Devices::open(
        &spec,
        &t3_wgpu::settings::with_environment(GpuOptions::default())?,
    )
    .context("the hostlink bench needs devices (see T3_BENCH_DEVICES, WGPU_BACKEND)")?;
    let limit = devices
        .gpus
        .iter()
        .map(|g| g.max_binding)
        .min()
        .unwrap_or(0);
    let mut bytes = Vec::new();
    for mib in mibs {
        let b = ((mib * (1u64 << 20) as f64) as u64).next_multiple_of(16);
        if b == 0 || b > limit {
            eprintln!("skipped {mib} MiB: outside 16 bytes to the devices' storage binding limit of {limit} bytes");
        } else {
            bytes.push(b);
        }
    }
    if bytes.is_empty() {
        bail!("no chunk size to measure (T3_BENCH_MIB)");
    }
    let cpu = devices.gpus[0].info.device_type == wgpu::DeviceType::Cpu;
    let max_bytes = bytes.iter().copied().max().unwrap_or(16);
    let opts_threads = threads.clone();
    let opts = Options {
        bytes,
        threads,
        reps,
        step_link: if wg == 0 {
            Link::Unthrottled
        } else {
            Link::Workgroups(wg)
        },
        want,
        // The streamed rows on the CPU too: two of the largest chunks per direction there.
        stream_bytes: if cpu { 2 * max_bytes } else { 1 << 30 },
        // The streamed rows' threads per lane: the largest of T3_BENCH_THREADS.
        stream_threads: opts_threads.iter().copied().max(),
    };
    let table = calibrate(&devices, &opts)?;
    print!("{}", table.text());
    for row in &table.rows {
        let mut v = serde_json::to_value(row)?;
        v["bench"] = "hostlink".into();
        v["devices"] = serde_json::to_value(&table.devices)?;
        v["step_link"] = table.step_link.clone().into();
        json_line(&v)?;
    }
    for st in &table.streams {
        let mut v = serde_json::to_value(st)?;
        v["bench"] = "hostlink stream".into();
        v["devices"] = serde_json::to_value(&table.devices)?;
        json_line(&v)?;
    }
    if let Ok(path) = std::env::var("T3_BENCH_TABLE") {
        table.save(&path)?;
    }
    Ok(())
}
