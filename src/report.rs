//! Reports: the results table a person reads, the JSON and CSV a script reads, and the files a run
//! can write (Chrome trace, SVG Gantt chart, NumPy dumps of every rank's inputs and outputs).

use serde::{Deserialize, Serialize};

use crate::config::Config;
use crate::consistency::Kind;
use crate::error::{Error, Result};
use crate::experiment::Report;
use crate::ranks::Inputs;
use crate::schedule::a_rows;
use crate::shapes::Chunking;
use crate::stats::Spread;

fn ms(v: Option<f64>) -> String {
    v.map(|x| format!("{x:.3}")).unwrap_or_else(|| "-".into())
}

/// "1.2 TFLOP/s", or GFLOP/s below one TFLOP/s (a CPU adapter's rate would print as 0.00).
fn rate(tflops: f64) -> String {
    if tflops >= 1.0 {
        format!("{tflops:.1} TFLOP/s")
    } else {
        format!("{:.1} GFLOP/s", tflops * 1e3)
    }
}

/// The first screen of a run: the results table first, in 100 columns, then the baselines and the
/// workload in a line each, and what failed; [`text`] has every figure and setting (`--verbose`).
pub fn summary(r: &Report) -> String {
    let c = &r.config;
    let mut s = String::new();
    let mut line = |l: String| {
        s += &clip(&l, 100);
        s.push('\n');
    };
    if r.emulated {
        line("note: a CPU adapter emulates the GPU here: its times are not a GPU's, and overlap may not pay".into());
    }
    line("mode       trigger   median ms   speedup  overlap eff  max rel err  checks".into());
    for m in &r.results {
        if let Some(why) = &m.skipped {
            line(format!(
                "{:<10} {:<8}  skipped: {why}",
                m.mode,
                m.trigger.name()
            ));
            continue;
        }
        let eff = match m.overlap_efficiency {
            // Sequential is the baseline: no overlap to rate.
            _ if m.mode == "sequential" => "-".to_string(),
            Some(x) => format!("{x:.3}{}", if m.own_baseline { "*" } else { "" }),
            None => "-".into(),
        };
        // The verdict only: the failed checks are listed below the table by name.
        let full = mode_checks(r, &m.checks_failed);
        let room = full.ends_with("no room to overlap");
        let mut checks = match (full.starts_with("FAILED"), room) {
            (false, _) => full,
            (true, true) => "FAILED, no room to overlap".into(),
            (true, false) => "FAILED (below)".into(),
        };
        if m.trackers_ok == Some(false) {
            checks = format!("trackers WRONG; {checks}");
        }
        line(format!(
            "{:<10} {:<8} {:>10} {:>9} {:>12} {:>12}  {checks}",
            m.mode,
            m.trigger.name(),
            ms(m.median_ms),
            m.speedup
                .map(|x| format!("{x:.3}"))
                .unwrap_or_else(|| "-".into()),
            eff,
            m.max_rel_error
                .map(|x| format!("{x:.2e}"))
                .unwrap_or_else(|| "-".into()),
        ));
    }
    if r.results.iter().any(|m| m.own_baseline) {
        line("* efficiency against the mode's own GEMM (--verbose: its own baseline)".into());
    }
    line(String::new());
    line(format!(
        "baselines  ms: T_gemm {:.3} ({}), T_comm {:.3}, T_seq {:.3}, ideal {:.3}",
        r.t_gemm_ms,
        rate(r.gemm_tflops),
        r.t_comm_ms,
        r.t_seq_ms,
        r.ideal_ms,
    ));
    let on = match r
        .devices
        .iter()
        .filter(|d| d.starts_with("device "))
        .count()
    {
        // The adapter's name without its driver's details (--verbose has them).
        0 | 1 => r.adapter.split(" (").next().unwrap_or_default().to_string(),
        n => {
            let links: Vec<&String> = r
                .devices
                .iter()
                .filter(|d| d.starts_with("link "))
                .collect();
            let zero = links.iter().filter(|l| l.contains("zero-copy")).count();
            let path = match zero {
                0 => "host-copy links",
                z if z == links.len() => "zero-copy links",
                _ => "zero-copy and host-copy links",
            };
            format!("{n} devices, {path}")
        }
    };
    line(format!(
        "workload   {} x {} ranks, {} chunks/rank, {} ({}), {} {}",
        c.shape,
        c.ranks,
        c.chunks,
        c.collective,
        c.via.name(),
        c.dtype.name(),
        r.gemm_kernel.name(),
    ));
    line(format!("on         {on}"));
    let (room, failed): (Vec<_>, Vec<_>) = r
        .checks
        .iter()
        .filter(|c| !c.ok)
        .partition(|c| c.kind == Kind::Room);
    if !failed.is_empty() {
        line("checks failed (overlap efficiency left empty where they bear on it):".into());
        for c in failed {
            line(format!("  {}: {}", c.name, c.detail));
        }
    }
    if !room.is_empty() {
        line("no room to overlap (T_seq within noise of ideal: efficiencies left empty, the times stand)".into());
    }
    line("(every figure, spread and setting: --verbose or --json)".into());
    s
}

