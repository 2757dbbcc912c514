//! Reports: the results table a person reads, the JSON and CSV a script reads, and the files a run
//! can write (Chrome trace, SVG Gantt chart, NumPy dumps of every rank's inputs and outputs).

use std::io::Write;

use crate::config::Config;
use crate::error::{Error, Result};
use crate::experiment::Report;
use crate::ranks::Inputs;
use crate::schedule::a_rows;
use crate::shapes::Chunking;
use crate::stats::Spread;

fn ms(v: Option<f64>) -> String {
    v.map(|x| format!("{x:.3}")).unwrap_or_else(|| "-".into())
}

/// The human-readable table.
pub fn text(r: &Report) -> String {
    let c = &r.config;
    let mut s = String::new();
    s += &format!("adapter    {}\n", r.adapter);
    s += &format!(
        "workload   {} x {} ranks (M x N x K per rank), {} chunk(s) per rank, {}, reduce via {}, link {}{}, step lead {}\n",
        c.shape,
        c.ranks,
        c.chunks,
        c.collective,
        c.via.name(),
        c.link.describe(),
        c.arbitrate.map(|w| format!(", arbitration {w} workgroups")).unwrap_or_default(),
        c.step_lead.describe()
    );
    s += &format!(
        "gemm       {} operands, f32 accumulation, {} kernel\n",
        c.dtype.name(),
        r.gemm_kernel.name()
    );
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
    let baseline = |label: &str, ms_: f64, sp: Option<Spread>, extra: String, figure: &str| {
        let line = format!(
            "{:<11}{label:<10}{:>10} ms  {:<26}{extra}{}",
            if label == "T_gemm" { "baselines" } else { "" },
            format!("{ms_:.3}"),
            spread(sp),
            flags(figure)
        );
        line.trim_end().to_string() + "\n"
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
    s += "\nmode        median ms  spread ms             speedup  overlap eff  bytes moved   max rel err  trackers  trigger µs (med/p99)  checks\n";
    for m in &r.results {
        if let Some(why) = &m.skipped {
            s += &format!("{:<10}  skipped: {why}\n", m.mode);
            continue;
        }
        s += &format!(
            "{:<10} {:>10}  {:<20} {:>8} {:>12} {:>12} {:>13} {:>9} {:>20}  {}\n",
            m.mode,
            ms(m.median_ms),
            spread(m.spread_ms),
            m.speedup
                .map(|x| format!("{x:.3}"))
                .unwrap_or_else(|| "-".into()),
            m.overlap_efficiency
                .map(|x| format!("{x:.3}"))
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
    let failed: Vec<_> = r.checks.iter().filter(|c| !c.ok).collect();
    if !failed.is_empty() {
        s += &format!(
            "\nchecks failed after {} measurement(s); overlap efficiency left empty where they bear on it:\n",
            r.attempts
        );
        for c in failed {
            s += &format!("  {}: {}\n", c.name, c.detail);
        }
    }
    s
}

/// A mode row's checks: its own failures by name, the baselines' as one word (their lines name them).
fn mode_checks(r: &Report, failed: &[String]) -> String {
    if failed.is_empty() {
        return "ok".into();
    }
    let baseline = |n: &String| r.checks.iter().any(|c| &c.name == n && c.subject.is_none());
    let mut names: Vec<&str> = failed
        .iter()
        .filter(|n| !baseline(n))
        .map(String::as_str)
        .collect();
    if failed.iter().any(baseline) {
        names.insert(0, "baselines");
    }
    format!("FAILED: {}", names.join(", "))
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

/// CSV header for [`csv_rows`].
pub const CSV_HEADER: &str = "adapter,m,n,k,ranks,chunks,collective,reduce_via,link,arbitrate,step_lead,dtype,gemm_kernel,mode,median_ms,speedup,overlap_efficiency,bytes_moved,max_rel_error,trackers_ok,t_gemm_ms,t_gemm_untracked_ms,t_comm_ms,t_seq_ms,ideal_ms,median_lo_ms,median_hi_ms,spread_kind,t_gemm_lo_ms,t_gemm_hi_ms,t_gemm_untracked_lo_ms,t_gemm_untracked_hi_ms,t_comm_lo_ms,t_comm_hi_ms,t_seq_lo_ms,t_seq_hi_ms,warmup_rounds,warmup_s,warmup_settled,attempts,consistent,checks_failed,skipped";

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// One CSV row per mode.
pub fn csv_rows(r: &Report) -> Vec<String> {
    let c = &r.config;
    let opt = |v: Option<f64>| v.map(|x| format!("{x}")).unwrap_or_default();
    let lo = |v: Option<Spread>| opt(v.map(|x| x.lo));
    let hi = |v: Option<Spread>| opt(v.map(|x| x.hi));
    let rounds = r.warmups.iter().map(|w| w.runs).max().unwrap_or(0);
    let warm_s = r.warmups.iter().map(|w| w.seconds).fold(0.0, f64::max);
    let settled = r.warmups.iter().all(|w| w.settled);
    r.results
        .iter()
        .map(|m| {
            [
                csv_field(&r.adapter),
                c.shape.m.to_string(),
                c.shape.n.to_string(),
                c.shape.k.to_string(),
                c.ranks.to_string(),
                c.chunks.to_string(),
                c.collective.to_string(),
                c.via.name().into(),
                csv_field(&c.link.describe()),
                c.arbitrate.map(|w| w.to_string()).unwrap_or_default(),
                c.step_lead.describe(),
                c.dtype.name().into(),
                r.gemm_kernel.name().into(),
                m.mode.clone(),
                opt(m.median_ms),
                opt(m.speedup),
                opt(m.overlap_efficiency),
                m.bytes_moved.to_string(),
                opt(m.max_rel_error),
                m.trackers_ok.map(|b| b.to_string()).unwrap_or_default(),
                r.t_gemm_ms.to_string(),
                r.t_gemm_untracked_ms.to_string(),
                r.t_comm_ms.to_string(),
                r.t_seq_ms.to_string(),
                r.ideal_ms.to_string(),
                lo(m.spread_ms),
                hi(m.spread_ms),
                m.spread_ms.map(|x| x.kind).unwrap_or_default().into(),
                lo(r.t_gemm_spread),
                hi(r.t_gemm_spread),
                lo(r.t_gemm_untracked_spread),
                hi(r.t_gemm_untracked_spread),
                lo(r.t_comm_spread),
                hi(r.t_comm_spread),
                lo(r.t_seq_spread),
                hi(r.t_seq_spread),
                rounds.to_string(),
                warm_s.to_string(),
                settled.to_string(),
                r.attempts.to_string(),
                r.consistent.to_string(),
                csv_field(&m.checks_failed.join("; ")),
                csv_field(m.skipped.as_deref().unwrap_or("")),
            ]
            .join(",")
        })
        .collect()
}

/// A CSV row for a sweep point that failed: its configuration, and the error in the `skipped` column.
pub fn csv_error_row(c: &Config, error: &str) -> String {
    let mut cols = vec![String::new(); CSV_HEADER.split(',').count()];
    cols[1] = c.shape.m.to_string();
    cols[2] = c.shape.n.to_string();
    cols[3] = c.shape.k.to_string();
    cols[4] = c.ranks.to_string();
    cols[5] = c.chunks.to_string();
    cols[6] = c.collective.to_string();
    cols[7] = c.via.name().into();
    cols[8] = csv_field(&c.link.describe());
    cols[9] = c.arbitrate.map(|w| w.to_string()).unwrap_or_default();
    cols[10] = c.step_lead.describe();
    cols[11] = c.dtype.name().into();
    cols[13] = "error".into();
    *cols.last_mut().unwrap() = csv_field(error);
    cols.join(",")
}

/// Writes `text` to `path`, naming the path in the error.
pub fn write(path: &str, text: &str) -> Result<()> {
    std::fs::write(path, text).map_err(|source| Error::Io {
        path: path.into(),
        source,
    })
}

fn npy(path: &std::path::Path, data: &[f32], shape: &[u64]) -> Result<()> {
    use npyz::WriterBuilder;
    let io = |source| Error::Io {
        path: path.display().to_string(),
        source,
    };
    let f = std::fs::File::create(path).map_err(io)?;
    let mut w = npyz::WriteOptions::new()
        .default_dtype()
        .shape(shape)
        .writer(std::io::BufWriter::new(f))
        .begin_nd()
        .map_err(io)?;
    w.extend(data.iter().copied()).map_err(io)?;
    w.finish().map_err(io)
}

/// `--dump DIR`: every rank's A, B and final output (`outputs`, as [`crate::experiment::outputs`]
/// read them) as .npy, and meta.json with the chunk boundaries. Rows a rank does not hold finished
/// are its partials.
pub fn dump(
    dir: &str,
    config: &Config,
    chunking: &Chunking,
    inputs: &Inputs,
    outputs: &[Vec<f32>],
) -> Result<()> {
    let d = std::path::Path::new(dir);
    std::fs::create_dir_all(d).map_err(|source| Error::Io {
        path: dir.into(),
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
        "shape": {"m": s.m, "n": s.n, "k": s.k},
        "ranks": config.ranks,
        "chunks_per_rank": config.chunks,
        "collective": config.collective,
        "chunk_bounds": chunking.bounds,
        "shard_of_chunk": (0..chunking.count()).map(|x| chunking.shard_of(x)).collect::<Vec<_>>(),
        "a_rows": a_rows.iter().map(|r| [r.start, r.end]).collect::<Vec<_>>(),
        "finished": crate::ranks::finished(config.collective, chunking),
        "seed": inputs.seed,
        "note": "rank{p}_out rows of chunks listed in `finished` for rank p hold the collective's result; reduce-scatter: sum over ranks of a_p @ b_p; all-gather: a_s @ b for shard s; NaN rows were never written on that rank",
    });
    let mut f = std::fs::File::create(d.join("meta.json")).map_err(|source| Error::Io {
        path: dir.into(),
        source,
    })?;
    f.write_all(serde_json::to_string_pretty(&meta).unwrap().as_bytes())
        .map_err(|source| Error::Io {
            path: dir.into(),
            source,
        })
}
