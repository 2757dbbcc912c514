//! The `t3` command line: info, run, sweep, presets, calibrate; with no arguments, the demo.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::{Args, Parser, Subcommand};

use t3_wgpu::experiment::{self, Options, Report, Verify};
use t3_wgpu::gemm::Engine;
use t3_wgpu::gpu::{self, Gpu, GpuOptions};
use t3_wgpu::link::{self, LinkTable};
use t3_wgpu::modes::{self, Config, Kernels, StepLead};
use t3_wgpu::plan::ReduceVia;
use t3_wgpu::schedule::Collective;
use t3_wgpu::shapes::{Dtype, Shape, MAX_RANKS};
use t3_wgpu::steps::Link;
use t3_wgpu::{gantt, report, trace, workload};

#[derive(Parser)]
#[command(
    name = "t3",
    version,
    about = "T3 track & trigger: overlap GEMMs with their collectives on any GPU through wgpu.\nWith no arguments: the demo (T-NLG output projection, 4 ranks, all modes)."
)]
struct Cli {
    #[command(flatten)]
    gpu: GpuArgs,
    #[command(subcommand)]
    cmd: Option<Cmd>,
}

#[derive(Args, Clone)]
struct GpuArgs {
    /// Backends to consider (vulkan, metal, dx12, gl; comma list). Default: WGPU_BACKEND, else all but gl.
    #[arg(long, global = true, value_parser = backends)]
    backend: Option<String>,
    /// Substring of the adapter name. Default: WGPU_ADAPTER_NAME.
    #[arg(long, global = true)]
    adapter: Option<String>,
    /// Bound on every GPU wait, seconds (default: T3_TIMEOUT_S, else 120 plus a share of the work).
    #[arg(long, global = true, value_parser = timeout_secs)]
    timeout: Option<f64>,
}

#[derive(Subcommand)]
enum Cmd {
    /// List every adapter with backend, type, driver, features and limits.
    Info {
        #[arg(long)]
        json: bool,
    },
    /// Run one experiment.
    Run(RunArgs),
    /// Run a grid over ranks, chunks, link budgets and presets; one CSV row per point and mode.
    Sweep(SweepArgs),
    /// Print the workload table.
    Presets {
        #[arg(long, default_value_t = workload::DEFAULT_TOKENS, value_parser = positive_usize)]
        tokens: usize,
        #[arg(long, default_value_t = 1.0, value_parser = scale)]
        scale: f64,
        #[arg(long)]
        json: bool,
    },
    /// Plot a sweep's CSV: speedup and overlap efficiency of every mode against one column (SVG).
    Plot {
        /// The CSV `t3 sweep` wrote.
        #[arg(long)]
        csv: String,
        /// The swept column for the x axis: ranks, chunks, m, n or k.
        #[arg(long, default_value = "ranks")]
        x: String,
        #[arg(long)]
        svg: String,
        #[arg(long)]
        title: Option<String>,
    },
    /// Measure the GB/s a step reaches at each workgroup budget and save the link table.
    Calibrate {
        /// Bytes per measured copy, MiB (default 256, or 16 on a CPU adapter).
        #[arg(long, value_parser = positive_usize)]
        mib: Option<usize>,
        #[arg(long, default_value_t = 5, value_parser = positive_usize)]
        reps: usize,
        /// Where to save the table.
        #[arg(long, default_value = link::DEFAULT_TABLE)]
        out: String,
        #[arg(long)]
        json: bool,
    },
}

#[derive(Args, Clone)]
struct Workload {
    /// GEMM shape per rank, MxNxK (all-gather: M is the whole output, split over the ranks).
    #[arg(long, value_parser = parse_shape, conflicts_with = "preset")]
    shape: Option<Shape>,
    /// A workload preset (see `t3 presets`), e.g. tnlg-fc2-tp8.
    #[arg(long, value_parser = parse_preset)]
    preset: Option<String>,
    /// Tokens per step for presets.
    #[arg(long, default_value_t = workload::DEFAULT_TOKENS, value_parser = positive_usize)]
    tokens: usize,
    /// Shrink every preset dimension by this factor, in (0, 1].
    #[arg(long, default_value_t = 1.0, value_parser = scale)]
    scale: f64,
}

