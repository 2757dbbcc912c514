//! The `t3` command line: flags and their values, the commands, and what the binary prints.

pub mod args;
pub mod knobs;
pub mod output;
pub mod progress;
pub mod run;
pub mod sweep;
pub mod tables;
pub mod tools;
pub mod tune;
pub mod values;

use anyhow::Result;

use t3_wgpu::devices::Devices;
use t3_wgpu::files;
use t3_wgpu::settings::KernelFiles;
use t3_wgpu::workload;

use args::{Cli, Cmd};
use output::out;
use run::{check_run, demo, open_devices, open_gpu, run};
use sweep::{sweep, sweep_points};
use tools::{calibrate, calibrate_hostlink, info, plot, HostlinkAsk};

/// Runs `work` on `devices` (the opened GPUs), and after a wait that ran past its bound leaves the
/// devices undropped: a device's drop waits for its GPU to go idle, without bound,
/// and the process is about to end anyway, which releases them. The one shutdown path after a
/// timeout: the error is said and the process exits 1 within the bound plus the time to say it.
fn bounded<D>(devices: D, work: impl FnOnce(&D) -> Result<()>) -> Result<()> {
    let r = work(&devices);
    if r.as_ref().is_err_and(timed_out) {
        std::mem::forget(devices);
    }
    r
}

/// Whether `e` or one of its causes is a wait past its bound.
pub fn timed_out(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        matches!(
            c.downcast_ref::<t3_wgpu::Error>(),
            Some(t3_wgpu::Error::Timeout { .. })
        )
    })
}

/// `files` with the kernel sources `--kernel-wgsl` names as inputs (a command must not write over
/// a kernel it builds).
pub fn kernel_inputs(kernels: &KernelFiles, mut files: files::Files) -> files::Files {
    for (what, path) in kernels.named() {
        files = files.input(what, path);
    }
    files
}

/// Runs the command `cli` names under the values `env` read from the environment; every check that
/// needs no GPU comes before the GPU is opened.
pub fn dispatch(cli: &Cli) -> Result<()> {
    match &cli.cmd {
        Some(Cmd::Info { json }) => info(&cli.gpu, *json),
        Some(Cmd::Presets {
            tokens,
            scale,
            json,
        }) => {
            let p = workload::presets(*tokens, *scale);
            if *json {
                outln!("{}", serde_json::to_string_pretty(&p)?)
            } else {
                out(&workload::table(&p))
            }
        }
        Some(Cmd::Run(a)) => {
            let checked = check_run(&cli.gpu.kernels(), a)?;
            bounded(open_devices(&cli.gpu, &a.devices)?, |g| run(g, a, checked))
        }
        Some(Cmd::Tune(a)) => {
            let mut f = kernel_inputs(&cli.gpu.kernels(), files::Files::default());
            if let Some(out) = &a.out {
                f = f.output("--out", out);
            }
            f.check()?;
            let jobs = tune::tune_jobs(a)?;
            bounded(open_devices(&cli.gpu, &a.devices)?, |g| {
                tune::tune(g, a, jobs)
            })
        }
        Some(Cmd::Plot { csv, x, svg, title }) => plot(csv, *x, svg, title.as_deref()),
        Some(Cmd::Sweep(a)) => {
            let (f, pre) = tables::check_tune(
                &a.tune,
                kernel_inputs(&cli.gpu.kernels(), files::Files::default()).output("--csv", &a.csv),
            )?;
            f.check()?;
            let points = sweep_points(a)?;
            bounded(open_devices(&cli.gpu, &a.devices)?, |g| {
                sweep(g, a, (points, pre))
            })
        }
        Some(Cmd::Calibrate {
            mib,
            reps,
            devices,
            link_path,
            out,
            json,
            host_loop,
            link_workgroups,
            beside_gemm,
            stream_mib,
        }) => {
            let out = out.as_deref().unwrap_or(match devices {
                Some(_) => t3_wgpu::hostlink::calibration::DEFAULT_TABLE,
                None => t3_wgpu::link::DEFAULT_TABLE,
            });
            if out == "-" {
                // The table goes to standard output anyway; `--out` is where it is kept.
                return Err(t3_wgpu::Error::invalid("--out", "-", "a file path").into());
            }
            files::Files::default().output("--out", out).check()?;
            match devices {
                Some(spec) => bounded(Devices::open(spec, &run::gpu_options(&cli.gpu)?)?, |d| {
                    let ask = HostlinkAsk {
                        want: *link_path,
                        link_workgroups: *link_workgroups,
                        copy_threads: host_loop.and_then(|h| h.copy_threads),
                        in_flight: host_loop.and_then(|h| h.in_flight),
                        stream_mib: *stream_mib,
                        beside_gemm: *beside_gemm,
                    };
                    calibrate_hostlink(d, ask, (*mib, *reps), out, *json)
                }),
                None => bounded(vec![open_gpu(&cli.gpu)?], |g| {
                    calibrate(&g[0], *mib, *reps, out, *json)
                }),
            }
        }
        None => bounded(vec![open_gpu(&cli.gpu)?], |g| demo(&g[0])),
    }
}
