//! The `t3` command line: info, run, sweep, presets, calibrate; with no arguments, the demo.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use clap::{Args, Parser, Subcommand, ValueEnum};

use t3_wgpu::experiment::{self, Options, Report, Verify};
use t3_wgpu::files;
use t3_wgpu::gemm::Engine;
use t3_wgpu::gpu::{self, Gpu, GpuOptions};
use t3_wgpu::link::{self, LinkTable};
use t3_wgpu::modes::{self, Config, Kernels, StepLead};
use t3_wgpu::plan::ReduceVia;
use t3_wgpu::report::{self, Row};
use t3_wgpu::schedule::Collective;
use t3_wgpu::shapes::{Dtype, Shape, MAX_DIM, MAX_RANKS};
use t3_wgpu::steps::Link;
use t3_wgpu::{gantt, trace, workload};

/// Most timed or warm-up repetitions of a run (each is the whole plan, at least a millisecond).
const MAX_REPS: usize = 10_000;

/// Most points of a sweep grid (each point runs every mode; a bigger grid is a typing slip).
const MAX_POINTS: usize = 100_000;

/// Standard output was closed by its reader (`t3 sweep | head -1`): stop quietly, as a pipe expects.
#[derive(Debug, thiserror::Error)]
#[error("standard output closed")]
struct StdoutClosed;

/// Writes to standard output; a closed pipe becomes [`StdoutClosed`] instead of a panic.
fn out(text: &str) -> Result<()> {
    let mut o = std::io::stdout().lock();
    match o.write_all(text.as_bytes()).and_then(|()| o.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Err(StdoutClosed.into()),
        r => Ok(r.context("writing to standard output")?),
    }
}

/// `println!` that returns [`StdoutClosed`] rather than panicking on a closed pipe.
macro_rules! outln {
    ($($t:tt)*) => { out(&format!("{}\n", format_args!($($t)*))) };
}

/// `eprintln!` that never panics: a closed standard error loses the note, not the run.
macro_rules! note {
    ($($t:tt)*) => {{ let _ = writeln!(std::io::stderr(), $($t)*); }};
}

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
    /// Bound on every GPU wait, seconds in (0, 1e9] (default: T3_TIMEOUT_S, else 120 plus a share of the work).
    #[arg(long, global = true, value_parser = timeout_secs)]
    timeout: Option<Duration>,
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
        #[arg(long, default_value_t = workload::DEFAULT_TOKENS, value_parser = tokens)]
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
        /// The swept column for the x axis.
        #[arg(long, value_enum, default_value_t = PlotX::Ranks)]
        x: PlotX,
        #[arg(long)]
        svg: String,
        #[arg(long)]
        title: Option<String>,
    },
    /// Measure the GB/s a step reaches at each workgroup budget and save the link table.
    Calibrate {
        /// Bytes per measured copy, MiB (default 256, or 16 on a CPU adapter; at most 4096).
        #[arg(long, value_parser = mib)]
        mib: Option<usize>,
        #[arg(long, default_value_t = 5, value_parser = reps)]
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
    #[arg(long, default_value_t = workload::DEFAULT_TOKENS, value_parser = tokens)]
    tokens: usize,
    /// Shrink every preset dimension by this factor, in (0, 1].
    #[arg(long, default_value_t = 1.0, value_parser = scale)]
    scale: f64,
}

/// The GEMMs' operand type and kernel, shared by `run` and `sweep`.
#[derive(Args, Clone, Copy)]
struct GemmArgs {
    /// Element type of the GEMM operands: f32, or f16 (tensor cores through cooperative matrices
    /// where the adapter has them, else a SHADER_F16 SIMT kernel). Accumulation, outputs and steps
    /// are f32 either way.
    #[arg(long, default_value = "f32", ignore_case = true)]
    dtype: DtypeArg,
    /// GEMM kernel: auto (the adapter's best for the dtype), simt, or coop (cooperative matrices, f16).
    #[arg(long, default_value = "auto", ignore_case = true)]
    gemm_kernel: KernelArg,
}