/// The GEMMs' operand type and kernel, shared by `run` and `sweep`.
#[derive(Args, Clone, Copy)]
struct GemmArgs {
    /// Element type of the GEMM operands: f32, f16 (tensor cores through cooperative matrices
    /// where the adapter has them, else a SHADER_F16 SIMT kernel) or bf16 (SIMT on any adapter:
    /// wgpu 30 has no bf16 cooperative matrices). Accumulation, outputs and steps are f32 either way.
    #[arg(long, default_value = "f32", value_parser = parse_dtype)]
    dtype: Dtype,
    /// GEMM kernel: auto (the adapter's best for the dtype), simt, or coop (cooperative matrices, f16).
    #[arg(long, default_value = "auto", value_parser = parse_engine)]
    gemm_kernel: KernelChoice,
}

impl GemmArgs {
    fn kernels(self, gpu: &Gpu) -> t3_wgpu::Result<Kernels> {
        Kernels::with(gpu, self.dtype, self.gemm_kernel.0)
    }
}

#[derive(Args, Clone)]
struct RunArgs {
    #[command(flatten)]
    workload: Workload,
    /// Emulated ranks (default: the preset's TP degree, else 4).
    #[arg(long, value_parser = ranks)]
    ranks: Option<usize>,
    /// reduce-scatter, direct-reduce-scatter, all-gather or all-reduce (default: the preset's, else
    /// reduce-scatter).
    #[arg(long, value_parser = parse_collective)]
    collective: Option<Collective>,
    /// Modes, comma-separated, or `all`.
    #[arg(long, default_value = "all", value_parser = parse_modes)]
    mode: ModeList,
    /// Chunks per rank's share of the output (each output is R shards x this many chunks).
    #[arg(long, default_value_t = 1, value_parser = positive_usize)]
    chunks: usize,
    #[command(flatten)]
    gemm: GemmArgs,
    /// How a reduce step is realised: update (T3), land (copy to an inbox, then reduce), or forward
    /// (the sender adds its inbox to its partial and lands the sum in the next inbox; ring only).
    #[arg(long, default_value = "update", value_parser = parse_via)]
    reduce: ReduceVia,
    /// Workgroups each step may use (the link budget).
    #[arg(long, value_parser = positive_u32, conflicts_with = "link_gbps")]
    link_workgroups: Option<u32>,
    /// Arbitration: while a pass holds GEMM work, its steps share at most this many workgroups
    /// (communication yields to compute, as T3's memory-controller arbitration). Default off.
    #[arg(long, value_parser = positive_u32)]
    arbitrate: Option<u32>,
    /// GEMM workgroups of a pass dispatched after the steps sharing it (whole GEMM ops), so the steps
    /// start before the GEMM's last wave: a count (0: steps after all GEMM work), or auto: as many
    /// as the steps have where the pass holds at most one step per rank (1 chunk), else 0.
    #[arg(long, default_value = "auto", value_parser = parse_step_lead)]
    step_lead: StepLead,
    /// Emulate a link of this many GB/s, using the table `t3 calibrate` saved.
    #[arg(long, value_parser = positive_f64)]
    link_gbps: Option<f64>,
    /// The link table for --link-gbps.
    #[arg(long, default_value = link::DEFAULT_TABLE)]
    link_table: String,
    /// Timed repetitions (the report gives medians).
    #[arg(long, default_value_t = 5, value_parser = positive_usize)]
    reps: usize,
    /// Untimed repetitions first.
    #[arg(long, default_value_t = 2)]
    warmup: usize,
    /// Seed of the random inputs.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Check every mode against the f64 reference and the trackers (default on).
    #[arg(long, overrides_with = "no_verify")]
    verify: bool,
    /// Skip the checks (large sweeps).
    #[arg(long)]
    no_verify: bool,
    /// Write the JSON report to FILE, or `-` for standard output (then nothing else goes there).
    #[arg(long)]
    json: Option<String>,
    /// One CSV row per mode.
    #[arg(long)]
    csv: Option<String>,
    /// Chrome trace JSON (Perfetto, chrome://tracing).
    #[arg(long)]
    trace: Option<String>,
    /// SVG Gantt chart.
    #[arg(long)]
    svg: Option<String>,
    /// NumPy dumps of every rank's inputs and output, and meta.json.
    #[arg(long)]
    dump: Option<String>,
}

