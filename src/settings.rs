//! The settings that pick the adapter and bound its waits: each from its option (a flag), else from
//! its environment variable, validated alike; an invalid value is a usage error naming the source.
//! The variables are read here only, by [`with_environment`] and [`check_environment`] (the edge of
//! the binary, the tests and the benchmarks); the rest of the library takes [`GpuOptions`] as given.

use std::time::Duration;

use crate::error::{Error, Result};

/// How to pick an adapter and bound its waits. Empty fields take their defaults; the binary, the tests
/// and the benchmarks fill them from the environment first (`settings::with_environment`).
#[derive(Clone, Debug, Default)]
pub struct GpuOptions {
    /// Comma list of backends (vulkan, metal, dx12, gl).
    pub backend: Option<String>,
    /// Case-insensitive substring of the adapter name.
    pub adapter: Option<String>,
    /// "high", "low" or "none".
    pub power: Option<String>,
    /// Bound on every wait, exactly (overrides the derived bound); default 120 s plus a share derived
    /// from the work.
    pub timeout: Option<Duration>,
    /// The GPU's multiprocessors where the driver does not report them (1 to `sms::MAX_SMS`; None:
    /// what the driver reports, if anything).
    pub sms: Option<u32>,
    /// Lower the storage-binding and buffer-size limits below the adapter's (tests of the limit paths).
    pub limit_override: Option<u64>,
    /// Lower the workgroups per dispatch dimension below the adapter's (tests of 2-D folding).
    pub dispatch_limit: Option<u32>,
    /// WGSL files replacing the GEMM kernels (`--kernel-wgsl`).
    pub kernels: KernelFiles,
}

/// WGSL files replacing the GEMM kernels, for shader-level experiments (`--kernel-wgsl
/// simt=FILE,coop=FILE` at the binary's edge; tests and benchmarks set them directly): each replaces
/// that engine's kernel source, composed with the same snippets, in every GEMM the device builds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KernelFiles {
    /// Replaces shaders/gemm.wgsl.
    pub simt: Option<String>,
    /// Replaces shaders/gemm_coop.wgsl.
    pub coop: Option<String>,
}

impl KernelFiles {
    /// `--kernel-wgsl`'s value: a comma list of `simt=FILE` and `coop=FILE`, each key at most once,
    /// each path non-empty (whether it can be read is checked with the command's other inputs, its
    /// size where the kernel is built).
    pub fn parse(spec: &str) -> Result<Self> {
        let mut out = KernelFiles::default();
        for item in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (key, path) = item
                .split_once('=')
                .map_or((item, None), |(k, p)| (k.trim(), Some(p.trim())));
            let (what, slot) = match key {
                "simt" => ("--kernel-wgsl simt", &mut out.simt),
                "coop" => ("--kernel-wgsl coop", &mut out.coop),
                _ => {
                    return Err(Error::invalid(
                        "--kernel-wgsl",
                        format!("'{item}'"),
                        "simt=FILE or coop=FILE (a comma list)",
                    ))
                }
            };
            match path {
                Some(p) if !p.is_empty() && slot.is_none() => *slot = Some(p.to_string()),
                Some(p) if !p.is_empty() => {
                    return Err(Error::invalid(what, "given twice", "each kernel once"))
                }
                _ => return Err(Error::invalid(what, format!("'{item}'"), "a file path")),
            }
        }
        Ok(out)
    }

    /// Each file given, with the name errors and the commands' input check give it.
    pub fn named(&self) -> Vec<(&'static str, &str)> {
        [
            ("--kernel-wgsl simt", &self.simt),
            ("--kernel-wgsl coop", &self.coop),
        ]
        .into_iter()
        .filter_map(|(what, f)| f.as_deref().map(|f| (what, f)))
        .collect()
    }
}

/// Backend names `--backend` and WGPU_BACKEND accept, as a comma list (wgpu's spellings too).
pub const BACKEND_NAMES: &str = "vulkan, metal, dx12, gl, webgpu, primary, secondary or all";

/// Parses a comma list of backends; `what` names where it came from (the flag or the variable).
pub fn parse_backends(what: &'static str, list: &str) -> Result<wgpu::Backends> {
    let mut out = wgpu::Backends::empty();
    for b in list.split(',').map(|b| b.trim().to_lowercase()) {
        out |= match b.as_str() {
            "vulkan" | "vk" => wgpu::Backends::VULKAN,
            "metal" | "mtl" => wgpu::Backends::METAL,
            "dx12" | "d3d12" => wgpu::Backends::DX12,
            "gl" | "gles" | "opengl" => wgpu::Backends::GL,
            "webgpu" => wgpu::Backends::BROWSER_WEBGPU,
            "primary" => wgpu::Backends::PRIMARY,
            "secondary" => wgpu::Backends::SECONDARY,
            "all" => wgpu::Backends::all(),
            _ => {
                return Err(Error::invalid(
                    what,
                    format!("'{list}'"),
                    format!("a comma list of {BACKEND_NAMES}"),
                ))
            }
        };
    }
    Ok(out)
}