impl GemmArgs {
    fn kernels(self, gpu: &Gpu) -> t3_wgpu::Result<Kernels> {
        Kernels::with(gpu, self.dtype.0, self.gemm_kernel.0)
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
    #[arg(long, ignore_case = true)]
    collective: Option<CollectiveArg>,
    /// Modes, comma-separated, or `all`.
    #[arg(long, value_delimiter = ',', default_value = "all", value_parser = mode_names())]
    mode: Vec<String>,
    /// Chunks per rank's share of the output (each output is R shards x this many chunks).
    #[arg(long, default_value_t = 1, value_parser = chunks)]
    chunks: usize,
    #[command(flatten)]
    gemm: GemmArgs,
    /// How a reduce step is realised: update (T3), land (copy to an inbox, then reduce), or forward
    /// (the sender adds its inbox to its partial and lands the sum in the next inbox; ring only).
    #[arg(long, default_value = "update", ignore_case = true)]
    reduce: ReduceArg,
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
    /// Timed repetitions (the report gives medians), at most 10000.
    #[arg(long, default_value_t = 5, value_parser = reps)]
    reps: usize,
    /// Untimed repetitions first, at most 10000.
    #[arg(long, default_value_t = 2, value_parser = warmup)]
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
    /// One CSV row per mode (the columns of `t3 sweep`'s), or `-` for standard output.
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
    #[arg(long, default_value_t = workload::DEFAULT_TOKENS, value_parser = tokens)]
    tokens: usize,
    #[arg(long, default_value_t = 1.0, value_parser = scale)]
    scale: f64,
    #[arg(long, value_delimiter = ',', value_parser = ranks)]
    ranks: Vec<usize>,
    #[arg(long, value_delimiter = ',', default_value = "1", value_parser = chunks)]
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
    #[arg(long, ignore_case = true)]
    collective: Option<CollectiveArg>,
    #[command(flatten)]
    gemm: GemmArgs,
    #[arg(long, default_value = "update", ignore_case = true)]
    reduce: ReduceArg,
    #[arg(long, value_delimiter = ',', default_value = "all", value_parser = mode_names())]
    mode: Vec<String>,
    #[arg(long, default_value_t = 3, value_parser = reps)]
    reps: usize,
    #[arg(long, default_value_t = 1, value_parser = warmup)]
    warmup: usize,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[arg(long)]
    no_verify: bool,
    /// CSV output (one row per point and mode); `-` for standard output.
    #[arg(long, default_value = "-")]
    csv: String,
}

/// The modes to run, and those named explicitly (a mode that cannot apply is an error only when
/// named; under `all` it is listed as skipped).
#[derive(Clone, Debug)]
struct ModeList {
    modes: Vec<String>,
    named: Vec<String>,
}

/// The swept column `t3 plot` puts on the x axis.
#[derive(Clone, Copy, Debug, ValueEnum)]
enum PlotX {
    Ranks,
    Chunks,
    M,
    N,
    K,
    Arbitrate,
}

impl PlotX {
    fn column(self) -> &'static str {
        match self {
            PlotX::Ranks => "ranks",
            PlotX::Chunks => "chunks",
            PlotX::M => "m",
            PlotX::N => "n",
            PlotX::K => "k",
            PlotX::Arbitrate => "arbitrate",
        }
    }
}

fn bounded_usize(s: &str, lo: usize, hi: usize) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(v) if (lo..=hi).contains(&v) => Ok(v),
        Ok(0) => Err("must be at least 1".into()),
        _ => Err(format!("'{s}' is not an integer between {lo} and {hi}")),
    }
}

fn positive_u32(s: &str) -> Result<u32, String> {
    bounded_usize(s, 1, u32::MAX as usize).map(|v| v as u32)
}

fn reps(s: &str) -> Result<usize, String> {
    bounded_usize(s, 1, MAX_REPS)
}

fn warmup(s: &str) -> Result<usize, String> {
    bounded_usize(s, 0, MAX_REPS)
}

fn chunks(s: &str) -> Result<usize, String> {
    bounded_usize(s, 1, MAX_DIM)
}

fn tokens(s: &str) -> Result<usize, String> {
    bounded_usize(s, 1, MAX_DIM)
}

fn mib(s: &str) -> Result<usize, String> {
    bounded_usize(s, 1, 4096)
}

fn positive_f64(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err(format!("'{s}' is not a positive number")),
    }
}

fn timeout_secs(s: &str) -> Result<Duration, String> {
    gpu::parse_timeout("--timeout", s).map_err(|e| e.to_string())
}