#[derive(Args, Clone)]
struct SweepArgs {
    /// Presets to sweep (comma list); or --shape.
    #[arg(long, value_delimiter = ',', value_parser = parse_preset)]
    presets: Vec<String>,
    #[arg(long, value_parser = parse_shape)]
    shape: Option<Shape>,
    #[arg(long, default_value_t = workload::DEFAULT_TOKENS, value_parser = positive_usize)]
    tokens: usize,
    #[arg(long, default_value_t = 1.0, value_parser = scale)]
    scale: f64,
    #[arg(long, value_delimiter = ',', value_parser = ranks)]
    ranks: Vec<usize>,
    #[arg(long, value_delimiter = ',', default_value = "1", value_parser = positive_usize)]
    chunks: Vec<usize>,
    /// Link budgets in workgroups; 0 = unthrottled.
    #[arg(long, value_delimiter = ',', default_value = "0")]
    link_workgroups: Vec<u32>,
    /// Arbitration caps to sweep (see `t3 run --arbitrate`); 0 = off.
    #[arg(long, value_delimiter = ',', default_value = "0")]
    arbitrate: Vec<u32>,
    /// Step leads to sweep (see `t3 run --step-lead`).
    #[arg(long, value_delimiter = ',', default_value = "auto", value_parser = parse_step_lead)]
    step_lead: Vec<StepLead>,
    #[arg(long, value_parser = parse_collective)]
    collective: Option<Collective>,
    #[command(flatten)]
    gemm: GemmArgs,
    #[arg(long, default_value = "update", value_parser = parse_via)]
    reduce: ReduceVia,
    #[arg(long, default_value = "all", value_parser = parse_modes)]
    mode: ModeList,
    #[arg(long, default_value_t = 3, value_parser = positive_usize)]
    reps: usize,
    #[arg(long, default_value_t = 1)]
    warmup: usize,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[arg(long)]
    no_verify: bool,
    /// CSV output (one row per point and mode); `-` for standard output.
    #[arg(long, default_value = "-")]
    csv: String,
}

#[derive(Clone, Debug)]
struct ModeList(Vec<String>);

fn positive_usize(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(0) => Err("must be at least 1".into()),
        Ok(v) => Ok(v),
        Err(_) => Err(format!("'{s}' is not a positive integer")),
    }
}

fn positive_u32(s: &str) -> Result<u32, String> {
    positive_usize(s).and_then(|v| u32::try_from(v).map_err(|_| format!("'{s}' is too large")))
}

fn positive_f64(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err(format!("'{s}' is not a positive number")),
    }
}

fn timeout_secs(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v > 0.0 && v <= 1e9 => Ok(v),
        _ => Err(format!("'{s}' is not a number of seconds in (0, 1e9]")),
    }
}

fn backends(s: &str) -> Result<String, String> {
    for b in s.split(',').map(|b| b.trim().to_lowercase()) {
        if ![
            "vulkan",
            "metal",
            "dx12",
            "gl",
            "webgpu",
            "primary",
            "secondary",
            "all",
        ]
        .contains(&b.as_str())
        {
            return Err(format!(
                "unknown backend '{b}' (vulkan, metal, dx12, gl; comma-separated)"
            ));
        }
    }
    Ok(s.to_string())
}

fn scale(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if workload::valid_scale(v) => Ok(v),
        _ => Err(format!("'{s}' is not a scale in (0, 1]")),
    }
}

fn ranks(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(v) if (1..=MAX_RANKS).contains(&v) => Ok(v),
        _ => Err(format!(
            "'{s}' is not a rank count between 1 and {MAX_RANKS}"
        )),
    }
}

fn parse_dtype(s: &str) -> Result<Dtype, String> {
    Dtype::parse(s).map_err(|e| e.to_string())
}

/// `--gemm-kernel`: an engine, or None for the adapter's best (a newtype: clap reads a bare
/// `Option` field as an optional flag).
#[derive(Clone, Copy, Debug)]
struct KernelChoice(Option<Engine>);

fn parse_engine(s: &str) -> Result<KernelChoice, String> {
    Engine::parse(s)
        .map(KernelChoice)
        .map_err(|e| e.to_string())
}

fn parse_shape(s: &str) -> Result<Shape, String> {
    Shape::parse(s).map_err(|e| e.to_string())
}

