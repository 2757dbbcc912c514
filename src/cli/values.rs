//! The values flags accept: bounded counts, library enums as clap values, shapes, presets and modes.

use std::time::Duration;

use clap::ValueEnum;

use t3_wgpu::gemm::Engine;
use t3_wgpu::modes::{ModeKind, StepLead};
use t3_wgpu::plan::ReduceVia;
use t3_wgpu::schedule::Collective;
use t3_wgpu::settings;
use t3_wgpu::shapes::{Dtype, Shape, MAX_DIM, MAX_RANKS};
use t3_wgpu::workload;

/// Most timed or warm-up repetitions of a run (each is the whole plan, at least a millisecond).
pub const MAX_REPS: usize = 10_000;

pub fn bounded_usize(s: &str, lo: usize, hi: usize) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(v) if (lo..=hi).contains(&v) => Ok(v),
        Ok(0) => Err("must be at least 1".into()),
        _ => Err(format!("'{s}' is not an integer between {lo} and {hi}")),
    }
}

/// `--fused`: fused mode's knobs and put.
pub fn fused_knobs(
    s: &str,
) -> Result<
    (
        t3_wgpu::config::fused::FusedOptions,
        t3_wgpu::gemm::FusedPut,
    ),
    String,
> {
    super::knobs::parse_fused(s).map_err(|e| e.to_string())
}

/// `--host-loop`: the host trigger loop's choices.
pub fn host_loop(s: &str) -> Result<t3_wgpu::config::host::HostOptions, String> {
    super::knobs::parse_host(s).map_err(|e| e.to_string())
}

/// `--order`: the order the GEMM makes its chunks in.
pub fn order(s: &str) -> Result<t3_wgpu::schedule::Order, String> {
    t3_wgpu::schedule::Order::parse(s).ok_or_else(|| format!("'{s}': stage or chunk"))
}

/// `--kernel-wgsl`: WGSL files replacing the GEMM kernels.
pub fn kernel_wgsl(s: &str) -> Result<t3_wgpu::settings::KernelFiles, String> {
    t3_wgpu::settings::KernelFiles::parse(s).map_err(|e| e.to_string())
}

/// A count where 0 is off (`--gemm-grid`, sweep's lists).
pub fn count_u32(s: &str) -> Result<u32, String> {
    bounded_usize(s, 0, u32::MAX as usize).map(|v| v as u32)
}

/// `--seed`: any 64-bit unsigned integer.
pub fn seed(s: &str) -> Result<u64, String> {
    s.parse::<u64>()
        .map_err(|_| format!("'{s}' is not an integer between 0 and {}", u64::MAX))
}

pub fn positive_u32(s: &str) -> Result<u32, String> {
    bounded_usize(s, 1, u32::MAX as usize).map(|v| v as u32)
}

/// A link budget in workgroups: 1 to a dispatch's limit per dimension (what `run` takes).
pub fn link_workgroups(s: &str) -> Result<u32, String> {
    let max = t3_wgpu::steps::MAX_LINK_WORKGROUPS;
    bounded_usize(s, 1, max as usize).map(|v| v as u32)
}

pub fn reps(s: &str) -> Result<usize, String> {
    bounded_usize(s, 1, MAX_REPS)
}

pub fn warmup(s: &str) -> Result<usize, String> {
    bounded_usize(s, 0, MAX_REPS)
}

/// `t3 tune --warmup`: at least one untimed round, so that no measurement starts cold.
pub fn least_warmup(s: &str) -> Result<usize, String> {
    bounded_usize(s, 1, MAX_REPS)
}

pub fn seconds(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if (0.0..=3600.0).contains(&v) => Ok(v),
        _ => Err(format!("'{s}' is not a number of seconds from 0 to 3600")),
    }
}

/// `t3 tune --budget-s`: 1 s to a day.
pub fn budget(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if (1.0..=86_400.0).contains(&v) => Ok(v),
        _ => Err(format!("'{s}' is not a number of seconds from 1 to 86400")),
    }
}

pub fn chunks(s: &str) -> Result<usize, String> {
    bounded_usize(s, 1, MAX_DIM)
}

pub fn tokens(s: &str) -> Result<usize, String> {
    bounded_usize(s, 1, MAX_DIM)
}

/// `--devices`: all, a count, or adapter indices (src/devices.rs says which).
pub fn devices(s: &str) -> Result<t3_wgpu::devices::DeviceSpec, String> {
    s.parse().map_err(|e: t3_wgpu::Error| e.to_string())
}

