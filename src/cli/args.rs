//! The command line as clap reads it: the commands, their flags and what each accepts.

use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};

use t3_wgpu::config::fused::FusedOptions;
use t3_wgpu::config::host::HostOptions;
use t3_wgpu::devices::DeviceSpec;
use t3_wgpu::gemm::FusedPut;
use t3_wgpu::gpu::Gpu;
use t3_wgpu::link;
use t3_wgpu::modes::{Kernels, StepLead};
use t3_wgpu::settings::KernelFiles;
use t3_wgpu::shapes::{Dtype, Shape};
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
    /// The GPU's multiprocessors where the driver does not report them (sizes persistent grids and
    /// fused mode's spares; 1 to 65536). Default: T3_SMS, else what the driver reports.
    #[arg(long, global = true, value_parser = sms)]
    pub sms: Option<u32>,
    /// WGSL files replacing the GEMM kernels (shader experiments): simt=FILE (shaders/gemm.wgsl),
    /// coop=FILE (shaders/gemm_coop.wgsl), each at most 1 MiB, composed with the same snippets.
    #[arg(long = "kernel-wgsl", global = true, value_name = "simt=FILE,coop=FILE", value_parser = kernel_wgsl)]
    pub kernel_wgsl: Option<KernelFiles>,
}

impl GpuArgs {
    /// The kernel files `--kernel-wgsl` names (none where it is not given).
    pub fn kernels(&self) -> KernelFiles {
        self.kernel_wgsl.clone().unwrap_or_default()
    }
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
    /// Find, per mode, the fastest configuration of each point on this adapter and save it in the
    /// adapter's tune table (which `run` and `sweep` then use).
    Tune(TuneCmdArgs),
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
        /// Bytes per measured copy, MiB (default 256, or 16 on a CPU adapter, within a buffer
        /// binding; at most 4096 and one buffer binding of the device or devices); with --devices
        /// the largest chunk (chunks from 1 MiB up by factors of 4).
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
        /// With --devices: the path asked of every link (auto, which is zero-copy here, zero-copy,
        /// engine, mapped or staged; falls back as in `run`).
        #[arg(long, default_value = "auto", value_parser = link_path)]
        link_path: t3_wgpu::hostlink::Path,
        /// Where to save the table [default: t3-link.json, or t3-hostlink.json with --devices].
        #[arg(long)]
        out: Option<String>,
        /// Print the table as JSON instead of text (it is saved to --out either way).
        #[arg(long)]
        json: bool,
        /// With --devices: the streamed rows' copy threads per link and submissions queued per
        /// device, as `--host-loop copy-threads=N,in-flight=N` (slots per link: twice in-flight, 4
        /// to 8; the other keys are accepted and unused here).
        #[arg(long = "host-loop", value_name = "KEY=VALUE,...", value_parser = host_loop)]
        host_loop: Option<HostOptions>,
        /// With --devices: MiB each direction streams in the streamed rows, in chunks of the
        /// largest size up to 64 MiB, 2 to 64 of them [default: 4096, or four of the largest chunks
        /// on a CPU adapter]. The first chunk's write and the last one's landing run alone, so a
        /// shorter stream reads below the link's steady rate.
        #[arg(long, value_parser = stream_mib, requires = "devices")]
        stream_mib: Option<u64>,
        /// With --devices: workgroups of each send kernel and zero-copy landing kernel, as `run`'s
        /// `--link-workgroups` gives them [default: 512, as `run` gives an unthrottled link's in a
        /// pass without GEMM work].
        #[arg(long, value_parser = link_workgroups, requires = "devices")]
        link_workgroups: Option<u32>,
        /// With --devices: also time each device's sending and landing at once in one pass with a
        /// tracked GEMM of this shape on the device (`MxNxK`, or `MxNxK:f16` / `:bf16` for those
        /// operands), the link's kernels dispatched first and last, against each alone: how much of
        /// the link a GEMM hides, as host mode's passes put them together (the send on 8
        /// workgroups and the landing on 32 there, or the --link-workgroups given).
        #[arg(long, value_name = "MxNxK[:DTYPE]", value_parser = gemm_of, requires = "devices")]
        beside_gemm: Option<(Shape, Dtype)>,
    },
}

