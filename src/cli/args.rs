//! The command line as clap reads it: the commands, their flags and what each accepts.

use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};

use t3_wgpu::devices::DeviceSpec;
use t3_wgpu::gemm::FusedPut;
use t3_wgpu::gpu::Gpu;
use t3_wgpu::link;
use t3_wgpu::modes::{Kernels, ModeKind, StepLead};
use t3_wgpu::shapes::Shape;
use t3_wgpu::workload;

use super::values::*;

#[derive(Parser)]
#[command(
    name = "t3",
    version,
    about = "T3 track & trigger: overlap GEMMs with their collectives on any GPU through wgpu.\nWith no arguments: the demo (T-NLG output projection, 4 ranks, all modes)."
)]
pub struct Cli {
    #[command(flatten)]
    pub gpu: GpuArgs,
    #[command(subcommand)]
    pub cmd: Option<Cmd>,
}

#[derive(Args, Clone)]
pub struct GpuArgs {
    /// Backends to consider (vulkan, metal, dx12, gl; comma list). Default: WGPU_BACKEND, else all but gl.
    #[arg(long, global = true, value_parser = backends)]
    pub backend: Option<String>,
    /// Substring of the adapter name. Default: WGPU_ADAPTER_NAME.
    #[arg(long, global = true)]
    pub adapter: Option<String>,
    /// Bound on every GPU wait, seconds in (0, 1e9] (default: T3_TIMEOUT_S, else 120 plus a share of the work);
    /// past it the command says so and exits 1 without waiting for the GPU's queued work.
    #[arg(long, global = true, value_parser = timeout_secs)]
    pub timeout: Option<Duration>,
}