fn backends(s: &str) -> Result<String, String> {
    gpu::parse_backends("--backend", s)
        .map(|_| s.to_string())
        .map_err(|e| e.to_string())
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

/// A library enum as a clap value: names from the library's own list, so that `--help`, the error
/// for a bad value and clap's "a similar value exists" suggestion all follow the library.
macro_rules! value_enum {
    ($arg:ident, $ty:ty, $all:expr, $name:expr) => {
        #[derive(Clone, Copy, Debug)]
        struct $arg($ty);

        impl ValueEnum for $arg {
            fn value_variants<'a>() -> &'a [Self] {
                static ALL: std::sync::OnceLock<Vec<$arg>> = std::sync::OnceLock::new();
                ALL.get_or_init(|| $all.into_iter().map($arg).collect())
            }

            fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
                let name: fn($ty) -> &'static str = $name;
                Some(clap::builder::PossibleValue::new(name(self.0)))
            }
        }
    };
}

/// Every reduce realisation and GEMM kernel; the matches fail to compile when one is added, so that
/// the lists cannot fall behind.
const REDUCES: [ReduceVia; 3] = [ReduceVia::Update, ReduceVia::Land, ReduceVia::Forward];
const KERNELS: [Option<Engine>; 3] = [None, Some(Engine::Simt), Some(Engine::Coop)];
const _: () = {
    fn _every_reduce(v: ReduceVia) {
        match v {
            ReduceVia::Update | ReduceVia::Land | ReduceVia::Forward => {}
        }
    }
    fn _every_engine(e: Engine) {
        match e {
            Engine::Simt | Engine::Coop => {}
        }
    }
};

value_enum!(DtypeArg, Dtype, Dtype::ALL, Dtype::name);
value_enum!(CollectiveArg, Collective, Collective::ALL, Collective::name);
value_enum!(ReduceArg, ReduceVia, REDUCES, ReduceVia::name);
// `--gemm-kernel`: an engine, or None for the adapter's best.
value_enum!(KernelArg, Option<Engine>, KERNELS, |e| e
    .map_or("auto", Engine::name));

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

fn parse_step_lead(s: &str) -> Result<StepLead, String> {
    StepLead::parse(s).map_err(|e| e.to_string())
}

/// `--mode`: the modes' names, and `all`.
fn mode_names() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(modes::names().into_iter().chain(["all"]))
}

/// The modes to run, in report order, each once (`all` anywhere stands for every mode).
fn mode_list(list: &[String]) -> ModeList {
    let all = list.iter().any(|m| m == "all");
    let mut named: Vec<String> = list.iter().filter(|m| *m != "all").cloned().collect();
    named.sort();
    named.dedup();
    let modes = modes::names()
        .iter()
        .filter(|n| all || named.iter().any(|m| m == *n))
        .map(|n| n.to_string())
        .collect();
    ModeList { modes, named }
}