fn parse_preset(s: &str) -> Result<String, String> {
    if workload::names()
        .iter()
        .any(|n| n.eq_ignore_ascii_case(s.trim()))
    {
        return Ok(s.trim().to_lowercase());
    }
    Err(match workload::closest(s) {
        Some(c) => format!("unknown preset '{s}' (did you mean {c}? `t3 presets` lists them)"),
        None => format!("unknown preset '{s}' (`t3 presets` lists them)"),
    })
}

fn parse_collective(s: &str) -> Result<Collective, String> {
    Collective::parse(s).ok_or_else(|| {
        format!(
            "unknown collective '{s}' (one of {})",
            Collective::ALL.map(|c| c.name()).join(", ")
        )
    })
}

fn parse_step_lead(s: &str) -> Result<StepLead, String> {
    StepLead::parse(s).map_err(|e| e.to_string())
}

fn parse_via(s: &str) -> Result<ReduceVia, String> {
    ReduceVia::parse(s).ok_or_else(|| format!("unknown reduce '{s}' (update, land or forward)"))
}

fn parse_modes(s: &str) -> Result<ModeList, String> {
    if s == "all" {
        return Ok(ModeList(
            modes::names().iter().map(|m| m.to_string()).collect(),
        ));
    }
    let mut v = Vec::new();
    for m in s.split(',').map(str::trim) {
        if !modes::names().contains(&m) {
            return Err(format!(
                "unknown mode '{m}' (one of {}, or all)",
                modes::names().join(", ")
            ));
        }
        v.push(m.to_string());
    }
    Ok(ModeList(v))
}

fn open_gpu(g: &GpuArgs) -> Result<Gpu> {
    Ok(Gpu::new(&GpuOptions {
        backend: g.backend.clone(),
        adapter: g.adapter.clone(),
        timeout: g.timeout.map(Duration::from_secs_f64),
        ..Default::default()
    })?)
}

/// Shape, ranks and collective from --shape or --preset (and their overrides).
fn resolve(
    w: &Workload,
    ranks: Option<usize>,
    collective: Option<Collective>,
) -> Result<(Shape, usize, Collective, String)> {
    match (&w.shape, &w.preset) {
        (Some(s), _) => Ok((
            *s,
            ranks.unwrap_or(4),
            collective.unwrap_or(Collective::ReduceScatter),
            format!("shape {s}"),
        )),
        (None, Some(p)) => {
            let pr = workload::find(p, w.tokens, w.scale).context("preset vanished")?;
            Ok((
                Shape::new(pr.m, pr.n, pr.k)?,
                ranks.unwrap_or(pr.tp),
                collective.unwrap_or(pr.collective),
                pr.name,
            ))
        }
        (None, None) => Err(t3_wgpu::Error::invalid(
            "workload",
            "none given",
            "--shape MxNxK or --preset NAME (see `t3 presets`)",
        )
        .into()),
    }
}

fn link_of(a: &RunArgs) -> Result<Link> {
    Ok(match (a.link_workgroups, a.link_gbps) {
        (Some(w), _) => Link::Workgroups(w),
        (None, Some(g)) => LinkTable::load(&a.link_table)?.budget_for(g)?,
        (None, None) => Link::Unthrottled,
    })
}

/// Writes every output a run asked for; says where on stderr (stdout may carry the JSON).
fn outputs(a: &RunArgs, r: &Report) -> Result<()> {
    let json = serde_json::to_string_pretty(r)?;
    match a.json.as_deref() {
        Some("-") => println!("{json}"),
        Some(path) => {
            report::write(path, &json)?;
            eprintln!("wrote {path}");
        }
        None => {}
    }
    if let Some(path) = &a.csv {
        let mut s = String::from(report::CSV_HEADER) + "\n";
        for row in report::csv_rows(r) {
            s += &row;
            s += "\n";
        }
        report::write(path, &s)?;
        eprintln!("wrote {path}");
    }
    if let Some(path) = &a.trace {
        report::write(
            path,
            &serde_json::to_string(&trace::chrome_trace(&r.timelines))?,
        )?;
        eprintln!("wrote {path} (open in https://ui.perfetto.dev or chrome://tracing)");
    }
    if let Some(path) = &a.svg {
        report::write(path, &gantt::gantt_svg(&r.timelines))?;
        eprintln!("wrote {path}");
    }
    Ok(())
}

/// Whether any mode's check failed: a wrong number is a failure, never just a row.
fn wrong(r: &Report) -> bool {
    r.results.iter().any(|m| {
        m.trackers_ok == Some(false) || m.max_rel_error.is_some_and(|e| e.is_nan() || e > 1e-4)
    })
}