/// Largest bound on a wait, seconds (about 31 years: beyond it a bound means nothing).
pub const MAX_TIMEOUT_S: f64 = 1e9;

/// Parses a bound on every GPU wait in seconds, as `--timeout` and T3_TIMEOUT_S both give it.
pub fn parse_timeout(what: &'static str, s: &str) -> Result<Duration> {
    match s.trim().parse::<f64>() {
        Ok(v) if v > 0.0 && v <= MAX_TIMEOUT_S => Ok(Duration::from_secs_f64(v)),
        _ => Err(Error::invalid(
            what,
            format!("'{s}'"),
            format!("a number of seconds in (0, {MAX_TIMEOUT_S:e}]"),
        )),
    }
}

pub fn parse_power(what: &'static str, p: &str) -> Result<wgpu::PowerPreference> {
    match p.to_lowercase().as_str() {
        "low" => Ok(wgpu::PowerPreference::LowPower),
        "none" => Ok(wgpu::PowerPreference::None),
        "high" => Ok(wgpu::PowerPreference::HighPerformance),
        _ => Err(Error::invalid(what, format!("'{p}'"), "high, low or none")),
    }
}

/// An environment variable's value: None when unset, an error when it is not text.
fn env(name: &'static str) -> Result<Option<String>> {
    match std::env::var(name) {
        Ok(v) => Ok(Some(v)),
        Err(std::env::VarError::NotPresent) => Ok(None),
        Err(std::env::VarError::NotUnicode(v)) => {
            Err(Error::invalid(name, format!("{v:?}"), "UTF-8 text"))
        }
    }
}

/// The bound T3_TIMEOUT_S sets, validated as `--timeout` is (None when unset).
pub fn env_timeout() -> Result<Option<Duration>> {
    env("T3_TIMEOUT_S")?
        .map(|v| parse_timeout("T3_TIMEOUT_S", &v))
        .transpose()
}

/// A count from the environment variable `name`, 1 to `max`; None where it is unset.
fn env_count(name: &'static str, max: usize) -> Result<Option<usize>> {
    env(name)?.map(|v| parse_count(name, &v, max)).transpose()
}

/// A count from 1 to `max`, as flag or variable `name` gives it.
pub fn parse_count(name: &'static str, v: &str, max: usize) -> Result<usize> {
    match v.trim().parse::<usize>() {
        Ok(n) if (1..=max).contains(&n) => Ok(n),
        _ => Err(Error::invalid(
            name,
            format!("'{v}'"),
            format!("an integer from 1 to {max}"),
        )),
    }
}

pub fn backends(opts: &GpuOptions) -> Result<wgpu::Backends> {
    match &opts.backend {
        Some(list) => parse_backends("--backend", list),
        // GL is left out unless asked for: EGL probing prints noise on headless machines, and every
        // GPU that GL reaches is also reached by Vulkan, Metal or DX12.
        None => Ok(wgpu::Backends::PRIMARY),
    }
}

/// The adapter-name filter (empty: no filter).
pub fn name_filter(opts: &GpuOptions) -> Result<Option<String>> {
    Ok(opts.adapter.clone().filter(|s| !s.is_empty()))
}

/// The adapter type preferred: the option, else high performance.
pub fn power(opts: &GpuOptions) -> Result<wgpu::PowerPreference> {
    match &opts.power {
        Some(p) => parse_power("power preference", p),
        None => Ok(wgpu::PowerPreference::HighPerformance),
    }
}

/// `opts` with each field the flags left empty taken from its variable: WGPU_BACKEND,
/// WGPU_ADAPTER_NAME, WGPU_POWER_PREF, T3_TIMEOUT_S and T3_SMS, each validated as its flag is.
pub fn with_environment(mut opts: GpuOptions) -> Result<GpuOptions> {
    if opts.backend.is_none() {
        opts.backend = env("WGPU_BACKEND")?;
        if let Some(list) = &opts.backend {
            parse_backends("WGPU_BACKEND", list)?;
        }
    }
    if opts.adapter.is_none() {
        opts.adapter = env("WGPU_ADAPTER_NAME")?;
    }
    if opts.power.is_none() {
        opts.power = env("WGPU_POWER_PREF")?;
        if let Some(p) = &opts.power {
            parse_power("WGPU_POWER_PREF", p)?;
        }
    }
    if opts.timeout.is_none() {
        opts.timeout = env_timeout()?;
    }
    if opts.sms.is_none() {
        opts.sms = env_count("T3_SMS", crate::sms::MAX_SMS)?.map(|n| n as u32);
    }
    Ok(opts)
}

/// The `T3_*` variables the `t3` binary reads (each checked by [`check_environment`]).
pub const READ: [&str; 3] = ["T3_TIMEOUT_S", "T3_SMS", "WGPU_POWER_PREF"];