/// `line` cut to `width` characters, ending in "..." where cut.
fn clip(line: &str, width: usize) -> String {
    if line.chars().count() <= width {
        line.to_string()
    } else {
        line.chars().take(width - 3).collect::<String>() + "..."
    }
}

/// Every figure and setting of a run (`--verbose`): the configuration, each baseline with its spread
/// and failed checks, a mode's own baseline, and the full table.
pub fn text(r: &Report) -> String {
    let c = &r.config;
    let mut s = String::new();
    s += &format!("adapter    {}\n", r.adapter);
    for d in &r.devices {
        s += &format!("           {d}\n");
    }
    s += &format!(
        "workload   {} x {} ranks (M x N x K per rank), {} chunk(s) per rank, {}, reduce via {}, link {}{}, step lead {}\n",
        c.shape,
        c.ranks,
        c.chunks,
        c.collective,
        c.via.name(),
        c.link.describe(),
        c.arbitrate.map(|w| format!(", arbitration {w} workgroups")).unwrap_or_default()
            + &c.gemm_grid.map(|w| format!(", GEMM grid {w} workgroups")).unwrap_or_default(),
        c.step_lead.describe()
    );
    s += &format!(
        "gemm       {} operands, f32 accumulation, {} kernel\n",
        c.dtype.name(),
        r.gemm_kernel.name()
    );
    if let Some(f) = &r.fused_config {
        s += &format!("fused      {f}\n");
    }
    // Each baseline on its own line: median, spread, and any failed check beside it.
    let flags = |figure: &str| -> String {
        let f: Vec<&str> = r
            .checks
            .iter()
            .filter(|c| !c.ok && c.beside == figure)
            .map(|c| c.name.as_str())
            .collect();
        if f.is_empty() {
            String::new()
        } else {
            format!("  CHECK FAILED: {}", f.join(", "))
        }
    };
    let figure_line =
        |head: &str, label: &str, ms_: f64, sp: Option<Spread>, extra: String, figure: &str| {
            let line = format!(
                "{head:<11}{label:<10}{:>10} ms  {:<26}{extra}{}",
                format!("{ms_:.3}"),
                spread(sp),
                flags(figure)
            );
            line.trim_end().to_string() + "\n"
        };
    let baseline = |label: &str, ms_: f64, sp: Option<Spread>, extra: String, figure: &str| {
        let head = if label == "T_gemm" { "baselines" } else { "" };
        figure_line(head, label, ms_, sp, extra, figure)
    };
    s += &baseline(
        "T_gemm",
        r.t_gemm_ms,
        r.t_gemm_spread,
        format!("{:.2} TFLOP/s", r.gemm_tflops),
        "T_gemm",
    );
    s += &baseline(
        "untracked",
        r.t_gemm_untracked_ms,
        r.t_gemm_untracked_spread,
        format!("tracker overhead {:+.1}%", r.tracker_overhead * 100.0),
        "gemm_untracked",
    );
    s += &baseline(
        "T_comm",
        r.t_comm_ms,
        r.t_comm_spread,
        String::new(),
        "T_comm",
    );
    s += &baseline("T_seq", r.t_seq_ms, r.t_seq_spread, String::new(), "T_seq");
    s += &baseline("ideal", r.ideal_ms, None, String::new(), "ideal");
    // A mode's own sequential run: the baseline its efficiency is against.
    for o in &r.own {
        let m = o.mode.as_str();
        let comm = if o.own_comm {
            "its transfers"
        } else {
            "T_comm"
        };
        let lines = [
            (
                "gemm",
                o.gemm_ms,
                Some(o.gemm_spread),
                "every rank's GEMM in one pass on the packed buffers, tracked only".to_string(),
            ),
            (
                "comm",
                o.comm_ms,
                Some(o.comm_spread),
                "its transfers alone, after it".to_string(),
            ),
            (
                "seq",
                o.seq_ms,
                Some(o.seq_spread),
                format!("its GEMM, then {comm} (the faster): its efficiency's baseline"),
            ),
            ("ideal", o.ideal_ms, None, String::new()),
        ];
        for (k, (label, ms_, sp, extra)) in lines.into_iter().enumerate() {
            let head = if k == 0 {
                format!("{m} own")
            } else {
                String::new()
            };
            s += &figure_line(&head, label, ms_, sp, extra, &format!("{m}_{label}"));
        }
    }
    let kind = r.t_seq_spread.map(|x| x.kind).unwrap_or("min/max");
    s += &format!(
        "run        median [{kind}] of {} reps, {} measurement(s); timeline grain: {}; device memory {:.1} MiB; check: {:?}\n",
        r.reps,
        r.attempts,
        r.grain,
        r.device_memory_bytes as f64 / (1 << 20) as f64,
        r.verify
    );
    s += &format!("warm-up    {}\n", warmup_text(r));
    s += "\nmode       trigger   median ms  spread ms             speedup  overlap eff  bytes moved   max rel err  trackers  trigger µs (med/p99)  checks\n";
    for m in &r.results {
        if let Some(why) = &m.skipped {
            s += &format!("{:<10} {:<8}  skipped: {why}\n", m.mode, m.trigger.name());
            continue;
        }
        s += &format!(
            "{:<10} {:<8} {:>10}  {:<20} {:>8} {:>12} {:>12} {:>13} {:>9} {:>20}  {}\n",
            m.mode,
            m.trigger.name(),
            ms(m.median_ms),
            spread(m.spread_ms),
            m.speedup
                .map(|x| format!("{x:.3}"))
                .unwrap_or_else(|| "-".into()),
            m.overlap_efficiency
                .map(|x| format!("{x:.3}{}", if m.own_baseline { "*" } else { "" }))
                .unwrap_or_else(|| "-".into()),
            human_bytes(m.bytes_moved),
            m.max_rel_error
                .map(|x| format!("{x:.2e}"))
                .unwrap_or_else(|| "-".into()),
            m.trackers_ok
                .map(|x| if x { "ok" } else { "WRONG" })
                .unwrap_or("-"),
            match (m.trigger_latency_median_us, m.trigger_latency_p99_us) {
                (Some(a), Some(b)) => format!("{a:.0}/{b:.0}"),
                _ => "-".into(),
            },
            mode_checks(r, &m.checks_failed)
        );
    }
    for m in r.results.iter().filter(|m| m.own_baseline) {
        s += &format!(
            "* {}: speedup over T_seq; efficiency against its own GEMM ({} own seq {} ms, ideal {} ms), so that its GEMM's gain or loss against T_gemm is not counted as overlap\n",
            m.mode,
            m.mode,
            ms(m.seq_ms),
            ms(m.ideal_ms)
        );
    }
    // No room to overlap is not a failure (see `mode_checks`): said apart, so that a report whose
    // every figure may be right does not list it under failed checks.
    let (room, failed): (Vec<_>, Vec<_>) = r
        .checks
        .iter()
        .filter(|c| !c.ok)
        .partition(|c| c.kind == Kind::Room);
    if !failed.is_empty() {
        s += &format!(
            "\nchecks failed after {} measurement(s); overlap efficiency left empty where they bear on it:\n",
            r.attempts
        );
        for c in failed {
            s += &format!("  {}: {}\n", c.name, c.detail);
        }
    }
    if !room.is_empty() {
        s += "\nno room to overlap (overlap efficiency left empty; the times stand):\n";
        for c in room {
            s += &format!("  {}: {}\n", c.name, c.detail);
        }
    }
    s
}