fn run(gpu: &Gpu, a: &RunArgs) -> Result<()> {
    let (shape, ranks, collective, label) = resolve(&a.workload, a.ranks, a.collective)?;
    let kernels = a.gemm.kernels(gpu)?;
    let opts = Options {
        config: Config {
            shape,
            ranks,
            chunks: a.chunks,
            collective,
            via: a.reduce,
            link: link_of(a)?,
            dtype: a.gemm.dtype,
            arbitrate: a.arbitrate,
            step_lead: a.step_lead,
        },
        modes: a.mode.0.clone(),
        reps: a.reps,
        warmup: a.warmup,
        seed: a.seed,
        verify: if a.no_verify { Some(Verify::Off) } else { None },
    };
    let (sys, inputs) = experiment::prepare(gpu, &kernels, &opts)?;
    let r = experiment::measure(&sys, &inputs, &opts)?;
    if a.json.as_deref() != Some("-") {
        println!("{label}\n{}", report::text(&r));
    }
    outputs(a, &r)?;
    if let Some(dir) = &a.dump {
        report::dump(dir, &sys, &inputs)?;
        eprintln!("wrote {dir}/rank*_{{a,b,out}}.npy and {dir}/meta.json");
    }
    anyhow::ensure!(
        !wrong(&r),
        "a mode's result or tracker check failed (see the table)"
    );
    Ok(())
}