#[derive(Subcommand)]
pub enum Cmd {
    /// List every adapter with backend, type, driver, features and limits.
    Info {
        /// Print the adapters as JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Run one experiment.
    Run(RunArgs),
    /// Run a grid over ranks, chunks, link budgets and presets; one CSV row per point and mode.
    Sweep(SweepArgs),
    /// Print the workload table.
    Presets {
        /// Tokens per step (the GEMMs' M) the presets are computed for.
        #[arg(long, default_value_t = workload::DEFAULT_TOKENS, value_parser = tokens)]
        tokens: usize,
        /// Shrink every preset dimension by this factor, in (0, 1].
        #[arg(long, default_value_t = 1.0, value_parser = scale)]
        scale: f64,
        /// Print the table as JSON instead of text.
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
        /// Where to write the SVG (never over the CSV it reads).
        #[arg(long)]
        svg: String,
        /// The plot's title [default: the CSV's file name].
        #[arg(long)]
        title: Option<String>,
    },
    /// Measure the GB/s a step reaches at each workgroup budget and save the link table; with
    /// --devices, the link between devices instead (GB/s per direction by chunk size and
    /// copy threads).
    Calibrate {
        /// Bytes per measured copy, MiB (default 256, or 16 on a CPU adapter; at most 4096); with
        /// --devices the largest chunk (chunks from 1 MiB up by factors of 4).
        #[arg(long, value_parser = mib)]
        mib: Option<usize>,
        /// Timed repetitions per measurement (medians reported), after one untimed one.
        #[arg(long, default_value_t = 5, value_parser = reps)]
        reps: usize,
        /// Measure the link between these devices: all (every discrete adapter), a
        /// count N (N devices on the chosen adapter) or adapter indices as `t3 info` numbers them
        /// (`0,1`; one alone: `1,`).
        #[arg(long, value_parser = devices)]
        devices: Option<DeviceSpec>,
        /// With --devices: the path asked of every link (zero-copy, mapped or staged; falls back as
        /// in `run`).
        #[arg(long, default_value = "zero-copy", value_parser = link_path)]
        link_path: t3_wgpu::hostlink::Path,
        /// Where to save the table [default: t3-link.json, or t3-hostlink.json with --devices].
        #[arg(long)]
        out: Option<String>,
        /// Print the table as JSON instead of text (it is saved to --out either way).
        #[arg(long)]
        json: bool,
    },
}

#[derive(Args, Clone)]
pub struct Workload {
    /// GEMM shape per rank, MxNxK (all-gather: M is the whole output, split over the ranks).
    #[arg(long, value_parser = parse_shape, conflicts_with = "preset")]
    pub shape: Option<Shape>,
    /// A workload preset (see `t3 presets`), e.g. tnlg-fc2-tp8.
    #[arg(long, value_parser = parse_preset)]
    pub preset: Option<String>,
    /// Tokens per step for presets.
    #[arg(long, default_value_t = workload::DEFAULT_TOKENS, value_parser = tokens)]
    pub tokens: usize,
    /// Shrink every preset dimension by this factor, in (0, 1].
    #[arg(long, default_value_t = 1.0, value_parser = scale)]
    pub scale: f64,
}

/// The GEMMs' operand type and kernel, shared by `run` and `sweep`.
#[derive(Args, Clone, Copy)]
pub struct GemmArgs {
    /// Element type of the GEMM operands: f32, f16 (tensor cores through cooperative matrices
    /// where the adapter has them, else a SHADER_F16 SIMT kernel) or bf16 (SIMT on any adapter:
    /// wgpu 30 has no bf16 cooperative matrices). Accumulation, outputs and steps are f32 either way.
    #[arg(long, default_value = "f32", ignore_case = true)]
    pub dtype: DtypeArg,
    /// GEMM kernel: auto (the adapter's best for the dtype), simt, or coop (cooperative matrices, f16).
    #[arg(long, default_value = "auto", ignore_case = true)]
    pub gemm_kernel: KernelArg,
}

impl GemmArgs {
    /// Its kernels on `gpu`, fused mode's put chosen by `put`.
    pub fn kernels(self, gpu: &Gpu, put: FusedPut) -> t3_wgpu::Result<Kernels> {
        Kernels::with_put(gpu, self.dtype.0, self.gemm_kernel.0, put)
    }
}

/// Where the ranks run.
#[derive(Args, Clone, Default)]
pub struct DevicesArg {
    /// Put the ranks on several devices, in contiguous blocks; steps between devices go through host
    /// memory (see --link-path): all (every discrete adapter), a count N (N devices on the chosen
    /// adapter) or adapter indices as `t3 info` numbers them (`0,1`; one alone: `1,`). Sequential and
    /// host mode span devices; encoded and fused run on one. Default: every rank on one device.
    #[arg(long, value_parser = devices)]
    pub devices: Option<DeviceSpec>,
    /// How chunks cross between devices: zero-copy (one host allocation both devices bind: the
    /// sender's kernel writes it, the receiver's reads it), mapped (the host copies between buffers
    /// it maps) or staged (the same through staging copies). A path a device cannot take falls back
    /// to the next; the report names each link's.
    #[arg(long, default_value = "zero-copy", value_parser = link_path)]
    pub link_path: t3_wgpu::hostlink::Path,
}

#[derive(Args, Clone)]
pub struct RunArgs {
    #[command(flatten)]
    pub workload: Workload,
    /// Emulated ranks (default: the preset's TP degree, else 4).
    #[arg(long, value_parser = ranks)]
    pub ranks: Option<usize>,
    #[command(flatten)]
    pub devices: DevicesArg,
    /// reduce-scatter, direct-reduce-scatter, all-gather or all-reduce (default: the preset's, else
    /// reduce-scatter).
    #[arg(long, ignore_case = true)]
    pub collective: Option<CollectiveArg>,
    /// Modes, comma-separated, or `all`.
    #[arg(long, value_delimiter = ',', default_value = "all", value_parser = mode_names())]
    pub mode: Vec<String>,
    /// Chunks per rank's share of the output (each output is R shards x this many chunks). Default 1
    /// on one device; 4 where --devices spreads the ranks over several, since between devices a rank's
    /// only chunk leaves nothing to send until its whole GEMM is done.
    #[arg(long, value_parser = chunks)]
    pub chunks: Option<usize>,
    #[command(flatten)]
    pub gemm: GemmArgs,
    /// How a reduce step is realised: update (T3), land (copy to an inbox, then reduce), or forward
    /// (the sender adds its inbox to its partial and lands the sum in the next inbox; ring only).
    #[arg(long, default_value = "update", ignore_case = true)]
    pub reduce: ReduceArg,
    /// Workgroups each step may use (the link budget).
    #[arg(long, value_parser = positive_u32, conflicts_with = "link_gbps")]
    pub link_workgroups: Option<u32>,
    /// Arbitration: while a pass holds GEMM work, its steps share at most this many workgroups
    /// (communication yields to compute, as T3's memory-controller arbitration). Default off.
    #[arg(long, value_parser = positive_u32)]
    pub arbitrate: Option<u32>,
    /// A persistent GEMM grid: while a pass holds steps, its GEMM work runs on at most this many
    /// workgroups in all (at least one per GEMM op), each looping over tiles, so the steps after it
    /// get the SMs it leaves (set it to the GPU's SM count or just below). `--step-lead auto` is
    /// then none; fused mode ignores it. Pays with the cooperative f16 kernel and forward reduces
    /// (README). Default off.
    #[arg(long, value_parser = positive_u32)]
    pub gemm_grid: Option<u32>,
    /// GEMM workgroups of a pass dispatched after the steps sharing it (whole GEMM ops), so the steps
    /// start before the GEMM's last wave: a count (0: steps after all GEMM work), or auto: as many
    /// as the steps have where the pass holds at most one step per rank (1 chunk), else 0.
    #[arg(long, default_value = "auto", value_parser = parse_step_lead)]
    pub step_lead: StepLead,
    /// Emulate a link of this many GB/s, using the table `t3 calibrate` saved.
    #[arg(long, value_parser = link_gbps)]
    pub link_gbps: Option<f64>,
    /// The link table for --link-gbps.
    #[arg(long, default_value = link::DEFAULT_TABLE)]
    pub link_table: String,
    /// Timed repetitions (the report gives medians), at most 10000.
    #[arg(long, default_value_t = 5, value_parser = reps)]
    pub reps: usize,
    /// Least untimed rounds first, at most 10000; the warm-up then goes on until every timed thing
    /// settles (its last 5 runs within 10% of their median), at most --warmup-s seconds.
    #[arg(long, default_value_t = 2, value_parser = warmup)]
    pub warmup: usize,
    /// Bound on the warm-up, seconds (0: --warmup rounds only; at most 3600).
    #[arg(long, default_value_t = 10.0, value_parser = seconds)]
    pub warmup_s: f64,
    /// Seed of the random inputs.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Check every mode against the f64 reference and the trackers (default on).
    #[arg(long, overrides_with = "no_verify")]
    pub verify: bool,
    /// Skip the checks (large sweeps).
    #[arg(long)]
    pub no_verify: bool,
    /// Write the JSON report to FILE, or `-` for standard output (then nothing else goes there).
    #[arg(long)]
    pub json: Option<String>,
    /// One CSV row per mode (the columns of `t3 sweep`'s), or `-` for standard output.
    #[arg(long)]
    pub csv: Option<String>,
    /// Chrome trace JSON (Perfetto, chrome://tracing).
    #[arg(long)]
    pub trace: Option<String>,
    /// SVG Gantt chart.
    #[arg(long)]
    pub svg: Option<String>,
    /// NumPy dumps of every rank's inputs and output, and meta.json.
    #[arg(long)]
    pub dump: Option<String>,
    /// Print every figure and setting: the configuration, each baseline with its spread, bytes
    /// moved, tracker checks and trigger latency (the default prints the results table first, in 100
    /// columns).
    #[arg(long)]
    pub verbose: bool,
}

#[derive(Args, Clone)]
pub struct SweepArgs {
    /// Presets to sweep (comma list); or --shape.
    #[arg(long, value_delimiter = ',', value_parser = parse_preset)]
    pub presets: Vec<String>,
    #[command(flatten)]
    pub devices: DevicesArg,
    /// GEMM shape per rank, MxNxK; or --presets.
    #[arg(long, value_parser = parse_shape, conflicts_with = "presets")]
    pub shape: Option<Shape>,
    /// Tokens per step for presets.
    #[arg(long, default_value_t = workload::DEFAULT_TOKENS, value_parser = tokens)]
    pub tokens: usize,
    /// Shrink every preset dimension by this factor, in (0, 1].
    #[arg(long, default_value_t = 1.0, value_parser = scale)]
    pub scale: f64,
    /// Rank counts to sweep (comma list) [default: each preset's TP degree; 4 with --shape].
    #[arg(long, value_delimiter = ',', value_parser = ranks)]
    pub ranks: Vec<usize>,
    /// Chunks per rank to sweep (comma list).
    #[arg(long, value_delimiter = ',', default_value = "1", value_parser = chunks)]
    pub chunks: Vec<usize>,
    /// Link budgets in workgroups; 0 = unthrottled.
    #[arg(long, value_delimiter = ',', default_value = "0")]
    pub link_workgroups: Vec<u32>,
    /// Arbitration caps to sweep (see `t3 run --arbitrate`); 0 = off.
    #[arg(long, value_delimiter = ',', default_value = "0")]
    pub arbitrate: Vec<u32>,
    /// Persistent GEMM grids to sweep (see `t3 run --gemm-grid`); 0 = off.
    #[arg(long, value_delimiter = ',', default_value = "0")]
    pub gemm_grid: Vec<u32>,
    /// Step leads to sweep (see `t3 run --step-lead`).
    #[arg(long, value_delimiter = ',', default_value = "auto", value_parser = parse_step_lead)]
    pub step_lead: Vec<StepLead>,
    /// The collective (see `t3 run --collective`) [default: each preset's; reduce-scatter with --shape].
    #[arg(long, ignore_case = true)]
    pub collective: Option<CollectiveArg>,
    #[command(flatten)]
    pub gemm: GemmArgs,
    /// How a reduce step is realised (see `t3 run --reduce`).
    #[arg(long, default_value = "update", ignore_case = true)]
    pub reduce: ReduceArg,
    /// Modes, comma-separated, or `all`.
    #[arg(long, value_delimiter = ',', default_value = "all", value_parser = mode_names())]
    pub mode: Vec<String>,
    /// Timed repetitions per point (medians reported).
    #[arg(long, default_value_t = 3, value_parser = reps)]
    pub reps: usize,
    /// Least untimed rounds per point (see `t3 run --warmup`).
    #[arg(long, default_value_t = 1, value_parser = warmup)]
    pub warmup: usize,
    /// Bound on each point's warm-up, seconds (see `t3 run --warmup-s`).
    #[arg(long, default_value_t = 10.0, value_parser = seconds)]
    pub warmup_s: f64,
    /// Seed of the random inputs.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Skip the checks against the f64 reference (large sweeps).
    #[arg(long)]
    pub no_verify: bool,
    /// CSV output (one row per point and mode); `-` for standard output.
    #[arg(long, default_value = "-")]
    pub csv: String,
}

/// The modes to run, and those named explicitly (a mode that cannot apply is an error only when
/// named; under `all` it is listed as skipped).
#[derive(Clone, Debug)]
pub struct ModeList {
    pub modes: Vec<ModeKind>,
    pub named: Vec<ModeKind>,
}

/// The swept column `t3 plot` puts on the x axis.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum PlotX {
    Ranks,
    Chunks,
    M,
    N,
    K,
    Arbitrate,
}

impl PlotX {
    pub fn column(self) -> &'static str {
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