/// A mode row's checks: its own failures by name, the baselines' as one word (their lines name them).
/// No room to overlap (T_seq within noise of ideal: one rank, or a collective lost in the GEMM's
/// noise) is said as such, not as a failure: every figure may be right, only an efficiency would
/// mean nothing (and is left empty).
fn mode_checks(r: &Report, failed: &[String]) -> String {
    let kind = |n: &String| r.checks.iter().find(|c| &c.name == n).map(|c| c.kind);
    let room = failed.iter().any(|n| kind(n) == Some(Kind::Room));
    let failed: Vec<&String> = failed
        .iter()
        .filter(|n| kind(n) != Some(Kind::Room))
        .collect();
    let verdict = if failed.is_empty() {
        "ok".to_string()
    } else {
        let baseline = |n: &String| r.checks.iter().any(|c| &c.name == n && c.subject.is_none());
        let mut names: Vec<&str> = failed
            .iter()
            .filter(|n| !baseline(n))
            .map(|n| n.as_str())
            .collect();
        if failed.iter().any(|n| baseline(n)) {
            names.insert(0, "baselines");
        }
        format!("FAILED: {}", names.join(", "))
    };
    if room {
        verdict + ", no room to overlap"
    } else {
        verdict
    }
}

/// lo..hi of a spread, or "-".
fn spread(sp: Option<Spread>) -> String {
    sp.map(|x| format!("[{:.3}..{:.3}]", x.lo, x.hi))
        .unwrap_or_else(|| "-".into())
}

