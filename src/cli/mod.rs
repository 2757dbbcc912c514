//! The `t3` command line: flags and their values, the commands, and what the binary prints.

pub mod args;
pub mod output;
pub mod run;
pub mod sweep;
pub mod tools;
pub mod values;

use anyhow::Result;

use t3_wgpu::files;
use t3_wgpu::workload;

use args::{Cli, Cmd};
use output::out;
use run::{check_run, demo, open_devices, open_gpu, run};
use sweep::{sweep, sweep_points};
use tools::{calibrate, calibrate_hostlink, info, plot};

/// `files` with the kernel sources `T3_SIMT_WGSL` / `T3_COOP_WGSL` name as inputs.
pub fn kernel_inputs(mut files: files::Files) -> Result<files::Files> {
    for (name, path) in t3_wgpu::settings::kernel_files()? {
        files = files.input(name, &path);
    }
    Ok(files)
}

/// Runs the command `cli` names; every check that needs no GPU comes before the GPU is opened.
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
            let checked = check_run(a)?;
            run(&open_devices(&cli.gpu, &a.devices)?, a, checked)
        }
        Some(Cmd::Plot { csv, x, svg, title }) => plot(csv, *x, svg, title.as_deref()),
        Some(Cmd::Sweep(a)) => {
            kernel_inputs(files::Files::default())?
                .output("--csv", &a.csv)
                .check()?;
            let points = sweep_points(a)?;
            sweep(&open_devices(&cli.gpu, &a.devices)?, a, points)
        }
        Some(Cmd::Calibrate {
            mib,
            reps,
            devices,
            link_path,
            out,
            json,
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
                Some(spec) => {
                    calibrate_hostlink(&cli.gpu, spec, *link_path, *mib, *reps, out, *json)
                }
                None => calibrate(&open_gpu(&cli.gpu)?, *mib, *reps, out, *json),
            }
        }
        None => demo(&open_gpu(&cli.gpu)?),
    }
}