/// Fused mode's and the host trigger loop's knobs, shared by `run` and `sweep`.
#[derive(Args, Clone, Default)]
pub struct KnobArgs {
    /// Fused mode's variant and tuning, a comma list of KEY=VALUE (docs/modes.md#fused-mode):
    /// trigger=auto|epilogue|spares, spare-dispatch=auto|gemm|own, spares-at=auto|after|before,
    /// spares=auto|N, grid=off|N, pieces=auto|link|N, put=auto|store|coherent|atomic|cas,
    /// pause=auto|N, polls=default|N, help=always|idle|never, land=auto|on|off,
    /// window=default|BYTES, alias=on|off [default: each its default]
    #[arg(long, value_name = "KEY=VALUE,...", value_parser = fused_knobs)]
    pub fused: Option<(FusedOptions, FusedPut)>,
    /// The host trigger loop's choices, a comma list of KEY=VALUE: in-flight=1..16 (submissions
    /// queued per device, default 2), grain=auto|chunk|stage|N (GEMM work per submission: a chunk
    /// per rank, a whole stage, or up to N chunks per rank; default stage, 2 where the ranks span four GPUs or more), wait=auto|spin|block (default spin on GPUs, block on CPU adapters), copy-threads=N
    /// (threads per link's host copies), handoff=auto|fence|flag (across devices on zero-copy
    /// links: land a chunk once its sender's submission completed, or ahead beside GEMM work,
    /// waiting for the host's flag; default fence), trigger=auto|host|device (what sends a GEMM's chunk
    /// to another device over a zero-copy link: the host, once the GEMM's submission completed, or
    /// the send kernel itself, queued beside that GEMM and waiting for the chunk's counter; default
    /// host) [default: each its default]
    #[arg(long = "host-loop", value_name = "KEY=VALUE,...", value_parser = host_loop)]
    pub host_loop: Option<HostOptions>,
    /// The order each rank's GEMM makes its chunks in, with the ring's reduce-scatter and
    /// all-reduce: stage (shard by shard, T3's stagger: the all-gather and the last reduce-scatter
    /// step wait for the GEMM's last stage) or chunk (the j-th chunk of every shard at stage j, so
    /// chunk j is reduced and gathered while later ones compute; 2 or more chunks per rank)
    /// [default: stage, or the tune table's, or fused mode's own with --chunks (see there); `t3 sweep`
    /// takes a comma list and sweeps each]
    #[arg(long, value_parser = order, value_delimiter = ',')]
    pub order: Vec<t3_wgpu::schedule::Order>,
}

impl KnobArgs {
    /// The one `--order` of a command that runs one configuration (`run`, `tune`): none given is
    /// the default; a list is for `sweep` alone.
    pub fn one_order(&self) -> t3_wgpu::Result<t3_wgpu::schedule::Order> {
        match self.order[..] {
            [] => Ok(Default::default()),
            [o] => Ok(o),
            _ => Err(t3_wgpu::Error::invalid(
                "--order",
                self.order
                    .iter()
                    .map(|o| o.name())
                    .collect::<Vec<_>>()
                    .join(","),
                "one order (t3 sweep takes a list)",
            )),
        }
    }
    pub fn fused(&self) -> FusedOptions {
        self.fused.map(|f| f.0).unwrap_or_default()
    }
    pub fn put(&self) -> FusedPut {
        self.fused.map(|f| f.1).unwrap_or_default()
    }
    pub fn host(&self) -> HostOptions {
        self.host_loop.unwrap_or_default()
    }
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
    #[arg(long, default_value_t = workload::DEFAULT_TOKENS, value_parser = tokens, conflicts_with = "shape")]
    pub tokens: usize,
    /// Shrink every preset dimension by this factor, in (0, 1].
    #[arg(long, default_value_t = 1.0, value_parser = scale, conflicts_with = "shape")]
    pub scale: f64,
}

