//! The tune table: per adapter, each tuned point's choice for every mode and the alternatives it was
//! measured against, as a JSON file written atomically; loading it refuses a bad table, one tuned on
//! another adapter, and a stale one (another format or tool version), each with a typed error.

use serde::{Deserialize, Serialize};

use crate::config::{Config, ModeKind};
use crate::error::{Error, Result};

use super::knobs::Knobs;

/// The format's name, in every table's `format`.
pub const FORMAT: &str = "t3-tune";

/// The format's version: a table of another is stale (6: a choice leading sequential by less than
/// [`super::search::LEAST_LEAD`] falls back, 5's ran; 5: each configuration ranked, kept as given
/// and judged by the slowest of its figures, 4's ranked by its confirmation alone; 4: fallbacks
/// decided against sequential with its GEMM in one pass, 3's against a pass per GEMM stage; 3 and
/// later read figures on warm clocks, 2's were raw times, against a sequential timed on other
/// clocks).
pub const VERSION: u32 = 6;

/// The tool version a table is written by: a table of another is stale (its kernels may differ).
pub const TOOL: &str = env!("CARGO_PKG_VERSION");

/// Most bytes a tune table may hold (thousands of points with their alternatives).
pub const MAX_BYTES: u64 = 64 << 20;

/// The point a choice is for: shape, ranks, collective, operand and output types, GEMM kernel and
/// devices (a choice measured for one output type or kernel says nothing of another).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Key {
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub ranks: usize,
    pub collective: String,
    pub dtype: String,
    pub out_dtype: String,
    pub devices: usize,
}

impl Key {
    pub fn of(c: &Config, devices: usize) -> Self {
        Key {
            m: c.shape.m,
            n: c.shape.n,
            k: c.shape.k,
            ranks: c.ranks,
            collective: c.collective.name().into(),
            dtype: c.dtype.name().into(),
            out_dtype: c.out_dtype.name().into(),
            devices,
        }
    }
}

/// One configuration as measured: the mode's median and the sequential median beside it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Measured {
    pub knobs: Knobs,
    pub median_ms: Option<f64>,
    pub sequential_ms: Option<f64>,
    /// Whether the stability checks passed (else the figure is kept, and said so).
    pub consistent: bool,
    /// Why it could not run, if it could not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl Measured {
    /// Sequential's time beside it over its own, where both were measured: a ratio of two figures
    /// timed together, which the GPU's clocks (they drift by tens of percent between measurements
    /// as the GPU idles and wakes) move alike. Not a speedup to rank by: sequential's own time
    /// depends on the knobs (the search reads each figure on warm clocks instead).
    pub fn ratio_beside(&self) -> Option<f64> {
        let (t, s) = (self.median_ms?, self.sequential_ms?);
        Some(s / t).filter(|r| r.is_finite() && *r > 0.0)
    }
}

/// A mode's choice at one point.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Choice {
    pub mode: ModeKind,
    pub knobs: Knobs,
    pub median_ms: f64,
    /// Sequential's time as measured beside the choice's figure (its confirmation's, where it had
    /// one), where it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sequential_ms: Option<f64>,
    /// The point's sequential time over this choice's, read on warm clocks where sequential was
    /// timed beside it (its median scaled by its layout's fastest sequential over the one beside it:
    /// the GPU's clocks drift between measurements), by the slowest of its configuration's figures
    /// (its first and its confirmation's).
    pub speedup: f64,
    /// Whether the mode falls back to sequential here: even its best ran slower, on any of its
    /// figures, or led it by less than [`crate::tune::search::LEAST_LEAD`] (where the point leaves
    /// no room to overlap, by no more than the point's noise).
    pub fallback: bool,
    /// What the model predicted for the choice, ms.
    pub model_ms: Option<f64>,
    /// The configuration as given (the defaults, the chunk count the model's across devices: what a
    /// run without a table gets), as measured here, ms.
    #[serde(default)]
    pub given_ms: Option<f64>,
    /// Every configuration measured, the choice included, the fastest on warm clocks first as read
    /// when the mode's confirmations were drawn from them (a later mode's sequential figures may
    /// reorder them: the choice made again on the final figures reads them anew).
    pub alternatives: Vec<Measured>,
    /// The fastest alternatives and the configuration as given measured again with more reps, the
    /// fastest by the slowest of its configuration's figures on warm clocks first; the choice is
    /// the first, unless the configuration as given stands where the first does not beat it clearly
    /// (empty where, past the budget, every figure of the mode read slower than the sequential
    /// beside it, its fallback certain: the choice is then the fastest alternative, or the one as
    /// given so).
    #[serde(default)]
    pub confirmed: Vec<Measured>,
}