fn sweep(gpu: &Gpu, a: &SweepArgs) -> Result<()> {
    let kernels = a.gemm.kernels(gpu)?;
    let mut points = Vec::new();
    let workloads: Vec<(Shape, Option<usize>, Collective, String)> = if let Some(s) = a.shape {
        vec![(
            s,
            None,
            a.collective.unwrap_or(Collective::ReduceScatter),
            format!("{s}"),
        )]
    } else {
        if a.presets.is_empty() {
            return Err(t3_wgpu::Error::invalid(
                "workload",
                "none given",
                "--presets NAME,... or --shape MxNxK",
            )
            .into());
        }
        a.presets
            .iter()
            .map(|p| {
                let pr = workload::find(p, a.tokens, a.scale).expect("validated preset");
                Ok((
                    Shape::new(pr.m, pr.n, pr.k)?,
                    Some(pr.tp),
                    a.collective.unwrap_or(pr.collective),
                    pr.name,
                ))
            })
            .collect::<Result<_>>()?
    };
    for (shape, tp, coll, label) in &workloads {
        let rs: Vec<usize> = if a.ranks.is_empty() {
            vec![tp.unwrap_or(4)]
        } else {
            a.ranks.clone()
        };
        for &r in &rs {
            for &c in &a.chunks {
                for &w in &a.link_workgroups {
                    for &arb in &a.arbitrate {
                        for &step_lead in &a.step_lead {
                            let link = if w == 0 {
                                Link::Unthrottled
                            } else {
                                Link::Workgroups(w)
                            };
                            let config = Config {
                                shape: *shape,
                                ranks: r,
                                chunks: c,
                                collective: *coll,
                                via: a.reduce,
                                link,
                                dtype: a.gemm.dtype,
                                arbitrate: (arb > 0).then_some(arb),
                                step_lead,
                            };
                            points.push((label.clone(), config));
                        }
                    }
                }
            }
        }
    }
    let bar = if std::io::stderr().is_terminal() {
        let b = indicatif::ProgressBar::new(points.len() as u64);
        b.set_style(
            indicatif::ProgressStyle::with_template(
                "{bar:40} {pos}/{len} {msg} [{elapsed} < {eta}]",
            )
            .expect("template"),
        );
        Some(b)
    } else {
        None
    };
    let header = String::from("workload,") + report::CSV_HEADER + "\n";
    let to_stdout = a.csv == "-";
    // Rows are written as each point finishes, so an interrupted sweep keeps what it measured.
    let mut file: Box<dyn std::io::Write> = if to_stdout {
        print!("{header}");
        Box::new(std::io::sink())
    } else {
        let mut f = std::fs::File::create(&a.csv).with_context(|| a.csv.clone())?;
        f.write_all(header.as_bytes())
            .with_context(|| a.csv.clone())?;
        Box::new(f)
    };
    let mut failures = 0;
    for (i, (label, config)) in points.iter().enumerate() {
        let msg = format!(
            "{label} ranks {} chunks {} link {}{} step lead {}",
            config.ranks,
            config.chunks,
            config.link.describe(),
            config
                .arbitrate
                .map(|w| format!(" arbitrate {w}"))
                .unwrap_or_default(),
            config.step_lead.describe()
        );
        match &bar {
            Some(b) => b.set_message(msg.clone()),
            None => eprintln!("[{}/{}] {msg}", i + 1, points.len()),
        }
        let opts = Options {
            config: config.clone(),
            modes: a.mode.0.clone(),
            reps: a.reps,
            warmup: a.warmup,
            seed: a.seed,
            verify: if a.no_verify { Some(Verify::Off) } else { None },
        };
        // A failed point is recorded and the sweep goes on: hours of other points stay useful.
        let rows = match experiment::run(gpu, &kernels, &opts) {
            Ok(rep) => {
                if wrong(&rep) {
                    failures += 1;
                    let line = format!(
                        "error: {msg}: a mode's result or tracker check failed (see its row)"
                    );
                    match &bar {
                        Some(b) => b.println(&line),
                        None => eprintln!("{line}"),
                    }
                }
                report::csv_rows(&rep)
            }
            Err(e) => {
                failures += 1;
                let line = format!("error: {msg}: {e}");
                match &bar {
                    Some(b) => b.println(&line),
                    None => eprintln!("{line}"),
                }
                vec![report::csv_error_row(&opts.config, &e.to_string())]
            }
        };
        for row in rows {
            let line = format!("{label},{row}\n");
            if to_stdout {
                print!("{line}");
            } else {
                file.write_all(line.as_bytes())
                    .with_context(|| a.csv.clone())?;
                file.flush().with_context(|| a.csv.clone())?;
            }
        }
        if let Some(b) = &bar {
            b.inc(1);
        }
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    if !to_stdout {
        eprintln!("wrote {} ({} points)", a.csv, points.len());
    }
    anyhow::ensure!(
        failures == 0,
        "{failures} of {} points failed (their rows say why)",
        points.len()
    );
    Ok(())
}

fn info(g: &GpuArgs, json: bool) -> Result<()> {
    let list = gpu::list_adapters(&GpuOptions {
        backend: g.backend.clone(),
        ..Default::default()
    });
    if json {
        println!("{}", serde_json::to_string_pretty(&list)?);
        return Ok(());
    }
    if list.is_empty() {
        println!("no adapters found (install a Vulkan, Metal or DX12 driver; without a GPU: apt-get install mesa-vulkan-drivers)");
    }
    for a in &list {
        println!("{} [{} {}]", a.name, a.backend, a.device_type);
        println!("  driver        {} {}", a.driver, a.driver_info);
        println!(
            "  features      {}",
            if a.features.is_empty() {
                "(none of the optional ones)".into()
            } else {
                a.features.join(" ")
            }
        );
        println!(
            "  subgroups     {}..{} wide; cooperative matrices {}",
            a.subgroup_sizes[0],
            a.subgroup_sizes[1],
            if a.cooperative_matrix.is_empty() {
                "none".into()
            } else {
                a.cooperative_matrix.join(", ")
            }
        );
        println!("  bf16 operands SIMT kernel only (wgpu 30 has no bf16 shader type or cooperative-matrix configuration)");
        println!("  storage binding {} MiB, buffer {} MiB, workgroups/dim {}, invocations/wg {}, wg storage {} KiB",
            a.max_storage_buffer_binding_size >> 20, a.max_buffer_size >> 20, a.max_compute_workgroups_per_dimension,
            a.max_compute_invocations_per_workgroup, a.max_compute_workgroup_storage_size >> 10);
    }
    Ok(())
}

fn plot(csv: &str, x: &str, svg: &str, title: Option<&str>) -> Result<()> {
    let text = std::fs::read_to_string(csv).with_context(|| csv.to_string())?;
    let points =
        t3_wgpu::plot::points_from_csv(&text, x).map_err(|e| anyhow::anyhow!("{csv}: {e}"))?;
    let title = title
        .map(str::to_string)
        .unwrap_or_else(|| format!("{csv}: speedup and overlap efficiency vs {x}"));
    report::write(svg, &t3_wgpu::plot::svg(&points, x, &title))?;
    eprintln!("wrote {svg}");
    Ok(())
}

fn calibrate(gpu: &Gpu, mib: Option<usize>, reps: usize, out: &str, json: bool) -> Result<()> {
    let kernel = t3_wgpu::steps::StepKernel::new(gpu)?;
    let cpu = gpu.info.device_type == wgpu::DeviceType::Cpu;
    let mib = mib.unwrap_or(if cpu { 16 } else { 256 });
    let t = link::calibrate(gpu, &kernel, (mib as u64) << 20, reps)?;
    t.save(out)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&t)?);
    } else {
        print!("{}", t.text());
    }
    eprintln!("saved {out}");
    Ok(())
}

