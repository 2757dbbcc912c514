//! The settings that pick the adapter and bound its waits: each from its option (a flag), else from
//! its environment variable, validated alike; an invalid value is a usage error naming the source.

use std::time::Duration;

use crate::config::fused::{
    FusedOptions, Help, Pieces, SpareDispatch, Trigger, MAX_KNOB, MIN_WINDOW,
};
pub use crate::config::host::{HostGrain, HostOptions, HostWait};
use crate::error::{Error, Result};
use crate::gemm::FusedPut;
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

/// Most submissions the host trigger loop may keep queued per device.
pub const MAX_IN_FLIGHT: usize = 16;

/// Submissions host mode keeps queued per device: T3_HOST_IN_FLIGHT (1 to [`MAX_IN_FLIGHT`]; None
/// where unset: `HostOptions::in_flight`).
pub fn host_in_flight() -> Result<Option<usize>> {
    env_count("T3_HOST_IN_FLIGHT", MAX_IN_FLIGHT)
}

/// T3_HOST_GRAIN = chunk | stage | auto (None where unset or auto: `HostOptions::grain`); an
/// invalid value is an error naming it.
pub fn host_grain() -> Result<Option<HostGrain>> {
    match env("T3_HOST_GRAIN")?.as_deref().map(str::trim) {
        None | Some("auto") => Ok(None),
        Some("chunk") => Ok(Some(HostGrain::Chunk)),
        Some("stage") => Ok(Some(HostGrain::Stage)),
        Some(v) => Err(Error::invalid(
            "T3_HOST_GRAIN",
            format!("'{v}'"),
            "chunk, stage or auto",
        )),
    }
}

/// T3_HOST_WAIT, `spin` or `block` (None where unset: `HostOptions::wait`).
pub fn host_wait() -> Result<Option<HostWait>> {
    match env("T3_HOST_WAIT")?.as_deref().map(str::trim) {
        None => Ok(None),
        Some("spin") => Ok(Some(HostWait::Spin)),
        Some("block") => Ok(Some(HostWait::Block)),
        Some(v) => Err(Error::invalid(
            "T3_HOST_WAIT",
            format!("'{v}'"),
            "spin or block",
        )),
    }
}

/// The host trigger loop's knobs from T3_HOST_IN_FLIGHT, T3_HOST_GRAIN, T3_HOST_WAIT and
/// T3_COPY_THREADS.
pub fn host_options() -> Result<HostOptions> {
    Ok(HostOptions {
        in_flight: host_in_flight()?,
        grain: host_grain()?,
        wait: host_wait()?,
        copy_threads: copy_threads()?,
    })
}