/// One tuned point.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Point {
    pub workload: String,
    pub key: Key,
    /// Sequential's time at this point: its fastest layout's fastest figure (its time on warm
    /// clocks; every speedup is against it), of the point's own collective.
    pub sequential_ms: f64,
    pub modes: Vec<Choice>,
    /// The modes asked for that were not tuned here, and why (they could not run as given, or
    /// nothing they ran held when measured again): `t3 run` runs them as the model and its flags
    /// give them, and its report says what came of it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_run: Vec<NotRun>,
    /// Where the point left no room to overlap, why its modes were not searched (each stands as
    /// given: its figure, or its fallback).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub no_room: Option<String>,
}

/// A mode asked for that could not run at a point, and why.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NotRun {
    pub mode: ModeKind,
    pub why: String,
}

/// The table of one adapter.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Table {
    pub format: String,
    pub version: u32,
    pub tool: String,
    /// The adapter as [`crate::gpu::Gpu::describe`] says it (name, backend, driver).
    pub adapter: String,
    pub backend: String,
    pub driver: String,
    /// When it was last written (UTC, RFC 3339).
    pub date: String,
    pub points: Vec<Point>,
}

impl Table {
    /// An empty table of the adapter `adapter` (backend, driver).
    pub fn new(adapter: &str, backend: &str, driver: &str) -> Self {
        Table {
            format: FORMAT.into(),
            version: VERSION,
            tool: TOOL.into(),
            adapter: adapter.into(),
            backend: backend.into(),
            driver: driver.into(),
            date: utc_now(),
            points: Vec::new(),
        }
    }

    /// The choice of `mode` at `key`, if tuned.
    pub fn choice(&self, key: &Key, mode: ModeKind) -> Option<(&Point, &Choice)> {
        let p = self.points.iter().find(|p| &p.key == key)?;
        p.modes.iter().find(|c| c.mode == mode).map(|c| (p, c))
    }

    /// Adds `point`, replacing one at the same key.
    pub fn insert(&mut self, point: Point) {
        self.points.retain(|p| p.key != point.key);
        self.points.push(point);
        self.date = utc_now();
    }

    /// Writes the table atomically (a reader sees the old table or the new one).
    pub fn save(&self, path: &str) -> Result<()> {
        let s = serde_json::to_string_pretty(self).map_err(|e| Error::Write {
            path: path.into(),
            source: e.into(),
        })?;
        crate::files::write(path, &(s + "\n"))
    }

    /// Whether the file at `path` is a tune table, whatever its version or figures (its `format`
    /// is `t3 tune`'s): `t3 tune --out` replaces a bad or stale table, never another file.
    pub fn is_table(path: &str) -> bool {
        crate::files::read_text(path, "tune table", MAX_BYTES)
            .ok()
            .and_then(|s| serde_json::from_str::<serde_json::Value>(&s).ok())
            .is_some_and(|v| v.get("format").and_then(|f| f.as_str()) == Some(FORMAT))
    }