fn open_gpu(g: &GpuArgs) -> Result<Gpu> {
    Ok(Gpu::new(&GpuOptions {
        backend: g.backend.clone(),
        adapter: g.adapter.clone(),
        timeout: g.timeout,
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
            s.to_string(),
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

/// Refuses a configuration that cannot apply, or a mode named for it that cannot run it.
fn validate(config: &Config, modes: &ModeList) -> t3_wgpu::Result<()> {
    config.validate()?;
    modes.named.iter().try_for_each(|m| config.check_mode(m))
}

/// `--link-gbps`: the table and the budget it picks, before any GPU work (the adapter is checked
/// once the GPU is open).
struct LinkChoice {
    table: LinkTable,
    asked: f64,
    emulated: f64,
    link: Link,
}

fn link_choice(a: &RunArgs) -> Result<Option<LinkChoice>> {
    let Some(asked) = a.link_gbps else {
        return Ok(None);
    };
    let table = LinkTable::load(&a.link_table)?;
    let (link, emulated) = table.budget_for(asked)?;
    Ok(Some(LinkChoice {
        table,
        asked,
        emulated,
        link,
    }))
}

/// Says what the link emulates against what was asked (stderr: stdout may carry the JSON).
fn say_link(a: &RunArgs, c: &LinkChoice) {
    let off = (c.emulated / c.asked - 1.0) * 100.0;
    let warn = if off.abs() > 10.0 {
        format!(" ({off:+.0}%: no budget in the table comes closer)")
    } else {
        String::new()
    };
    note!(
        "link: asked {} GB/s, emulating {:.1} GB/s with {} (measured in {}){warn}",
        c.asked,
        c.emulated,
        c.link.describe(),
        a.link_table
    );
}

/// A run checked before any GPU work: workload, combinations, output paths and link table.
struct Checked {
    label: String,
    config: Config,
    link: Option<LinkChoice>,
}

fn check_run(a: &RunArgs) -> Result<Checked> {
    let outputs: Vec<(&'static str, &str, bool)> = [
        ("--json", &a.json, false),
        ("--csv", &a.csv, false),
        ("--trace", &a.trace, false),
        ("--svg", &a.svg, false),
        ("--dump", &a.dump, true),
    ]
    .into_iter()
    .filter_map(|(what, path, dir)| path.as_deref().map(|p| (what, p, dir)))
    .collect();
    files::check_outputs(&outputs)?;
    let (shape, ranks, collective, label) =
        resolve(&a.workload, a.ranks, a.collective.map(|c| c.0))?;
    let link = link_choice(a)?;
    let config = Config {
        shape,
        ranks,
        chunks: a.chunks,
        collective,
        via: a.reduce.0,
        link: match (a.link_workgroups, &link) {
            (Some(w), _) => Link::Workgroups(w),
            (None, Some(c)) => c.link,
            (None, None) => Link::Unthrottled,
        },
        dtype: a.gemm.dtype.0,
        arbitrate: a.arbitrate,
        step_lead: a.step_lead,
    };
    validate(&config, &mode_list(&a.mode))?;
    Ok(Checked {
        label,
        config,
        link,
    })
}

/// Writes every output a run asked for; says where on stderr (stdout may carry the JSON or CSV).
fn outputs(a: &RunArgs, label: &str, r: &Report) -> Result<()> {
    let write = |path: &str, text: &str, what: &str| -> Result<()> {
        if path == "-" {
            return out(text);
        }
        files::write(path, text)?;
        note!("wrote {path}{what}");
        Ok(())
    };
    if let Some(path) = &a.json {
        write(path, &(serde_json::to_string_pretty(r)? + "\n"), "")?;
    }
    if let Some(path) = &a.csv {
        write(path, &report::csv_text(&Row::measured(label, r), true)?, "")?;
    }
    if let Some(path) = &a.trace {
        let t = serde_json::to_string(&trace::chrome_trace(&r.timelines))?;
        write(
            path,
            &t,
            " (open in https://ui.perfetto.dev or chrome://tracing)",
        )?;
    }
    if let Some(path) = &a.svg {
        write(path, &gantt::gantt_svg(&r.timelines), "")?;
    }
    Ok(())
}

/// Whether any mode's check failed: a wrong number is a failure, never just a row.
fn wrong(r: &Report) -> bool {
    r.results.iter().any(|m| {
        m.trackers_ok == Some(false) || m.max_rel_error.is_some_and(|e| e.is_nan() || e > 1e-4)
    })
}

/// The mode whose run left the outputs: the last one measured (sequential always runs first).
fn last_mode(r: &Report) -> &str {
    r.results
        .iter()
        .rev()
        .find(|m| m.skipped.is_none())
        .map_or("sequential", |m| m.mode.as_str())
}

fn run(gpu: &Gpu, a: &RunArgs, c: Checked) -> Result<()> {
    if let Some(l) = &c.link {
        l.table.check_adapter(&a.link_table, &gpu.describe())?;
        say_link(a, l);
    }
    let kernels = a.gemm.kernels(gpu)?;
    let opts = Options {
        config: c.config,
        modes: mode_list(&a.mode).modes,
        reps: a.reps,
        warmup: a.warmup,
        seed: a.seed,
        verify: if a.no_verify { Some(Verify::Off) } else { None },
    };
    let (sys, inputs) = experiment::prepare(gpu, &kernels, &opts)?;
    let r = experiment::measure(&sys, &inputs, &opts)?;
    let to_stdout = [&a.json, &a.csv, &a.trace, &a.svg]
        .iter()
        .any(|p| p.as_deref() == Some("-"));
    if !to_stdout {
        outln!("{}\n{}", c.label, report::text(&r))?;
    }
    outputs(a, &c.label, &r)?;
    if let Some(dir) = &a.dump {
        report::dump(dir, &sys, &inputs, last_mode(&r))?;
        note!("wrote {dir}/rank*_{{a,b,out}}.npy and {dir}/meta.json");
    }
    anyhow::ensure!(
        !wrong(&r),
        "a mode's result or tracker check failed (see the table)"
    );
    Ok(())
}

/// Every point of a sweep, checked before any GPU work.
fn sweep_points(a: &SweepArgs) -> Result<Vec<(String, Config)>> {
    let workloads: Vec<(Shape, Option<usize>, Collective, String)> = if let Some(s) = a.shape {
        vec![(
            s,
            None,
            a.collective.map_or(Collective::ReduceScatter, |c| c.0),
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
                let pr = workload::find(p, a.tokens, a.scale).context("preset vanished")?;
                Ok((
                    Shape::new(pr.m, pr.n, pr.k)?,
                    Some(pr.tp),
                    a.collective.map_or(pr.collective, |c| c.0),
                    pr.name,
                ))
            })
            .collect::<Result<_>>()?
    };
    let rank_lists = workloads.len() * a.ranks.len().max(1);
    let count = [
        a.chunks.len(),
        a.link_workgroups.len(),
        a.arbitrate.len(),
        a.step_lead.len(),
    ]
    .iter()
    .try_fold(rank_lists, |n, &l| n.checked_mul(l))
    .unwrap_or(usize::MAX);
    if count > MAX_POINTS {
        return Err(t3_wgpu::Error::invalid(
            "sweep grid",
            format!(
                "{count} points ({} workloads x {} rank counts x {} chunk counts x {} link budgets x {} arbitration caps x {} step leads)",
                workloads.len(),
                a.ranks.len().max(1),
                a.chunks.len(),
                a.link_workgroups.len(),
                a.arbitrate.len(),
                a.step_lead.len()
            ),
            format!("at most {MAX_POINTS} points"),
        )
        .into());
    }
    let mut points = Vec::new();
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
                            let config = Config {
                                shape: *shape,
                                ranks: r,
                                chunks: c,
                                collective: *coll,
                                via: a.reduce.0,
                                link: if w == 0 {
                                    Link::Unthrottled
                                } else {
                                    Link::Workgroups(w)
                                },
                                dtype: a.gemm.dtype.0,
                                arbitrate: (arb > 0).then_some(arb),
                                step_lead,
                            };
                            validate(&config, &mode_list(&a.mode)).with_context(|| {
                                format!("sweep point {label} ranks {r} chunks {c}")
                            })?;
                            points.push((label.clone(), config));
                        }
                    }
                }
            }
        }
    }
    Ok(points)
}

