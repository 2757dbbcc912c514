//! The settings that pick the adapter and bound its waits: each from its option (a flag), else from
//! its environment variable, validated alike; an invalid value is a usage error naming the source.

use std::time::Duration;

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

/// Most submissions the host trigger loop may keep queued per device.
pub const MAX_IN_FLIGHT: usize = 16;

/// Submissions host mode keeps queued per device: T3_HOST_IN_FLIGHT (1 to [`MAX_IN_FLIGHT`]), else
/// `default`. A knob for the pipeline's depth against step delay: 1 makes every decision wait for the
/// device (its idle time per GEMM stage is the loop's turnaround), which pays only where stages are
/// long; more than 2 hides slower decisions but delays steps by a stage each.
pub fn host_in_flight(default: usize) -> Result<usize> {
    Ok(env_count("T3_HOST_IN_FLIGHT", MAX_IN_FLIGHT)?.unwrap_or(default))
}

/// How much GEMM work the host trigger loop puts in one submission (its counters come back only when
/// the submission completes, so this is the trigger's grain).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostGrain {
    /// One chunk per rank: a stage of several chunks per rank goes in several submissions, so the
    /// first chunks' steps go while the rest of the stage computes (T3's chunk-granular trigger).
    Chunk,
    /// A whole stage (every chunk its ranks produce for one step of the schedule) per submission:
    /// fewer, fuller submissions; a chunk's steps wait for its whole stage.
    Stage,
}

/// T3_HOST_GRAIN = chunk | stage | auto; unset or auto: chunk where the run spans several devices
/// (`several`), stage on one (an invalid value is an error naming it). On one device a stage's
/// chunks side by side fill the GPU and its steps ride in the same passes, while a chunk per
/// submission multiplies the submissions (at chunk grain host mode falls well behind sequential
/// on one GPU, at stage grain it about matches it: see BENCHMARKS.md); across
/// devices a chunk's host copy can only start once the submission holding its send completes.
pub fn host_grain(several: bool) -> Result<HostGrain> {
    match env("T3_HOST_GRAIN")?.as_deref().map(str::trim) {
        None | Some("auto") if several => Ok(HostGrain::Chunk),
        None | Some("auto") => Ok(HostGrain::Stage),
        Some("chunk") => Ok(HostGrain::Chunk),
        Some("stage") => Ok(HostGrain::Stage),
        Some(v) => Err(Error::invalid(
            "T3_HOST_GRAIN",
            format!("'{v}'"),
            "chunk, stage or auto",
        )),
    }
}

/// How the host trigger loop waits for its devices.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostWait {
    /// Non-blocking polls back to back (one host core busy): sees a completion within microseconds.
    Spin,
    /// Blocked in the driver on one device (polls 20 µs apart on several): on the H200 the blocked
    /// wait returns up to hundreds of µs after the GPU finishes, and every such delay is a step
    /// triggered that much later.
    Block,
}

/// T3_HOST_WAIT (`spin` or `block`), else spin on GPUs and block on CPU adapters, whose cores the
/// spinning thread would take from the device itself.
pub fn host_wait(cpu_adapter: bool) -> Result<HostWait> {
    match env("T3_HOST_WAIT")?.as_deref().map(str::trim) {
        None => Ok(if cpu_adapter {
            HostWait::Block
        } else {
            HostWait::Spin
        }),
        Some("spin") => Ok(HostWait::Spin),
        Some("block") => Ok(HostWait::Block),
        Some(v) => Err(Error::invalid(
            "T3_HOST_WAIT",
            format!("'{v}'"),
            "spin or block",
        )),
    }
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

/// Threads each link's copies run on (its copy lane): T3_COPY_THREADS (1 to the pool's maximum), else 8
/// or the host's cores if fewer (one thread copies at about a third of the rate that 4 or more
/// reach); unset, with `links` lanes copying at once, the host's cores are shared out among them
/// (at least one each), so many links do not start threads by the hundred.
pub fn copy_threads(links: usize) -> Result<usize> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let share = (cores / links.max(1)).max(1);
    Ok(env_count("T3_COPY_THREADS", crate::hostlink::MAX_COPY_THREADS)?.unwrap_or(8.min(share)))
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
