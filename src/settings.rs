//! The settings that pick the adapter and bound its waits: each from its option (a flag), else from
//! its environment variable, validated alike; an invalid value is a usage error naming the source.
//! The variables are read here, by [`with_environment`] and [`check_environment`] (the edge of the
//! binary, the tests and the benchmarks), and in gemm.rs for the kernel files `T3_SIMT_WGSL` and
//! `T3_COOP_WGSL`; the rest of the library takes [`GpuOptions`] as given.

use std::time::Duration;

pub use crate::config::host::{HostGrain, HostOptions, HostWait};
use crate::error::{Error, Result};
use crate::gpu::GpuOptions;

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
    let Some(v) = env(name)? else {
        return Ok(None);
    };
    match v.trim().parse::<usize>() {
        Ok(n) if (1..=max).contains(&n) => Ok(Some(n)),
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
pub const READ: [&str; 5] = [
    "T3_TIMEOUT_S",
    "T3_SMS",
    "T3_SIMT_WGSL",
    "T3_COOP_WGSL",
    "WGPU_POWER_PREF",
];

/// Variables earlier versions read, and the flag that took each one's place.
const RETIRED: [(&str, &str); 4] = [
    ("T3_FUSED_", "--fused KEY=VALUE"),
    ("T3_ALIAS", "--fused alias=on|off"),
    ("T3_HOST_", "--host-loop KEY=VALUE"),
    ("T3_COPY_THREADS", "--host-loop copy-threads=N"),
];

/// `T3_*` variables of the test suite, benchmarks and tools, which the binary ignores silently.
const OTHERS: [&str; 7] = [
    "T3_BENCH_",
    "T3_BLESS",
    "T3_SOAK",
    "T3_PIPELINES",
    "T3_REQUIRE_GPU",
    "T3_SPV_DIR",
    "T3_COOP_VARIANT",
];

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
    for path in ["T3_SIMT_WGSL", "T3_COOP_WGSL"] {
        env(path)?;
    }
    let mut warnings = Vec::new();
    for (k, _) in std::env::vars_os() {
        let Some(k) = k.to_str() else { continue };
        if !k.starts_with("T3_") || READ.contains(&k) || OTHERS.iter().any(|o| k.starts_with(o)) {
            continue;
        }
        warnings.push(match RETIRED.iter().find(|r| k.starts_with(r.0)) {
            Some((_, flag)) => {
                format!("warning: {k} is set, but t3 no longer reads it: use {flag}")
            }
            None => format!(
                "warning: {k} is set, but t3 reads no such variable (known: {})",
                READ.join(", ")
            ),
        });
    }
    Ok(Environment { warnings })
}

/// The kernel files `T3_SIMT_WGSL` and `T3_COOP_WGSL` name: inputs of every command that builds
/// GEMM kernels.
pub fn kernel_files() -> Result<Vec<(&'static str, String)>> {
    let mut out = Vec::new();
    for name in ["T3_SIMT_WGSL", "T3_COOP_WGSL"] {
        if let Some(p) = env(name)?.filter(|p| !p.is_empty()) {
            out.push((name, p));
        }
    }
    Ok(out)
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
}