/// Which timed things settled and when, and which did not within the bound.
fn warmup_text(r: &Report) -> String {
    let (done, not): (Vec<_>, Vec<_>) = r.warmups.iter().partition(|w| w.settled);
    let runs = r.warmups.iter().map(|w| w.runs).max().unwrap_or(0);
    let mut s = format!("{runs} round(s) (at least {}", r.warmup);
    if r.stability.warmup_s > 0.0 {
        s += &format!(
            ", then until the last {} runs of each lie within {:.0}% of their median, at most {} s",
            r.stability.settle.window,
            r.stability.settle.tolerance * 100.0,
            r.stability.warmup_s
        );
        // The least warm-up is bounded by the most.
        let least = r.stability.min_warmup_s.min(r.stability.warmup_s);
        if least > 0.0 {
            s += &format!(" and at least {least} s");
        }
    }
    s += ")";
    let last = done.iter().map(|w| w.seconds).fold(0.0, f64::max);
    if !done.is_empty() {
        s += &format!("; settled: all by {last:.2} s");
        if !not.is_empty() {
            let names: Vec<&str> = done.iter().map(|w| w.what.as_str()).collect();
            s += &format!(" ({})", names.join(", "));
        }
    }
    if !not.is_empty() {
        let names: Vec<&str> = not.iter().map(|w| w.what.as_str()).collect();
        s += &format!("; NOT settled: {}", names.join(", "));
    }
    s
}

pub fn human_bytes(b: u64) -> String {
    let b = b as f64;
    if b >= 1e9 {
        format!("{:.2} GB", b / 1e9)
    } else if b >= 1e6 {
        format!("{:.2} MB", b / 1e6)
    } else {
        format!("{:.1} kB", b / 1e3)
    }
}