/// The GEMMs' operand type and kernel, shared by `run` and `sweep`.
#[derive(Args, Clone, Copy)]
pub struct GemmArgs {
    /// Element type of the GEMM operands: f32, f16 (tensor cores through cooperative matrices
    /// where the adapter has them, else a SHADER_F16 SIMT kernel) or bf16 (SIMT on any adapter:
    /// wgpu 30 has no bf16 cooperative matrices). Accumulation is f32 either way; the outputs and
    /// the steps that move them take --out-dtype.
    #[arg(long, default_value = "f32", ignore_case = true)]
    pub dtype: DtypeArg,
    /// Element type of the GEMM outputs and of every step, link and readback that moves them: f32,
    /// or the operands' type (--dtype f16|bf16). 2-byte outputs round once when the GEMM stores them
    /// and once per reduce (added in f32); fused mode moves f32 outputs only and is skipped with
    /// them [default: the operands' type where --devices spans several devices, else f32]
    #[arg(long, ignore_case = true)]
    pub out_dtype: Option<DtypeArg>,
    /// GEMM kernel: auto (the adapter's best for the dtype), simt, or coop (cooperative matrices, f16).
    #[arg(long, default_value = "auto", ignore_case = true)]
    pub gemm_kernel: KernelArg,
}

impl GemmArgs {
    /// Its kernels on `gpu`, fused mode's put chosen by `put`, for outputs as [`Self::out`] gives.
    pub fn kernels(self, gpu: &Gpu, put: FusedPut, across: bool) -> t3_wgpu::Result<Kernels> {
        Kernels::for_outputs(gpu, self.dtype.0, self.out(across), self.gemm_kernel.0, put)
    }