/// The demo: T-NLG's output projection at 4 ranks, scaled to the adapter, every mode.
fn demo(gpu: &Gpu) -> Result<()> {
    let cpu = gpu.info.device_type == wgpu::DeviceType::Cpu;
    // On a CPU adapter (lavapipe) 1/16 of every dimension keeps the demo under a minute.
    let mut scale = if cpu { 1.0 / 16.0 } else { 1.0 };
    let preset = "tnlg-op-tp4";
    let pick = |scale: f64| {
        workload::find(preset, workload::DEFAULT_TOKENS, scale).expect("demo preset exists")
    };
    // Shrink until every buffer fits the adapter's binding limit.
    while (pick(scale).largest_buffer_bytes()) > gpu.max_binding && scale > 1e-3 {
        scale /= 2.0;
    }
    let pr = pick(scale);
    println!(
        "demo: {} ({} x {} ranks, scale {scale})",
        pr.name,
        Shape::new(pr.m, pr.n, pr.k)?,
        pr.tp
    );
    let a = RunArgs {
        workload: Workload {
            shape: None,
            preset: Some(preset.into()),
            tokens: workload::DEFAULT_TOKENS,
            scale,
        },
        ranks: None,
        collective: None,
        mode: parse_modes("all").expect("all"),
        chunks: 2,
        gemm: GemmArgs {
            dtype: Dtype::F32,
            gemm_kernel: KernelChoice(None),
        },
        reduce: ReduceVia::Update,
        link_workgroups: None,
        arbitrate: None,
        step_lead: StepLead::Auto,
        link_gbps: None,
        link_table: link::DEFAULT_TABLE.into(),
        reps: if cpu { 3 } else { 10 },
        warmup: if cpu { 1 } else { 3 },
        seed: 1,
        verify: true,
        no_verify: false,
        json: Some("t3-results.json".into()),
        csv: None,
        trace: Some("t3-trace.json".into()),
        svg: Some("t3-timeline.svg".into()),
        dump: None,
    };
    run(gpu, &a)?;
    let cwd = std::env::current_dir()
        .map(|d| d.display().to_string())
        .unwrap_or_default();
    println!("\nwrote t3-timeline.svg, t3-trace.json and t3-results.json in {cwd}");
    Ok(())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match &cli.cmd {
        Some(Cmd::Info { json }) => info(&cli.gpu, *json),
        Some(Cmd::Presets {
            tokens,
            scale,
            json,
        }) => {
            let p = workload::presets(*tokens, *scale);
            if *json {
                serde_json::to_string_pretty(&p)
                    .map(|s| println!("{s}"))
                    .map_err(Into::into)
            } else {
                print!("{}", workload::table(&p));
                Ok(())
            }
        }
        Some(Cmd::Run(a)) => open_gpu(&cli.gpu).and_then(|g| run(&g, a)),
        Some(Cmd::Plot { csv, x, svg, title }) => plot(csv, x, svg, title.as_deref()),
        Some(Cmd::Sweep(a)) => open_gpu(&cli.gpu).and_then(|g| sweep(&g, a)),
        Some(Cmd::Calibrate {
            mib,
            reps,
            out,
            json,
        }) => open_gpu(&cli.gpu).and_then(|g| calibrate(&g, *mib, *reps, out, *json)),
        None => open_gpu(&cli.gpu).and_then(|g| demo(&g)),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // A parameter out of range is a usage error (exit 2, as clap's own); anything else is a
        // runtime failure (exit 1).
        Err(e)
            if matches!(
                e.downcast_ref::<t3_wgpu::Error>(),
                Some(t3_wgpu::Error::Invalid { .. })
            ) =>
        {
            eprintln!("error: {e:#}\n\nFor more information, try '--help'.");
            ExitCode::from(2)
        }
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(1)
        }
    }
}