    /// Reads a table: a regular file of bounded size in this format and version, written by this
    /// tool version, with sane figures. The adapter is checked apart ([`Table::check_adapter`]).
    pub fn load(path: &str) -> Result<Self> {
        let s = crate::files::read_text(path, "tune table", MAX_BYTES)?;
        let v: serde_json::Value = serde_json::from_str(&s).map_err(|e| {
            Error::invalid("tune table", path, format!("a table `t3 tune` wrote ({e})"))
        })?;
        let format = v.get("format").and_then(|f| f.as_str()).unwrap_or("none");
        if format != FORMAT {
            return Err(Error::invalid(
                "tune table",
                format!("{path}, format {format}"),
                format!("format {FORMAT}, as `t3 tune` writes it"),
            ));
        }
        let version = v.get("version").and_then(|f| f.as_u64()).unwrap_or(0);
        let tool = v.get("tool").and_then(|f| f.as_str()).unwrap_or("none");
        if version != VERSION as u64 || tool != TOOL {
            return Err(Error::invalid(
                "tune table",
                format!("{path}, stale: format version {version} by t3 {tool}"),
                format!("format version {VERSION} by t3 {TOOL} (run `t3 tune` again)"),
            ));
        }
        let t: Table = serde_json::from_value(v).map_err(|e| {
            Error::invalid("tune table", path, format!("a table `t3 tune` wrote ({e})"))
        })?;
        // One choice per point and mode: of two, which a run took would be the file's order.
        for (i, p) in t.points.iter().enumerate() {
            let twice = |what: String| {
                Error::invalid(
                    "tune table",
                    format!("{path}, point {}{what}", p.workload),
                    "one entry per point and per mode in it, as `t3 tune` writes it",
                )
            };
            if t.points[..i].iter().any(|q| q.key == p.key) {
                return Err(twice(" twice".into()));
            }
            for (j, c) in p.modes.iter().enumerate() {
                if p.modes[..j].iter().any(|d| d.mode == c.mode) {
                    return Err(twice(format!(", {} twice", c.mode)));
                }
            }
        }
        for p in &t.points {
            let bad = |what: String| {
                Error::invalid(
                    "tune table",
                    format!("{path}, point {}: {what}", p.workload),
                    "positive finite times and at least 1 chunk (run `t3 tune` again)",
                )
            };
            let positive = |t: f64| t.is_finite() && t > 0.0;
            if !positive(p.sequential_ms) {
                return Err(bad(format!("sequential {} ms", p.sequential_ms)));
            }
            for c in &p.modes {
                let wrong = [
                    (!positive(c.median_ms)).then(|| format!("time {} ms", c.median_ms)),
                    (!positive(c.speedup)).then(|| format!("speedup {}x", c.speedup)),
                    c.sequential_ms
                        .filter(|&t| !positive(t))
                        .map(|t| format!("sequential beside it {t} ms")),
                    (c.knobs.chunks == 0).then(|| "0 chunks".to_string()),
                ];
                let wrong: Vec<String> = wrong.into_iter().flatten().collect();
                if !wrong.is_empty() {
                    return Err(bad(format!("{}: {}", c.mode, wrong.join(", "))));
                }
                // A knob's error names where it lies: a table holds many.
                let at = |e: Error| match e {
                    Error::Invalid { what, value, bound } => Error::Invalid {
                        what,
                        value: format!("{value} in {path}, point {}, {}", p.workload, c.mode),
                        bound,
                    },
                    other => other,
                };
                super::knobs::parse_reduce(&c.knobs.reduce).map_err(at)?;
                if let Some(g) = &c.knobs.host_grain {
                    super::knobs::parse_grain(g).map_err(at)?;
                }
                if let Some(name) = &c.knobs.collective {
                    let own = crate::schedule::Collective::parse(&p.key.collective)
                        .ok_or_else(|| bad(format!("collective {}", p.key.collective)))?;
                    super::knobs::check_collective(name, own, p.key.ranks).map_err(at)?;
                }
            }
        }
        Ok(t)
    }

    /// Refuses a table tuned on another adapter, backend or driver (`adapter`: this one's
    /// [`crate::gpu::Gpu::describe`]): its choices were measured elsewhere.
    pub fn check_adapter(&self, path: &str, adapter: &str) -> Result<()> {
        if self.adapter == adapter {
            return Ok(());
        }
        Err(Error::invalid(
            "tune table",
            format!("{path}, tuned on {}", self.adapter),
            format!("a table tuned on this adapter, {adapter} (run `t3 tune` here)"),
        ))
    }
}

/// The default table's file for an adapter: `t3-tune-<name>-<backend>.json` in the working
/// directory, the name in lower-case letters, digits and dashes.
pub fn default_path(name: &str, backend: &str) -> String {
    let slug = |s: &str| {
        let mut out = String::new();
        for ch in s.chars() {
            if ch.is_ascii_alphanumeric() {
                out.push(ch.to_ascii_lowercase());
            } else if !out.ends_with('-') {
                out.push('-');
            }
        }
        out.trim_matches('-').to_string()
    };
    format!("t3-tune-{}-{}.json", slug(name), slug(backend))
}

/// Now, UTC, as RFC 3339 to the second.
pub fn utc_now() -> String {
    let secs = web_time::SystemTime::now()
        .duration_since(web_time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    rfc3339(secs)
}

/// `secs` since 1970 as "YYYY-MM-DDThh:mm:ssZ" (the civil calendar from days, H. Hinnant's method).
pub fn rfc3339(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_civil() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(1_795_000_000), "2026-11-18T11:06:40Z");
    }

    #[test]
    fn default_paths_name_the_adapter() {
        assert_eq!(
            default_path("NVIDIA H200", "Vulkan"),
            "t3-tune-nvidia-h200-vulkan.json"
        );
        assert_eq!(
            default_path("llvmpipe (LLVM 15.0.6, 256 bits)", "Vulkan"),
            "t3-tune-llvmpipe-llvm-15-0-6-256-bits-vulkan.json"
        );
    }
}