fn describe_point(label: &str, config: &Config) -> String {
    format!(
        "{label} ranks {} chunks {} link {}{} step lead {}",
        config.ranks,
        config.chunks,
        config.link.describe(),
        config
            .arbitrate
            .map(|w| format!(" arbitrate {w}"))
            .unwrap_or_default(),
        config.step_lead.describe()
    )
}

fn sweep(gpu: &Gpu, a: &SweepArgs, points: Vec<(String, Config)>) -> Result<()> {
    let kernels = a.gemm.kernels(gpu)?;
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
    let say = |line: &str| match &bar {
        Some(b) => b.println(line),
        None => note!("{line}"),
    };
    say(&format!(
        "sweep: {} points x {} modes (estimate after the first point)",
        points.len(),
        mode_list(&a.mode).modes.len()
    ));
    let to_stdout = a.csv == "-";
    // Rows are written as each point finishes, so an interrupted sweep keeps what it measured.
    let mut file = if to_stdout {
        None
    } else {
        Some(std::fs::File::create(&a.csv).with_context(|| a.csv.clone())?)
    };
    let mut failures = 0;
    let started = Instant::now();
    for (i, (label, config)) in points.iter().enumerate() {
        let msg = describe_point(label, config);
        match &bar {
            Some(b) => b.set_message(msg.clone()),
            None => note!("[{}/{}] {msg}", i + 1, points.len()),
        }
        let opts = Options {
            config: config.clone(),
            modes: mode_list(&a.mode).modes,
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
                    say(&format!(
                        "error: {msg}: a mode's result or tracker check failed (see its row)"
                    ));
                }
                Row::measured(label, &rep)
            }
            Err(e) => {
                failures += 1;
                say(&format!("error: {msg}: {e}"));
                vec![Row::failed(label, &opts.config, &e.to_string())]
            }
        };
        let text = report::csv_text(&rows, i == 0)?;
        match &mut file {
            None => out(&text)?,
            Some(f) => {
                f.write_all(text.as_bytes())
                    .and_then(|()| f.flush())
                    .with_context(|| a.csv.clone())?;
            }
        }
        if i == 0 && points.len() > 1 {
            let each = started.elapsed().as_secs_f64();
            say(&format!(
                "sweep: the first point took {each:.1} s; all {} about {:.0} s",
                points.len(),
                each * points.len() as f64
            ));
        }
        if let Some(b) = &bar {
            b.inc(1);
        }
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    if !to_stdout {
        note!("wrote {} ({} points)", a.csv, points.len());
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
        s += &format!("  storage binding {} MiB, buffer {} MiB, workgroups/dim {}, invocations/wg {}, wg storage {} KiB\n",
            a.max_storage_buffer_binding_size >> 20, a.max_buffer_size >> 20, a.max_compute_workgroups_per_dimension,
            a.max_compute_invocations_per_workgroup, a.max_compute_workgroup_storage_size >> 10);
    }
    out(&s)
}

