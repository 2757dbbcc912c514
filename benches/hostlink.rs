//! Calibrates the host-staged link between devices (src/hostlink/calibration.rs): per direction, GB/s of the
//! sender's kernel writing its outbox, of the maps, and of the host's threaded copy into the receiver's
//! inbox, by chunk size and copy threads. Prints the table; writes it as JSON.
//!
//! Flags after `--` (`cargo bench --bench hostlink -- --help`): `--devices`, `--mib`, `--threads`,
//! `--reps`, `--link-wg`, `--path`, `--json FILE` (a line per row and per streamed row), `--table
//! FILE` (the whole table as JSON). Streams 1 GiB per direction on a GPU (two of the largest chunks
//! on a CPU adapter).

mod common;

use common::*;
use std::process::ExitCode;

use anyhow::{bail, Context};
use t3_wgpu::devices::{DeviceSpec, Devices};
use t3_wgpu::hostlink::calibration::{calibrate, Options};
use t3_wgpu::hostlink::Path;
use t3_wgpu::steps::Link;

/// The host link between devices, by chunk size and copy threads.
#[derive(clap::Parser, Debug)]
#[command(name = "bench-hostlink")]
struct Args {
    /// The devices, as t3's `--devices`: all, a count N (N devices on the chosen adapter) or
    /// adapter indices (`0,1`).
    #[arg(long, default_value = "2")]
    devices: DeviceSpec,
    /// Chunk sizes, MiB (a comma list; sizes over a device's storage binding limit are skipped,
    /// said on stderr).
    #[arg(long, value_delimiter = ',', default_value = "1,4,16,64,256")]
    mib: Vec<f64>,
    /// Copy threads per link (a comma list; the streamed rows take the largest).
    #[arg(long, value_delimiter = ',', default_value = "1,2,4,8,16", value_parser = clap::value_parser!(u64).range(1..=64))]
    threads: Vec<u64>,
    /// Timed repetitions per measurement (medians reported).
    #[arg(long, default_value_t = 5, value_parser = reps)]
    reps: u32,
    /// The sender's step kernel's workgroups (0: unthrottled).
    #[arg(long, default_value_t = 16)]
    link_wg: u32,
    /// The path every link takes: mapped or staged.
    #[arg(long, default_value = "mapped", value_parser = path)]
    path: Path,
    /// Write the whole table to FILE as JSON.
    #[arg(long, value_name = "FILE")]
    table: Option<String>,
    #[command(flatten)]
    out: Out,
}

fn path(s: &str) -> Result<Path, String> {
    match s {
        "mapped" => Ok(Path::Mapped),
        "staged" => Ok(Path::Staged),
        _ => Err(format!("'{s}': mapped or staged")),
    }
}

fn main() -> ExitCode {
    exit_code(run(clap::Parser::parse()))
}

fn run(args: Args) -> anyhow::Result<()> {
    let threads: Vec<usize> = args.threads.iter().map(|&t| t as usize).collect();
    let (reps, wg, want) = (args.reps as usize, args.link_wg, args.path);
    let devices = Devices::open(&args.devices, &gpu_options(None)?)
        .context("the hostlink bench needs devices (see --devices, WGPU_BACKEND)")?;
    let limit = devices
        .gpus
        .iter()
        .map(|g| g.max_binding)
        .min()
        .unwrap_or(0);
    let mut bytes = Vec::new();
    for &mib in &args.mib {
        let b = ((mib * (1u64 << 20) as f64) as u64).next_multiple_of(16);
        if b == 0 || b > limit {
            eprintln!("skipped {mib} MiB: outside 16 bytes to the devices' storage binding limit of {limit} bytes");
        } else {
            bytes.push(b);
        }
    }
    if bytes.is_empty() {
        bail!("no chunk size to measure (--mib)");
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
        stream_bytes: if cpu { 2 * max_bytes } else { 4 << 30 },
        // The streamed rows' threads per lane: the largest of --threads.
        stream_threads: opts_threads.iter().copied().max(),
        // `t3 calibrate --devices --beside-gemm` times the link beside a GEMM.
        beside_gemm: None,
        ..Options::default()
    };
    let table = calibrate(&devices, &opts)?;
    print!("{}", table.text());
    for row in &table.rows {
        let mut v = serde_json::to_value(row)?;
        v["bench"] = "hostlink".into();
        v["devices"] = serde_json::to_value(&table.devices)?;
        v["step_link"] = table.step_link.clone().into();
        args.out.line(&v)?;
    }
    for st in &table.streams {
        let mut v = serde_json::to_value(st)?;
        v["bench"] = "hostlink stream".into();
        v["devices"] = serde_json::to_value(&table.devices)?;
        args.out.line(&v)?;
    }
    if let Some(path) = &args.table {
        table.save(path)?;
    }
    Ok(())
}