/// One CSV row: one mode's result at one configuration. `t3 run --csv` and `t3 sweep` write these
/// columns, `t3 plot` reads them. A sweep point that failed is one row of mode `error`, with the
/// message in `skipped` and the measured columns empty. Missing columns read as empty, and numbers
/// that do not parse as none, so that a CSV cut or edited by hand still plots what it holds.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Row {
    pub workload: String,
    pub adapter: String,
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub ranks: usize,
    pub chunks: usize,
    pub collective: String,
    pub reduce_via: String,
    pub link: String,
    pub arbitrate: Option<u32>,
    pub gemm_grid: Option<u32>,
    pub step_lead: String,
    pub dtype: String,
    pub gemm_kernel: String,
    pub mode: String,
    /// "tracked" (triggers at run time: host, fused), "planned" (encoded) or "none" (sequential).
    pub trigger: String,
    #[serde(deserialize_with = "csv::invalid_option")]
    pub median_ms: Option<f64>,
    #[serde(deserialize_with = "csv::invalid_option")]
    pub speedup: Option<f64>,
    #[serde(deserialize_with = "csv::invalid_option")]
    pub overlap_efficiency: Option<f64>,
    #[serde(deserialize_with = "csv::invalid_option")]
    pub bytes_moved: Option<u64>,
    #[serde(deserialize_with = "csv::invalid_option")]
    pub max_rel_error: Option<f64>,
    #[serde(deserialize_with = "csv::invalid_option")]
    pub trackers_ok: Option<bool>,
    #[serde(deserialize_with = "csv::invalid_option")]
    pub t_gemm_ms: Option<f64>,
    #[serde(deserialize_with = "csv::invalid_option")]
    pub t_gemm_untracked_ms: Option<f64>,
    #[serde(deserialize_with = "csv::invalid_option")]
    pub t_comm_ms: Option<f64>,
    #[serde(deserialize_with = "csv::invalid_option")]
    pub t_seq_ms: Option<f64>,
    /// The ideal and sequential time this mode's efficiency is against (its own, where
    /// `own_baseline`: fused mode's own sequential run).
    #[serde(deserialize_with = "csv::invalid_option")]
    pub ideal_ms: Option<f64>,
    #[serde(deserialize_with = "csv::invalid_option")]
    pub efficiency_seq_ms: Option<f64>,
    #[serde(deserialize_with = "csv::invalid_option")]
    pub own_baseline: Option<bool>,
    /// The spread of `median_ms` (see `spread_kind`) and of each baseline.
    #[serde(deserialize_with = "csv::invalid_option")]
    pub median_lo_ms: Option<f64>,
    #[serde(deserialize_with = "csv::invalid_option")]
    pub median_hi_ms: Option<f64>,
    /// "p10/p90" or "min/max" (fewer than 10 reps).
    pub spread_kind: String,
    #[serde(deserialize_with = "csv::invalid_option")]
    pub t_gemm_lo_ms: Option<f64>,
    #[serde(deserialize_with = "csv::invalid_option")]
    pub t_gemm_hi_ms: Option<f64>,
    #[serde(deserialize_with = "csv::invalid_option")]
    pub t_gemm_untracked_lo_ms: Option<f64>,
    #[serde(deserialize_with = "csv::invalid_option")]
    pub t_gemm_untracked_hi_ms: Option<f64>,
    #[serde(deserialize_with = "csv::invalid_option")]
    pub t_comm_lo_ms: Option<f64>,
    #[serde(deserialize_with = "csv::invalid_option")]
    pub t_comm_hi_ms: Option<f64>,
    #[serde(deserialize_with = "csv::invalid_option")]
    pub t_seq_lo_ms: Option<f64>,
    #[serde(deserialize_with = "csv::invalid_option")]
    pub t_seq_hi_ms: Option<f64>,
    /// The longest warm-up of the run's timed things, in runs and seconds, and whether all settled.
    #[serde(deserialize_with = "csv::invalid_option")]
    pub warmup_rounds: Option<usize>,
    #[serde(deserialize_with = "csv::invalid_option")]
    pub warmup_s: Option<f64>,
    #[serde(deserialize_with = "csv::invalid_option")]
    pub warmup_settled: Option<bool>,
    /// Measurements taken (more than 1 where a consistency check failed).
    #[serde(deserialize_with = "csv::invalid_option")]
    pub attempts: Option<usize>,
    #[serde(deserialize_with = "csv::invalid_option")]
    pub consistent: Option<bool>,
    /// The checks that still failed on this mode's figures, "; "-separated.
    pub checks_failed: String,
    pub skipped: Option<String>,
}

impl Row {
    /// A row with `workload` and `c`'s configuration, nothing measured.
    pub fn config(workload: &str, c: &Config) -> Self {
        Row {
            workload: workload.into(),
            m: c.shape.m,
            n: c.shape.n,
            k: c.shape.k,
            ranks: c.ranks,
            chunks: c.chunks,
            collective: c.collective.to_string(),
            reduce_via: c.via.name().into(),
            link: c.link.describe(),
            arbitrate: c.arbitrate,
            gemm_grid: c.gemm_grid,
            step_lead: c.step_lead.describe(),
            dtype: c.dtype.name().into(),
            ..Row::default()
        }
    }

