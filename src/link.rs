//! The link model's calibration: the payload bandwidth a copy step reaches at each workgroup budget on
//! this adapter, saved as a table so that `--link-gbps X` can pick the budget that emulates X GB/s.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::executor::{Executor, KernelSet};
use crate::gpu::Gpu;
use crate::lower::{StepEnd, StepSpec};
use crate::shaders::Put;
use crate::steps::{Link, StepKernel};
use crate::timestamps::{time_series, Timestamps};

/// Most workgroups a link table's row may name (a link budget's limit; `t3 calibrate` measures at
/// most the largest of [`BUDGETS`]).
pub const MAX_TABLE_WORKGROUPS: u32 = crate::steps::MAX_LINK_WORKGROUPS;

/// Budgets `t3 calibrate` measures (plus unthrottled), about 1.5x apart: powers of two alone leave an
/// asked rate up to 40% from the nearest budget.
pub const BUDGETS: [u32; 22] = [
    1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048,
];

/// Default file the table is saved to and read from.
pub const DEFAULT_TABLE: &str = "t3-link.json";

/// The fastest rate a table row or `--link-gbps` may name, GB/s: past any link's.
pub const MAX_GBPS: f64 = 1e6;

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LinkRow {
    /// Workgroup budget; None = unthrottled.
    pub workgroups: Option<u32>,
    /// Payload bytes moved per second, in GB/s (the link's rate; reads plus writes are twice this).
    pub gbps: f64,
    pub ms: f64,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LinkTable {
    pub adapter: String,
    pub bytes: u64,
    pub timer: String,
    pub rows: Vec<LinkRow>,
}

/// Times one copy step of `bytes` at each of `links`, `reps` times after one warm-up; median seconds.
/// Lowered to recordings over pool buffers that the executor binds once and encodes with the caller's
/// `kernel`'s pipeline; timed as every series is ([`time_series`] on `timer`, which holds at least
/// `reps + 1` passes: GPU timestamps, else the host clock).
pub fn time_step(
    gpu: &Gpu,
    timer: &mut Timestamps,
    kernel: &StepKernel,
    put: Put,
    bytes: u64,
    links: &[Link],
    reps: usize,
) -> Result<Vec<f64>> {
    let target = crate::executor::step_target(gpu, 0);
    let spec = StepSpec {
        label: "calibration step",
        dst: StepEnd::Pool,
        src: StepEnd::Pool,
        bytes,
        puts: &[put],
        links,
    };
    let steps = crate::lower::lower_step(&spec, target);
    let kernels = KernelSet::Step(kernel);
    let mut exec = Executor::pooled(gpu, kernels, &steps.lowered, Default::default())?;
    let mut rng = crate::reference::Rng::new(7);
    let chunk = rng.fill(1 << 20);
    for off in (0..bytes).step_by(4 << 20) {
        let n = ((bytes - off) as usize).min(4 << 20) / 4;
        exec.write_pool(steps.src, off, bytemuck::cast_slice(&chunk[..n]))?;
    }
    let runs = reps as u32 + 1;
    let bound = gpu.timeout_for(0.0, 2.0 * bytes as f64);
    let mut out = Vec::new();
    for rec in &steps.recordings {
        // The first run warms up and is left out.
        let spans = time_series(gpu, timer, rec.label, runs, bound, |enc, ts| {
            exec.record(enc, &steps.lowered, rec.label, &rec.commands, ts)
        })?;
        let secs: Vec<f64> = spans.iter().skip(1).map(|s| (s.1 - s.0) / 1e6).collect();
        out.push(crate::stats::median(&secs));
    }
    Ok(out)
}

/// The most bytes one measured copy may move on `gpu`: one buffer, bound whole.
pub fn largest_copy(gpu: &Gpu) -> u64 {
    gpu.max_buffer.min(gpu.max_binding)
}

/// Measures every budget in [`BUDGETS`] that is below the unthrottled count, and unthrottled.
/// `bytes` is each measured copy's size: at most [`largest_copy`].
pub fn calibrate(gpu: &Gpu, kernel: &StepKernel, bytes: u64, reps: usize) -> Result<LinkTable> {
    if bytes > largest_copy(gpu) {
        return Err(Error::invalid(
            "calibration copy",
            format!("{bytes} bytes"),
            format!(
                "at most {} bytes (a copy is one buffer, bound whole: max_buffer_size and \
                 max_storage_buffer_binding_size)",
                largest_copy(gpu)
            ),
        ));
    }
    let bytes = bytes.max(16) / 16 * 16;
    let need = Link::Unthrottled.workgroups((bytes / 16) as u32);
    let mut links: Vec<Link> = BUDGETS
        .iter()
        .filter(|&&w| w < need)
        .map(|&w| Link::Workgroups(w))
        .collect();
    links.push(Link::Unthrottled);
    let mut timer = Timestamps::new(gpu, reps as u32 + 1);
    let secs = time_step(gpu, &mut timer, kernel, Put::Store, bytes, &links, reps)?;
    Ok(LinkTable {
        adapter: gpu.describe(),
        bytes,
        timer: timer.clock().into(),
        rows: links
            .iter()
            .zip(secs)
            .map(|(l, s)| LinkRow {
                workgroups: l.cap(),
                // A zero-length timing (no timestamp resolution) must not become an infinite rate.
                gbps: bytes as f64 / s.max(1e-9) / 1e9,
                ms: s * 1e3,
            })
            .collect(),
    })
}

impl LinkTable {
    /// Writes the table as JSON to `path`, atomically: a run reading it meanwhile sees the old table
    /// or the new one, and a killed calibration leaves the old one.
    pub fn save(&self, path: &str) -> Result<()> {
        let s = serde_json::to_string_pretty(self).map_err(|e| Error::Write {
            path: path.into(),
            source: e.into(),
        })?;
        crate::files::write(path, &s)
    }

    /// Reads a table `t3 calibrate` saved: a regular file of bounded size (a FIFO or a device such
    /// as /dev/zero is refused, never read).
    pub fn load(path: &str) -> Result<Self> {
        let s = crate::files::read_text(path, "link table", crate::files::MAX_TABLE_BYTES)
            .map_err(|e| match e {
                Error::Io { source, .. } => Error::Io {
                    path: format!("{path} (run `t3 calibrate` first to measure the link table)"),
                    source,
                },
                e => e,
            })?;
        let t: Self = serde_json::from_str(&s).map_err(|e| {
            Error::invalid(
                "link table",
                path,
                format!("a table written by `t3 calibrate` ({e})"),
            )
        })?;
        let again = "(run `t3 calibrate` again)";
        if t.bytes < 16 {
            return Err(Error::invalid(
                "link table",
                format!("{path}, a step of {} bytes", t.bytes),
                format!("a step of 16 bytes or more {again}"),
            ));
        }
        if t.rows.is_empty() {
            return Err(Error::invalid(
                "link table",
                format!("{path}, no rows"),
                format!("measured rows {again}"),
            ));
        }
        for (i, r) in t.rows.iter().enumerate() {
            if !(r.gbps > 0.0 && r.gbps <= MAX_GBPS && r.ms.is_finite() && r.ms > 0.0) {
                return Err(Error::invalid(
                    "link table",
                    format!("{path}, row {}: {} GB/s in {} ms", i + 1, r.gbps, r.ms),
                    format!(
                        "a rate above 0 and at most {MAX_GBPS:e} GB/s, in a positive time {again}"
                    ),
                ));
            }
        }
        if let Some(w) = t
            .rows
            .iter()
            .filter_map(|r| r.workgroups)
            .find(|w| !(1..=MAX_TABLE_WORKGROUPS).contains(w))
        {
            return Err(Error::invalid(
                "link table",
                format!("{path}, a row of {w} workgroups"),
                format!(
                    "rows of 1 to {MAX_TABLE_WORKGROUPS} workgroups, or null for unthrottled (run `t3 calibrate` again)"
                ),
            ));
        }
        Ok(t)
    }

    /// Refuses a table measured on another adapter, backend or driver: its budgets would emulate
    /// rates that this adapter does not reach. `adapter` is [`Gpu::describe`]'s text.
    pub fn check_adapter(&self, path: &str, adapter: &str) -> Result<()> {
        if self.adapter == adapter {
            return Ok(());
        }
        Err(Error::invalid(
            "link table",
            format!("{path}, measured on {}", self.adapter),
            format!(
                "a table measured on this adapter, {adapter} (run `t3 calibrate --out FILE` here)"
            ),
        ))
    }

    /// The budget that emulates a `gbps` link best, and the rate it was measured at. Refused outside
    /// the measured range (5% slack): the nearest budget would then emulate another link silently.
    pub fn budget_for(&self, gbps: f64) -> Result<(Link, f64)> {
        if !(gbps.is_finite() && gbps > 0.0) {
            return Err(Error::invalid(
                "link rate",
                gbps,
                "a positive number of GB/s",
            ));
        }
        let best = self.rows.iter().map(|r| r.gbps).fold(0.0, f64::max);
        let slowest = self
            .rows
            .iter()
            .map(|r| r.gbps)
            .fold(f64::INFINITY, f64::min);
        if best * 1.05 < gbps {
            return Err(Error::invalid(
                "link rate",
                format!("{gbps} GB/s"),
                format!("at most {best:.1} GB/s, the fastest step measured on this adapter"),
            ));
        }
        if gbps * 1.05 < slowest {
            return Err(Error::invalid(
                "link rate",
                format!("{gbps} GB/s"),
                format!("at least {slowest:.1} GB/s, the slowest step measured on this adapter"),
            ));
        }
        // The budget whose measured rate is nearest to the asked one (on a log scale, so 148 and 282
        // GB/s are judged by ratio against 150).
        let dist = |r: &LinkRow| (r.gbps / gbps).ln().abs();
        let row = self
            .rows
            .iter()
            .min_by(|a, b| dist(a).total_cmp(&dist(b)))
            .ok_or_else(|| Error::invalid("link table", "empty", "at least one measured budget"))?;
        let link = match row.workgroups {
            Some(w) => Link::Workgroups(w),
            None => Link::Unthrottled,
        };
        Ok((link, row.gbps))
    }

    pub fn text(&self) -> String {
        let mut s = format!(
            "link table for {} ({} MiB copy, {})\n",
            self.adapter,
            self.bytes >> 20,
            self.timer
        );
        s += "workgroups      ms     GB/s (payload)\n";
        for r in &self.rows {
            let w = r
                .workgroups
                .map(|w| w.to_string())
                .unwrap_or_else(|| "unthrottled".into());
            s += &format!("{w:>11} {:>8.3} {:>8.1}\n", r.ms, r.gbps);
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> LinkTable {
        let row = |w: Option<u32>, gbps: f64| LinkRow {
            workgroups: w,
            gbps,
            ms: 1.0,
        };
        LinkTable {
            adapter: "test".into(),
            bytes: 1 << 28,
            timer: "gpu timestamps".into(),
            rows: vec![
                row(Some(8), 75.8),
                row(Some(16), 148.5),
                row(Some(32), 282.3),
                row(None, 2060.0),
            ],
        }
    }

    #[test]
    fn picks_the_nearest_budget() {
        let link = |g: f64| table().budget_for(g).unwrap().0;
        assert_eq!(link(150.0), Link::Workgroups(16));
        assert_eq!(link(250.0), Link::Workgroups(32));
        assert_eq!(link(75.0), Link::Workgroups(8));
        assert_eq!(link(2000.0), Link::Unthrottled);
        assert_eq!(table().budget_for(150.0).unwrap().1, 148.5);
        let e = table().budget_for(5000.0).unwrap_err().to_string();
        assert!(e.contains("5000") && e.contains("2060.0"), "{e}");
        assert!(table().budget_for(-1.0).is_err());
    }

    #[test]
    fn refuses_rates_below_the_table_and_tables_of_other_adapters() {
        let e = table().budget_for(0.001).unwrap_err().to_string();
        assert!(
            e.contains("0.001 GB/s") && e.contains("at least 75.8"),
            "{e}"
        );
        assert!(
            table().budget_for(73.0).is_ok(),
            "within 5% of the slowest row"
        );
        assert!(table().check_adapter("t.json", "test").is_ok());
        let e = table()
            .check_adapter("t.json", "other (Vulkan, 1)")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("measured on test") && e.contains("other (Vulkan, 1)"),
            "{e}"
        );
    }
}