pub fn link_path(s: &str) -> Result<t3_wgpu::hostlink::Path, String> {
    s.parse().map_err(|e: t3_wgpu::Error| e.to_string())
}

/// `MxNxK` or `MxNxK:DTYPE` (f32 when not given).
pub fn gemm_of(s: &str) -> Result<(Shape, Dtype), String> {
    t3_wgpu::shapes::gemm_of(s).map_err(|e| e.to_string())
}

pub fn mib(s: &str) -> Result<usize, String> {
    bounded_usize(s, 1, 4096)
}

/// `--stream-mib`: 64 chunks of the largest streamed size (64 MiB) at most.
pub fn stream_mib(s: &str) -> Result<u64, String> {
    bounded_usize(s, 1, 4096).map(|m| m as u64)
}

/// Link rates `--link-gbps` accepts, GB/s: 1 MB/s to 1 PB/s (beyond, no table measures a step).
pub const LINK_GBPS: (f64, f64) = (1e-3, t3_wgpu::link::MAX_GBPS);

pub fn link_gbps(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if (LINK_GBPS.0..=LINK_GBPS.1).contains(&v) => Ok(v),
        _ => Err(format!(
            "'{s}' is not a link rate from {:e} to {:e} GB/s",
            LINK_GBPS.0, LINK_GBPS.1
        )),
    }
}

pub fn timeout_secs(s: &str) -> Result<Duration, String> {
    settings::parse_timeout("--timeout", s).map_err(|e| e.to_string())
}

pub fn sms(s: &str) -> Result<u32, String> {
    settings::parse_count("--sms", s, t3_wgpu::sms::MAX_SMS)
        .map(|n| n as u32)
        .map_err(|e| e.to_string())
}

pub fn backends(s: &str) -> Result<String, String> {
    settings::parse_backends("--backend", s)
        .map(|_| s.to_string())
        .map_err(|e| e.to_string())
}

pub fn scale(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if workload::valid_scale(v) => Ok(v),
        _ => Err(format!("'{s}' is not a scale in (0, 1]")),
    }
}

pub fn ranks(s: &str) -> Result<usize, String> {
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
        pub struct $arg(pub $ty);

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
pub const REDUCES: [ReduceVia; 3] = [ReduceVia::Update, ReduceVia::Land, ReduceVia::Forward];
pub const KERNELS: [Option<Engine>; 3] = [None, Some(Engine::Simt), Some(Engine::Coop)];
const _: () = {
    fn _every_reduce(v: ReduceVia) {
        match v {
            ReduceVia::Update | ReduceVia::Land | ReduceVia::Forward => {}
        }
    }
    fn _every_engine(e: Engine) {
        match e {
            Engine::Simt | Engine::Coop => {}
            // Not a run's kernel until its every mode can use it (issue 43): bench-gemm's only.
            Engine::Coopmat2 => {}
        }
    }
};

value_enum!(DtypeArg, Dtype, Dtype::ALL, Dtype::name);
value_enum!(CollectiveArg, Collective, Collective::ALL, Collective::name);
value_enum!(ReduceArg, ReduceVia, REDUCES, ReduceVia::name);
// `--gemm-kernel`: an engine, or None for the adapter's best.
value_enum!(KernelArg, Option<Engine>, KERNELS, |e| e
    .map_or("auto", Engine::name));

pub fn parse_shape(s: &str) -> Result<Shape, String> {
    Shape::parse(s).map_err(|e| e.to_string())
}

pub fn parse_preset(s: &str) -> Result<String, String> {
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

pub fn parse_step_lead(s: &str) -> Result<StepLead, String> {
    StepLead::parse(s).map_err(|e| e.to_string())
}

/// `--mode`: the modes' names, and `all`.
pub fn mode_names() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(ModeKind::names().into_iter().chain(["all"]))
}

/// The modes to run, and those named explicitly (a mode that cannot apply is an error only when
/// named; under `all` it is listed as skipped).
#[derive(Clone, Debug)]
pub struct ModeList {
    pub modes: Vec<ModeKind>,
    pub named: Vec<ModeKind>,
}

/// The modes to run, in report order, each once (`all` anywhere stands for every mode).
pub fn mode_list(list: &[String]) -> ModeList {
    let all = list.iter().any(|m| m == "all");
    // clap has checked each name against `mode_names`.
    let mut named: Vec<ModeKind> = list
        .iter()
        .filter_map(|m| ModeKind::parse(m).ok())
        .collect();
    named.sort();
    named.dedup();
    let modes = ModeKind::ALL
        .into_iter()
        .filter(|k| all || named.contains(k))
        .collect();
    ModeList { modes, named }
}