    /// One row per mode of `r`.
    pub fn measured(workload: &str, r: &Report) -> Vec<Self> {
        r.results
            .iter()
            .map(|m| Row {
                adapter: r.adapter.clone(),
                gemm_kernel: r.gemm_kernel.name().into(),
                mode: m.mode.clone(),
                trigger: m.trigger.name().into(),
                median_ms: m.median_ms,
                speedup: m.speedup,
                overlap_efficiency: m.overlap_efficiency,
                bytes_moved: Some(m.bytes_moved),
                max_rel_error: m.max_rel_error,
                trackers_ok: m.trackers_ok,
                t_gemm_ms: Some(r.t_gemm_ms),
                t_gemm_untracked_ms: Some(r.t_gemm_untracked_ms),
                t_comm_ms: Some(r.t_comm_ms),
                t_seq_ms: Some(r.t_seq_ms),
                ideal_ms: m.ideal_ms,
                efficiency_seq_ms: m.seq_ms,
                own_baseline: Some(m.own_baseline),
                median_lo_ms: m.spread_ms.map(|x| x.lo),
                median_hi_ms: m.spread_ms.map(|x| x.hi),
                spread_kind: m.spread_ms.map(|x| x.kind).unwrap_or_default().into(),
                t_gemm_lo_ms: r.t_gemm_spread.map(|x| x.lo),
                t_gemm_hi_ms: r.t_gemm_spread.map(|x| x.hi),
                t_gemm_untracked_lo_ms: r.t_gemm_untracked_spread.map(|x| x.lo),
                t_gemm_untracked_hi_ms: r.t_gemm_untracked_spread.map(|x| x.hi),
                t_comm_lo_ms: r.t_comm_spread.map(|x| x.lo),
                t_comm_hi_ms: r.t_comm_spread.map(|x| x.hi),
                t_seq_lo_ms: r.t_seq_spread.map(|x| x.lo),
                t_seq_hi_ms: r.t_seq_spread.map(|x| x.hi),
                warmup_rounds: r.warmups.iter().map(|w| w.runs).max(),
                warmup_s: Some(r.warmups.iter().map(|w| w.seconds).fold(0.0, f64::max)),
                warmup_settled: Some(r.warmups.iter().all(|w| w.settled)),
                attempts: Some(r.attempts),
                consistent: Some(r.consistent),
                checks_failed: m.checks_failed.join("; "),
                skipped: m.skipped.clone(),
                ..Row::config(workload, &r.config)
            })
            .collect()
    }

    /// The row of a sweep point that failed with `error`.
    pub fn failed(workload: &str, c: &Config, error: &str) -> Self {
        Row {
            mode: "error".into(),
            skipped: Some(error.into()),
            ..Row::config(workload, c)
        }
    }
}

/// `rows` as CSV text, with the header line first when `header` (a sweep writes it once).
pub fn csv_text(rows: &[Row], header: bool) -> Result<String> {
    let fail = |e: String| Error::Write {
        path: "CSV text".into(),
        source: std::io::Error::other(e),
    };
    let mut w = csv::WriterBuilder::new()
        .has_headers(header)
        .from_writer(Vec::new());
    for row in rows {
        w.serialize(row).map_err(|e| fail(e.to_string()))?;
    }
    let bytes = w.into_inner().map_err(|e| fail(e.to_string()))?;
    String::from_utf8(bytes).map_err(|e| fail(e.to_string()))
}

fn npy(path: &std::path::Path, data: &[f32], shape: &[u64]) -> Result<()> {
    use npyz::WriterBuilder;
    crate::files::write_with(path, |w| {
        let mut w = npyz::WriteOptions::new()
            .default_dtype()
            .shape(shape)
            .writer(w)
            .begin_nd()?;
        w.extend(data.iter().copied())?;
        w.finish()
    })
}

/// Whether `name` is one of the files [`dump`] writes per rank ("rank3_out.npy").
fn rank_file(name: &str) -> bool {
    name != "meta.json" && crate::files::is_dump_file(name)
}