    /// The outputs' element type: --out-dtype, else the operands' type where the ranks span
    /// devices (`across`), else f32. Across devices a layer's outputs cross the host link, so an f16
    /// layer moving f32 would move twice its bytes, and fused mode, the one mode that moves f32
    /// only, cannot span devices anyway; on one device f32 keeps fused mode in the run.
    pub fn out(self, across: bool) -> t3_wgpu::shapes::Dtype {
        match self.out_dtype {
            Some(d) => d.0,
            None if across => self.dtype.0,
            None => t3_wgpu::shapes::Dtype::F32,
        }
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
    /// sender's kernel writes it, the receiver's reads it), engine (the sender's kernel writes the
    /// same host memory, the receiver's copy engine lands it beside its GEMM), auto (engine for the
    /// direct all-reduce, zero-copy for the rest), mapped (the host copies between buffers it maps)
    /// or staged (the same through staging copies). A path a device cannot take falls back to the
    /// next (engine and zero-copy to mapped); the report names each link's, and `run` reads the rate each carried in the
    /// collective alone against t3-hostlink.json in the current folder where that calibrated these
    /// devices on this path.
    #[arg(long, default_value = "auto", value_parser = link_path)]
    pub link_path: t3_wgpu::hostlink::Path,
}

impl DevicesArg {
    /// Whether the ranks may span several devices (`--devices all` counts as several).
    pub fn across(&self) -> bool {
        self.devices
            .as_ref()
            .is_some_and(|d| d.count().is_none_or(|n| n > 1))
    }
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
    /// reduce-scatter, direct-reduce-scatter, all-gather, all-reduce (the ring's: a reduce-scatter,
    /// then an all-gather of the sums) or direct-all-reduce (each rank's partial sent whole to every
    /// peer as its GEMM makes it; at two ranks the ring's bytes) (default: the preset's, else
    /// reduce-scatter). Not given, a tune table may run a two-rank all-reduce as the direct one
    /// for a mode (its row says so); given, it runs as named.
    #[arg(long, ignore_case = true)]
    pub collective: Option<CollectiveArg>,
    /// Modes, comma-separated, or `all`.
    #[arg(long, value_delimiter = ',', default_value = "all", value_parser = mode_names())]
    pub mode: Vec<String>,
    /// Chunks per rank's share of the output (each output is R shards x this many chunks). Default:
    /// the tune table's; else 1 on one device (fused mode on a GPU: 4 in the chunk order where the
    /// cost model says a rank's stage is long enough to repay them), and where --devices spreads the
    /// ranks over several the cost model's (between devices a rank's only chunk leaves nothing to
    /// send until its whole GEMM is done, and each more chunk costs a submission).
    #[arg(long, value_parser = chunks)]
    pub chunks: Option<usize>,
    #[command(flatten)]
    pub knobs: KnobArgs,
    #[command(flatten)]
    pub gemm: GemmArgs,
    /// How a reduce step is realised: update (T3), land (copy to an inbox, then reduce), or forward
    /// (the sender adds its inbox to its partial and lands the sum in the next inbox; ring only).
    /// The all-gather and the direct all-reduce take update only. Default: the tune table's, else
    /// update.
    #[arg(long, ignore_case = true)]
    pub reduce: Option<ReduceArg>,
    /// Workgroups each step may use (the link budget).
    #[arg(long, value_parser = positive_u32, conflicts_with = "link_gbps")]
    pub link_workgroups: Option<u32>,
    /// Arbitration: while a pass holds GEMM work, its steps share at most this many workgroups
    /// (communication yields to compute, as T3's memory-controller arbitration). Default off, except
    /// that where --devices spreads the ranks, beside GEMM work a pass's send kernels share 8 and its
    /// landings 32 (they go first in the pass; alone they take the link's budget);
    /// this sets both.
    #[arg(long, value_parser = positive_u32)]
    pub arbitrate: Option<u32>,
    /// A persistent GEMM grid: while a pass holds steps, its GEMM work runs on at most this many
    /// workgroups in all (at least one per GEMM op), each looping over tiles, so the steps after it
    /// get the SMs it leaves (set it to the GPU's SM count or just below). `--step-lead auto` is
    /// then none; fused mode ignores it. Pays with the cooperative f16 kernel (README). 0: off.
    /// Default: the tune table's, else on one GPU with the cooperative kernel the model's (just
    /// below the SM count, where the driver reports it), else off.
    #[arg(long, value_parser = count_u32)]
    pub gemm_grid: Option<u32>,
    /// GEMM workgroups of a pass dispatched after the steps sharing it (whole GEMM ops), so the steps
    /// start before the GEMM's last wave: a count (0: steps after all GEMM work), or auto: as many
    /// as the steps have where the pass holds at most one step per rank (1 chunk), else 0.
    /// Default: the tune table's, else on one GPU with the SIMT kernel the model's (0), else auto.
    #[arg(long, value_parser = parse_step_lead)]
    pub step_lead: Option<StepLead>,
    #[command(flatten)]
    pub tune: TuneArgs,
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
    #[arg(long, default_value_t = 1, value_parser = seed)]
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
    #[command(flatten)]
    pub points: Points,
    #[command(flatten)]
    pub devices: DevicesArg,
    /// Chunks per rank to sweep (comma list) [default: as `t3 run` picks them: the tune table's, else
    /// the model's (across devices; fused mode's own on a GPU), else 1].
    #[arg(long, value_delimiter = ',', value_parser = chunks)]
    pub chunks: Vec<usize>,
    // The lists below have no clap default: a list not given is empty, so that a value given on
    // purpose (even the default's) wins over the tune table while one left out does not.
    /// Link budgets in workgroups; 0 = unthrottled [default: the tune table's, else 0].
    #[arg(long, value_delimiter = ',', value_parser = count_u32)]
    pub link_workgroups: Vec<u32>,
    /// Arbitration caps to sweep (see `t3 run --arbitrate`); 0 = off [default: 0].
    #[arg(long, value_delimiter = ',', value_parser = count_u32)]
    pub arbitrate: Vec<u32>,
    /// Persistent GEMM grids to sweep (see `t3 run --gemm-grid`); 0 = off [default: the tune
    /// table's, else on one GPU the model's (see `t3 run --gemm-grid`), else 0].
    #[arg(long, value_delimiter = ',', value_parser = count_u32)]
    pub gemm_grid: Vec<u32>,
    /// Step leads to sweep (see `t3 run --step-lead`) [default: the tune table's, else on one GPU
    /// the model's (see `t3 run --step-lead`), else auto].
    #[arg(long, value_delimiter = ',', value_parser = parse_step_lead)]
    pub step_lead: Vec<StepLead>,
    #[command(flatten)]
    pub gemm: GemmArgs,
    #[command(flatten)]
    pub knobs: KnobArgs,
    /// How a reduce step is realised (see `t3 run --reduce`) [default: the tune table's, else update].
    #[arg(long, ignore_case = true)]
    pub reduce: Option<ReduceArg>,
    /// Modes, comma-separated, or `all`.
    #[arg(long, value_delimiter = ',', default_value = "all", value_parser = mode_names())]
    pub mode: Vec<String>,
    #[command(flatten)]
    pub tune: TuneArgs,
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
    #[arg(long, default_value_t = 1, value_parser = seed)]
    pub seed: u64,
    /// Skip the checks against the f64 reference (large sweeps).
    #[arg(long)]
    pub no_verify: bool,
    /// CSV output (one row per point and mode); `-` for standard output.
    #[arg(long, default_value = "-")]
    pub csv: String,
}

/// A swept list, or its one default value where it was not given.
pub fn or_default<T: Clone>(list: &[T], default: T) -> Vec<T> {
    if list.is_empty() {
        vec![default]
    } else {
        list.to_vec()
    }
}

/// The workloads of `sweep` and `tune`: presets or a shape, at one or more rank counts.
#[derive(Args, Clone)]
pub struct Points {
    /// Presets (comma list; `--preset`, as `run` names one, too); or --shape.
    #[arg(long, visible_alias = "preset", value_delimiter = ',', value_parser = parse_preset)]
    pub presets: Vec<String>,
    /// GEMM shape per rank, MxNxK; or --presets.
    #[arg(long, value_parser = parse_shape, conflicts_with = "presets")]
    pub shape: Option<Shape>,
    /// Tokens per step for presets.
    #[arg(long, default_value_t = workload::DEFAULT_TOKENS, value_parser = tokens, conflicts_with = "shape")]
    pub tokens: usize,
    /// Shrink every preset dimension by this factor, in (0, 1].
    #[arg(long, default_value_t = 1.0, value_parser = scale, conflicts_with = "shape")]
    pub scale: f64,
    /// Rank counts (comma list) [default: each preset's TP degree; 4 with --shape].
    #[arg(long, value_delimiter = ',', value_parser = ranks)]
    pub ranks: Vec<usize>,
    /// The collective (see `t3 run --collective`) [default: each preset's; reduce-scatter with
    /// --shape]. Not given, a two-rank all-reduce may run as the direct one (`tune` tries it, and
    /// `sweep` takes a tune table's choice); given, it runs as named.
    #[arg(long, ignore_case = true)]
    pub collective: Option<CollectiveArg>,
}

/// Which tune table `run` and `sweep` take their configurations from.
#[derive(Args, Clone, Default)]
pub struct TuneArgs {
    /// The tune table: auto (`t3 tune`'s table for this adapter in the working directory, if there is
    /// one; a bad, stale or foreign one is said and ignored), off, or a FILE (a bad, stale or
    /// foreign one is an error). Flags given explicitly win over the table's choices; a choice that
    /// cannot run here with them is said, and its mode runs at its untuned configuration.
    #[arg(long, default_value = "auto")]
    pub tune: String,
    /// Run a mode the table says loses to sequential at this point, or leads it by less than 0.5%
    /// (where the point leaves no room to overlap, by no more than its noise), as it is, instead of
    /// falling back to sequential (the report says which, and by how much).
    #[arg(long)]
    pub no_fallback: bool,
}

/// `t3 tune`'s flags.
#[derive(Args, Clone)]
pub struct TuneCmdArgs {
    #[command(flatten)]
    pub points: Points,
    #[command(flatten)]
    pub devices: DevicesArg,
    #[command(flatten)]
    pub gemm: GemmArgs,
    #[command(flatten)]
    pub knobs: KnobArgs,
    /// Modes to tune, comma-separated, or `all` (sequential is the baseline: always measured, and
    /// not a mode to tune alone).
    #[arg(long, value_delimiter = ',', default_value = "all", value_parser = mode_names())]
    pub mode: Vec<String>,
    /// Bound on the tuning's search, seconds, shared out over the points (each half an even share,
    /// half in proportion to its sequential run's time as the model puts it) and their modes: a
    /// measurement starts only where one as long as the mode's longest so far still ends within its
    /// share, but every point is measured once as given (every mode in one run) and each mode's
    /// fastest once more beside sequential (at three times the reps within its share, else at the
    /// reps, unless every figure of the mode read slower than the sequential timed beside it, or
    /// under 0.5% ahead: it falls back whatever one more says) whatever is left, so those runs may
    /// carry the whole past the bound. A point whose first run leaves no room to overlap is not
    /// searched (see --search-no-room). Knobs given as flags (--host-loop, --fused) are not
    /// searched. The default is meant to leave a preset's whole `t3 tune` (the devices opened, its
    /// inputs made, the table written) under a minute on the largest presets, on a warm driver
    /// cache.
    #[arg(long, default_value_t = 50.0, value_parser = budget)]
    pub budget_s: f64,
    /// Measure every point of the space's grid instead of searching it (the comparison the search
    /// is judged by; still bounded by --budget-s). The space is the search's: every knob's values,
    /// the chunk counts the model ranks best (three), and a mode's own count as given with the next
    /// finer one (fused mode's on one GPU).
    #[arg(long)]
    pub exhaustive: bool,
    /// Search a point even where its first run leaves no room to overlap. By default each mode there
    /// stands as given (T_seq - max(T_gemm, T_comm) within the noise its reps measured, as the run's
    /// report checks) and runs only where it leads sequential by more than that noise (at least 1%
    /// of T_seq). Where the noise hides what overlap could gain, a search's choice is the figure
    /// whose noise ran low.
    #[arg(long)]
    pub search_no_room: bool,
    /// Timed repetitions per measurement, interleaved with as many of sequential (each median is
    /// read on warm clocks: scaled by its layout's fastest sequential over the one beside it);
    /// each mode's three fastest and its configuration as given are measured again at the end
    /// with three times as many, and the fastest of those by the slower of its two figures is the
    /// choice where it beats the one as given clearly.
    #[arg(long, default_value_t = 3, value_parser = reps)]
    pub reps: usize,
    /// Least untimed rounds of each measurement (at least 1); where the GPU stayed busy since the
    /// last, a measurement warms up for these alone.
    #[arg(long, default_value_t = 1, value_parser = least_warmup)]
    pub warmup: usize,
    /// Bound on a settling warm-up, seconds: each point's first measurement (every mode as given)
    /// and a configuration whose first figure read on cold clocks, measured again (each at least a
    /// second on a GPU), a measurement after its system was built anew (the GPU idled meanwhile)
    /// and every confirmation warm up until their figures settle.
    #[arg(long, default_value_t = 1.0, value_parser = seconds)]
    pub warmup_s: f64,
    /// Seed of the random inputs.
    #[arg(long, default_value_t = 1, value_parser = seed)]
    pub seed: u64,
    /// Where to save the table [default: t3-tune-ADAPTER-BACKEND.json, where `--tune auto` finds it];
    /// points already in it are kept, a point tuned again replaced.
    #[arg(long)]
    pub out: Option<String>,
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