/// A count from the environment variable `name`, 1 to `max`; None where it is unset.
pub(crate) fn env_count(name: &'static str, max: usize) -> Result<Option<usize>> {
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

/// Threads each link's copies run on (its copy lane): T3_COPY_THREADS (1 to the pool's maximum; None
/// where unset: `HostOptions::copy_threads`).
pub fn copy_threads() -> Result<Option<usize>> {
    env_count("T3_COPY_THREADS", crate::hostlink::MAX_COPY_THREADS)
}

pub fn backends(opts: &GpuOptions) -> Result<wgpu::Backends> {
    match &opts.backend {
        Some(list) => parse_backends("--backend", list),
        // GL is left out unless asked for: EGL probing prints noise on headless machines, and every
        // GPU that GL reaches is also reached by Vulkan, Metal or DX12.
        None => match env("WGPU_BACKEND")? {
            Some(list) => parse_backends("WGPU_BACKEND", &list),
            None => Ok(wgpu::Backends::PRIMARY),
        },
    }
}

/// The adapter-name filter: the option, else WGPU_ADAPTER_NAME (empty: no filter).
pub fn name_filter(opts: &GpuOptions) -> Result<Option<String>> {
    Ok(match &opts.adapter {
        Some(n) => Some(n.clone()),
        None => env("WGPU_ADAPTER_NAME")?,
    }
    .filter(|s| !s.is_empty()))
}

/// The bound on every wait: the option, else T3_TIMEOUT_S (None: derived from the work).
pub fn timeout(opts: &GpuOptions) -> Result<Option<Duration>> {
    match opts.timeout {
        Some(t) => Ok(Some(t)),
        None => env_timeout(),
    }
}

/// The adapter type preferred: the option, else WGPU_POWER_PREF, else high performance.
pub fn power(opts: &GpuOptions) -> Result<wgpu::PowerPreference> {
    match (&opts.power, env("WGPU_POWER_PREF")?) {
        (Some(p), _) => parse_power("power preference", p),
        (None, Some(p)) => parse_power("WGPU_POWER_PREF", &p),
        (None, None) => Ok(wgpu::PowerPreference::HighPerformance),
    }
}

/// The `T3_*` variables the `t3` binary reads (each checked by [`check_environment`]).
pub const READ: [&str; 22] = [
    "T3_TIMEOUT_S",
    "T3_HOST_IN_FLIGHT",
    "T3_HOST_GRAIN",
    "T3_HOST_WAIT",
    "T3_COPY_THREADS",
    "T3_SMS",
    "T3_ALIAS",
    "T3_SIMT_WGSL",
    "T3_COOP_WGSL",
    "T3_FUSED_PUT",
    "T3_FUSED_PIECES",
    "T3_FUSED_SPARES",
    "T3_FUSED_POLLS",
    "T3_FUSED_WINDOW",
    "T3_FUSED_GRID",
    "T3_FUSED_PAUSE",
    "T3_FUSED_SPARE_DISPATCH",
    "T3_FUSED_HELP",
    "T3_FUSED_TRIGGER",
    "T3_FUSED_SPARES_AT",
    "T3_FUSED_LAND",
    "WGPU_POWER_PREF",
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

/// A fused knob `name`: None where unset or empty, `Some(Err(word))` for one of `words`, else
/// `Some(Ok(n))` for a whole number in `lo..=hi` (anything else is refused naming it).
fn word_or_count(
    name: &'static str,
    words: &[&'static str],
    (lo, hi): (u32, u32),
) -> Result<Option<std::result::Result<u32, &'static str>>> {
    let Some(v) = env(name)? else { return Ok(None) };
    if v.is_empty() {
        return Ok(None);
    }
    if let Some(w) = words.iter().find(|w| **w == v) {
        return Ok(Some(Err(*w)));
    }
    match v.parse::<u32>() {
        Ok(n) if (lo..=hi).contains(&n) => Ok(Some(Ok(n))),
        _ => Err(Error::invalid(
            name,
            format!("'{v}'"),
            format!("{} or a whole number from {lo} to {hi}", words.join(", ")),
        )),
    }
}

/// A fused count `name`: None where unset, empty or `word` (its default), else the number.
fn count(name: &'static str, word: &'static str, range: (u32, u32)) -> Result<Option<u32>> {
    Ok(word_or_count(name, &[word], range)?.and_then(|c| c.ok()))
}

/// One of `words` (or empty: the default) for the knob `name`; returns the value.
fn one_of(name: &'static str, words: &[&str]) -> Result<Option<String>> {
    match env(name)? {
        Some(v) if !v.is_empty() && !words.contains(&v.as_str()) => Err(Error::invalid(
            name,
            format!("'{v}'"),
            format!("one of {}", words.join(", ")),
        )),
        v => Ok(v.filter(|v| !v.is_empty())),
    }
}

/// Fused mode's knobs from `T3_FUSED_*` and `T3_ALIAS` (docs/environment.md), each unset (or
/// empty, or its default's word) left to its default; an invalid value, or a combination that the
/// environment alone rules out (the others depend on the adapter), is a usage error naming it.
/// Fused mode's put (`T3_FUSED_PUT`, unset or empty: auto) comes with them, checked in the
/// variables' order.
pub fn fused_options() -> Result<(FusedOptions, FusedPut)> {
    let alias = one_of("T3_ALIAS", &["0", "off", "1", "on"])?;
    let alias = !matches!(alias.as_deref(), Some("0" | "off"));
    let put = fused_put()?;
    let m = MAX_KNOB;
    let pieces = match word_or_count("T3_FUSED_PIECES", &["link"], (1, m))? {
        None => Pieces::Auto,
        Some(Err(_)) => Pieces::Link,
        Some(Ok(n)) => Pieces::Count(n),
    };
    let spares = count("T3_FUSED_SPARES", "auto", (0, m))?;
    let polls = count("T3_FUSED_POLLS", "default", (0, m))?;
    let window = count("T3_FUSED_WINDOW", "default", (MIN_WINDOW, u32::MAX))?;
    // `off` is a grid of none (0), which the paying defaults do not override.
    let grid = word_or_count("T3_FUSED_GRID", &["off"], (0, m))?.map(|g| g.unwrap_or(0));
    let pause = count("T3_FUSED_PAUSE", "auto", (0, m))?;
    let dispatch = one_of("T3_FUSED_SPARE_DISPATCH", &["auto", "gemm", "own"])?;
    let help = one_of("T3_FUSED_HELP", &["always", "idle", "never"])?;
    let trigger = one_of("T3_FUSED_TRIGGER", &["auto", "epilogue", "spares"])?;
    let at = one_of("T3_FUSED_SPARES_AT", &["auto", "after", "before"])?;
    let land = one_of("T3_FUSED_LAND", &["auto", "on", "off"])?;
    let options = FusedOptions {
        pieces,
        spares,
        polls,
        window,
        grid,
        pause,
        spare_dispatch: match dispatch.as_deref() {
            Some("gemm") => Some(SpareDispatch::Gemm),
            Some("own") => Some(SpareDispatch::Own),
            _ => None,
        },
        help: match help.as_deref() {
            Some("idle") => Help::Idle,
            Some("never") => Help::Never,
            _ => Help::Always,
        },
        trigger: match trigger.as_deref() {
            Some("epilogue") => Some(Trigger::Epilogue),
            Some("spares") => Some(Trigger::Spares),
            _ => None,
        },
        spares_first: match at.as_deref() {
            Some("after") => Some(false),
            Some("before") => Some(true),
            _ => None,
        },
        land: match land.as_deref() {
            Some("on") => Some(true),
            Some("off") => Some(false),
            _ => None,
        },
        alias,
        // Set by the command, where it writes a timeline.
        timeline: false,
    };
    // The combinations that the environment alone rules out (the others depend on the adapter).
    let own = options.spare_dispatch == Some(SpareDispatch::Own);
    let gemm = options.spare_dispatch == Some(SpareDispatch::Gemm);
    let refuse = |name: &'static str, v: &Option<String>, bound: &str| {
        Err(Error::invalid(
            name,
            format!("'{}'", v.as_deref().unwrap_or_default()),
            bound,
        ))
    };
    if options.help == Help::Never && (!own || alias) {
        return refuse(
            "T3_FUSED_HELP",
            &help,
            "always, idle, or never with T3_FUSED_SPARE_DISPATCH=own and T3_ALIAS=0 (the spares must run after the GEMM)",
        );
    }
    if options.trigger == Some(Trigger::Spares) && gemm {
        return refuse(
            "T3_FUSED_TRIGGER",
            &trigger,
            "epilogue, or spares with T3_FUSED_SPARE_DISPATCH=own (the watched GEMM has no spares in its dispatch)",
        );
    }
    if options.spares_first == Some(true) && (gemm || !alias) {
        return refuse(
            "T3_FUSED_SPARES_AT",
            &at,
            "after, or before with T3_FUSED_SPARE_DISPATCH=own and the aliased views (not T3_ALIAS=0)",
        );
    }
    if options.land == Some(true) && options.trigger == Some(Trigger::Epilogue) {
        return refuse(
            "T3_FUSED_LAND",
            &land,
            "off, or on where the spares trigger (T3_FUSED_TRIGGER=spares: only they land)",
        );
    }
    Ok((options, put))
}

/// Fused mode's put from `T3_FUSED_PUT` (unset or empty: auto).
fn fused_put() -> Result<FusedPut> {
    Ok(
        match one_of(
            "T3_FUSED_PUT",
            &["auto", "store", "coherent", "atomic", "cas"],
        )?
        .as_deref()
        {
            Some("store") => FusedPut::Store,
            Some("coherent") => FusedPut::Coherent,
            Some("atomic") => FusedPut::Atomic,
            Some("cas") => FusedPut::Cas,
            _ => FusedPut::Auto,
        },
    )
}

/// What the binary's environment sets, read once at its edge ([`check_environment`]) and handed to
/// the commands as values: nothing below the binary reads these variables.
#[derive(Clone, Debug, Default)]
pub struct Environment {
    /// The host trigger loop's knobs (`T3_HOST_*`): each command's `Config::host`.
    pub host: HostOptions,
    /// Fused mode's knobs (`T3_FUSED_*` but the put, `T3_ALIAS`): each command's `Config::fused`.
    pub fused: FusedOptions,
    /// Fused mode's put (`T3_FUSED_PUT`), chosen when the kernels are made.
    pub fused_put: FusedPut,
    /// Warnings of `T3_*` variables that nothing reads (a typo, or a retired knob).
    pub warnings: Vec<String>,
}

/// Every environment variable the binary reads, checked once before any GPU work with the rules of
/// the flag or reader that uses it (`opts`: a flag given wins over its variable, which is then not
/// read), and those the commands take as values parsed. An invalid value, or one that is not UTF-8,
/// is a usage error naming the variable; the warnings name `T3_*` variables that nothing reads.
pub fn check_environment(opts: &GpuOptions) -> Result<Environment> {
    if opts.timeout.is_none() {
        env_timeout()?;
    }
    if opts.backend.is_none() {
        backends(opts)?;
    }
    name_filter(opts)?;
    power(opts)?;
    let host = host_options()?;
    env_count("T3_SMS", crate::sms::MAX_SMS)?;
    for path in ["T3_SIMT_WGSL", "T3_COOP_WGSL"] {
        env(path)?;
    }
    let (fused, fused_put) = fused_options()?;
    let mut warnings = Vec::new();
    for (k, _) in std::env::vars_os() {
        let Some(k) = k.to_str() else { continue };
        if k.starts_with("T3_") && !READ.contains(&k) && !OTHERS.iter().any(|o| k.starts_with(o)) {
            warnings.push(format!(
                "warning: {k} is set, but t3 reads no such variable (known: {})",
                READ.join(", ")
            ));
        }
    }
    Ok(Environment {
        host,
        fused,
        fused_put,
        warnings,
    })
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