/// `--dump DIR`: every rank's A, B and final output (`outputs`, as [`crate::experiment::outputs`]
/// read them after `mode`'s last run) as .npy, and meta.json with the chunk boundaries and the mode,
/// dtype and reduce that produced them. Rows a rank does not hold finished are its partials.
pub fn dump(
    dir: &str,
    config: &Config,
    chunking: &Chunking,
    inputs: &Inputs,
    outputs: &[Vec<f32>],
    mode: &str,
) -> Result<()> {
    let d = std::path::Path::new(dir);
    std::fs::create_dir_all(d).map_err(|source| Error::Write {
        path: dir.to_string(),
        source,
    })?;
    let s = config.shape;
    let a_rows: Vec<_> = (0..config.ranks)
        .map(|p| a_rows(config.collective, chunking, p))
        .collect();
    for (p, out) in outputs.iter().enumerate() {
        npy(
            &d.join(format!("rank{p}_a.npy")),
            &inputs.a[p],
            &[a_rows[p].len() as u64, s.k as u64],
        )?;
        npy(
            &d.join(format!("rank{p}_b.npy")),
            &inputs.b[p],
            &[s.k as u64, s.n as u64],
        )?;
        npy(
            &d.join(format!("rank{p}_out.npy")),
            out,
            &[s.m as u64, s.n as u64],
        )?;
    }
    let meta = serde_json::json!({
        "mode": mode,
        "shape": {"m": s.m, "n": s.n, "k": s.k},
        "ranks": config.ranks,
        "chunks_per_rank": config.chunks,
        "collective": config.collective,
        "reduce_via": config.via,
        "dtype": config.dtype.name(),
        "link": config.link.describe(),
        "chunk_bounds": chunking.bounds,
        "shard_of_chunk": (0..chunking.count()).map(|x| chunking.shard_of(x)).collect::<Vec<_>>(),
        "a_rows": a_rows.iter().map(|r| [r.start, r.end]).collect::<Vec<_>>(),
        "finished": crate::ranks::finished(config.collective, chunking),
        "seed": inputs.seed,
        "note": "rank{p}_out holds what `mode`'s last run left; rows of chunks listed in `finished` for rank p hold the collective's result; reduce-scatter: sum over ranks of a_p @ b_p; all-gather: a_s @ b for shard s; NaN rows were never written on that rank",
    });
    let path = d.join("meta.json");
    let text = serde_json::to_string_pretty(&meta).map_err(|e| Error::Write {
        path: path.display().to_string(),
        source: e.into(),
    })?;
    crate::files::write_with(&path, |w| w.write_all(text.as_bytes()))?;
    // Rank files of an earlier dump with more ranks go last (each file above replaced its
    // predecessor whole), so that the directory holds one run and a failed dump loses nothing.
    let io = |source| Error::Io {
        path: dir.to_string(),
        source,
    };
    for entry in std::fs::read_dir(d).map_err(io)? {
        let entry = entry.map_err(io)?;
        let name = entry.file_name();
        let Some(name) = name.to_str().filter(|n| rank_file(n)) else {
            continue;
        };
        let rank: Option<usize> = name[4..].split('_').next().and_then(|r| r.parse().ok());
        if rank.is_none_or(|r| r >= outputs.len()) {
            std::fs::remove_file(entry.path()).map_err(|source| Error::Write {
                path: entry.path().display().to_string(),
                source,
            })?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_round_trip_through_csv_with_one_header() {
        let row = Row {
            workload: "w, quoted \"name\"".into(),
            m: 7,
            arbitrate: Some(3),
            gemm_grid: None,
            mode: "host".into(),
            speedup: Some(1.25),
            trackers_ok: Some(true),
            skipped: Some("line\nbreak".into()),
            ..Row::default()
        };
        let text = csv_text(&[row.clone(), Row::default()], true).unwrap();
        assert!(
            text.starts_with("workload,adapter,m,n,k,ranks,chunks,"),
            "{text}"
        );
        let back: Vec<Row> = csv::Reader::from_reader(text.as_bytes())
            .deserialize()
            .collect::<std::result::Result<_, _>>()
            .unwrap();
        assert_eq!(back, vec![row, Row::default()]);
        assert!(!csv_text(&[Row::default()], false)
            .unwrap()
            .contains("workload"));
        // Columns missing or unparsable read as empty.
        let short: Row = csv::Reader::from_reader("mode,speedup\nhost,fast\n".as_bytes())
            .deserialize()
            .next()
            .unwrap()
            .unwrap();
        assert_eq!((short.mode.as_str(), short.speedup), ("host", None));
    }

    #[test]
    fn rank_files_are_recognised_and_nothing_else() {
        for yes in ["rank0_a.npy", "rank12_out.npy", "rank3_b.npy"] {
            assert!(super::rank_file(yes), "{yes}");
        }
        for no in [
            "rank_a.npy",
            "rankx_a.npy",
            "rank0_c.npy",
            "meta.json",
            "rank0_a.npy.bak",
            "my.npy",
        ] {
            assert!(!super::rank_file(no), "{no}");
        }
    }
}