fn plot(csv: &str, x: PlotX, svg: &str, title: Option<&str>) -> Result<()> {
    files::check_outputs(&[("--svg", svg, false)])?;
    let x = x.column();
    let text = files::read_text(csv, "sweep CSV", files::MAX_CSV_BYTES)?;
    let points =
        t3_wgpu::plot::points_from_csv(&text, x).map_err(|e| anyhow::anyhow!("{csv}: {e}"))?;
    let title = title
        .map(str::to_string)
        .unwrap_or_else(|| format!("{csv}: speedup and overlap efficiency vs {x}"));
    files::write(svg, &t3_wgpu::plot::svg(&points, x, &title))?;
    note!("wrote {svg}");
    Ok(())
}

fn calibrate(gpu: &Gpu, mib: Option<usize>, reps: usize, out_path: &str, json: bool) -> Result<()> {
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
    outln!(
        "demo: {} ({} x {} ranks, scale {scale})",
        pr.name,
        Shape::new(pr.m, pr.n, pr.k)?,
        pr.tp
    )?;
    let a = RunArgs {
        workload: Workload {
            shape: None,
            preset: Some(preset.into()),
            tokens: workload::DEFAULT_TOKENS,
            scale,
        },
        ranks: None,
        collective: None,
        mode: vec!["all".into()],
        chunks: 2,
        gemm: GemmArgs {
            dtype: DtypeArg(Dtype::F32),
            gemm_kernel: KernelArg(None),
        },
        reduce: ReduceArg(ReduceVia::Update),
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
    let checked = check_run(&a)?;
    run(gpu, &a, checked)?;
    let cwd = std::env::current_dir()
        .map(|d| d.display().to_string())
        .unwrap_or_default();
    outln!("\nwrote t3-timeline.svg, t3-trace.json and t3-results.json in {cwd}")
}

/// The error and its causes, each once: a cause whose text its parent already quotes (an OS error
/// inside "could not read x: ...") is not repeated.
fn chain(e: &anyhow::Error) -> String {
    let mut s = String::new();
    for cause in e.chain() {
        let c = cause.to_string();
        if !s.contains(&c) {
            if !s.is_empty() {
                s += ": ";
            }
            s += &c;
        }
    }
    s
}

fn dispatch(cli: &Cli) -> Result<()> {
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
            run(&open_gpu(&cli.gpu)?, a, checked)
        }
        Some(Cmd::Plot { csv, x, svg, title }) => plot(csv, *x, svg, title.as_deref()),
        Some(Cmd::Sweep(a)) => {
            if a.csv != "-" {
                files::check_outputs(&[("--csv", &a.csv, false)])?;
            }
            let points = sweep_points(a)?;
            sweep(&open_gpu(&cli.gpu)?, a, points)
        }
        Some(Cmd::Calibrate {
            mib,
            reps,
            out,
            json,
        }) => {
            files::check_outputs(&[("--out", out, false)])?;
            calibrate(&open_gpu(&cli.gpu)?, *mib, *reps, out, *json)
        }
        None => demo(&open_gpu(&cli.gpu)?),
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match dispatch(&cli) {
        Ok(()) => ExitCode::SUCCESS,
        // The reader of a pipe stopped reading: nothing is wrong, and nothing is left to say.
        Err(e) if e.downcast_ref::<StdoutClosed>().is_some() => ExitCode::SUCCESS,
        // A parameter out of range is a usage error (exit 2, as clap's own); anything else is a
        // runtime failure (exit 1).
        Err(e)
            if matches!(
                e.downcast_ref::<t3_wgpu::Error>(),
                Some(t3_wgpu::Error::Invalid { .. })
            ) =>
        {
            note!(
                "error: {}\n\nFor more information, try '--help'.",
                chain(&e)
            );
            ExitCode::from(2)
        }
        Err(e) => {
            note!("error: {}", chain(&e));
            ExitCode::from(1)
        }
    }
}