/// Variables earlier versions read (a prefix each), and what took each one's place.
const RETIRED: [(&str, &str); 8] = [
    ("T3_FUSED_", "--fused KEY=VALUE"),
    ("T3_ALIAS", "--fused alias=on|off"),
    ("T3_HOST_", "--host-loop KEY=VALUE"),
    ("T3_COPY_THREADS", "--host-loop copy-threads=N"),
    ("T3_SIMT_WGSL", "--kernel-wgsl simt=FILE"),
    ("T3_COOP_WGSL", "--kernel-wgsl coop=FILE"),
    (
        "T3_BENCH_",
        "the bench's flags (cargo bench --bench NAME -- --help)",
    ),
    (
        "T3_PIPELINES",
        "the bench's flags (cargo bench --bench pipelines -- --help)",
    ),
];

/// `T3_*` variables of the test suite, which the binary ignores silently.
const OTHERS: [&str; 5] = [
    "T3_BLESS",
    "T3_SOAK",
    "T3_REQUIRE_GPU",
    "T3_SPV_DIR",
    "T3_COOP_VARIANT",
];

/// The test suite's variable for what the binary takes as a flag: a warning names the flag.
const TESTS_FLAG: (&str, &str) = ("T3_KERNEL_WGSL", "--kernel-wgsl");

/// What the binary's environment says, read once at its edge ([`check_environment`]).
#[derive(Clone, Debug, Default)]
pub struct Environment {
    /// Warnings of `T3_*` variables that nothing reads (a typo, or a retired knob and its flag).
    pub warnings: Vec<String>,
}

/// Every environment variable the binary reads, checked once before any GPU work with the rules of
/// the flag or reader that uses it (`opts`: a flag given wins over its variable, which is then not
/// read). An invalid value, or one that is not UTF-8,
/// is a usage error naming the variable; the warnings name `T3_*` variables that nothing reads.
pub fn check_environment(opts: &GpuOptions) -> Result<Environment> {
    with_environment(opts.clone())?;
    let mut warnings = Vec::new();
    for (k, _) in std::env::vars_os() {
        let Some(k) = k.to_str() else { continue };
        if !k.starts_with("T3_") || READ.contains(&k) || OTHERS.contains(&k) {
            continue;
        }
        warnings.push(match RETIRED.iter().find(|r| k.starts_with(r.0)) {
            Some((_, flag)) => {
                format!("warning: {k} is set, but t3 no longer reads it: use {flag}")
            }
            None if k == TESTS_FLAG.0 => format!(
                "warning: {k} is set, but only the tests read it: t3 takes {}",
                TESTS_FLAG.1
            ),
            None => format!(
                "warning: {k} is set, but t3 reads no such variable (known: {})",
                READ.join(", ")
            ),
        });
    }
    Ok(Environment { warnings })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_refused_naming_their_source() {
        for bad in ["abc", "0", "-1", "NaN", "inf", "", "1e12"] {
            let e = parse_timeout("T3_TIMEOUT_S", bad).unwrap_err().to_string();
            assert!(
                e.contains("T3_TIMEOUT_S") && e.contains(&format!("'{bad}'")),
                "{e}"
            );
        }
        assert_eq!(
            parse_timeout("--timeout", " 2.5 ").unwrap(),
            Duration::from_millis(2500)
        );
        assert_eq!(
            parse_backends("WGPU_BACKEND", "Vulkan, gl").unwrap(),
            wgpu::Backends::VULKAN | wgpu::Backends::GL
        );
        assert_eq!(
            parse_backends("x", "primary").unwrap(),
            wgpu::Backends::PRIMARY
        );
        let e = parse_backends("WGPU_BACKEND", "vulkan,nosuch")
            .unwrap_err()
            .to_string();
        assert!(e.contains("WGPU_BACKEND") && e.contains("nosuch"), "{e}");
        assert!(parse_backends("x", "").is_err());
        assert!(parse_power("WGPU_POWER_PREF", "LOW").is_ok());
        assert!(parse_power("WGPU_POWER_PREF", "sideways").is_err());
    }

    #[test]
    fn kernel_files_parse_and_bad_ones_are_named() {
        let k = KernelFiles::parse("simt=a.wgsl, coop = b.wgsl").unwrap();
        assert_eq!(
            (k.simt.as_deref(), k.coop.as_deref()),
            (Some("a.wgsl"), Some("b.wgsl"))
        );
        assert_eq!(k.named().len(), 2);
        assert_eq!(KernelFiles::parse("").unwrap(), KernelFiles::default());
        for (bad, needles) in [
            ("simt=", &["--kernel-wgsl simt", "a file path"][..]),
            ("coop", &["--kernel-wgsl coop"]),
            ("cuda=k.cu", &["--kernel-wgsl", "cuda", "simt=FILE"]),
            ("simt=a,simt=b", &["--kernel-wgsl simt", "twice"]),
        ] {
            let e = KernelFiles::parse(bad).unwrap_err().to_string();
            assert!(needles.iter().all(|n| e.contains(n)), "{bad}: {e}");
        }
    }
}
