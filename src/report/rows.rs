//! The CSV rows a script reads: one per mode and point, as `t3 run --csv` and `t3 sweep` write them.

use serde::{Deserialize, Serialize};

use crate::config::Config;
use crate::error::{Error, Result};
use crate::experiment::Report;
use crate::schedule::Order;

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
    /// The GEMM's production order as `--order` takes it, "stage" or "chunk" (empty in a CSV from
    /// before the column: not known, as such a CSV may hold either).
    pub order: String,
    pub reduce_via: String,
    pub link: String,
    pub arbitrate: Option<u32>,
    pub gemm_grid: Option<u32>,
    pub step_lead: String,
    pub dtype: String,
    /// Element type of the outputs the mode computed and moved.
    pub output_dtype: String,
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
    /// The configuration the mode ran, in words, and its source: table, model or flags.
    pub config: String,
    pub config_source: String,
    /// Where the tune table says the mode loses to sequential here: what was done, and by how much.
    pub fallback: String,
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
            order: c.order.name().into(),
            reduce_via: c.via.name().into(),
            link: c.link.describe(),
            arbitrate: c.arbitrate,
            gemm_grid: c.gemm_grid,
            step_lead: c.step_lead.describe(),
            dtype: c.dtype.name().into(),
            output_dtype: c.out_dtype.name().into(),
            ..Row::default()
        }
    }

    /// One row per mode of `r`.
    pub fn measured(workload: &str, r: &Report) -> Vec<Self> {
        r.results
            .iter()
            .map(|m| Row {
                chunks: m.knobs.as_ref().map_or(r.config.chunks, |k| k.chunks),
                // A mode a tune table ran as another collective (the direct all-reduce) says so.
                collective: m
                    .knobs
                    .as_ref()
                    .and_then(|k| k.collective.clone())
                    .unwrap_or_else(|| r.config.collective.to_string()),
                // A mode's knobs name only the chunk order: none is the stage order, whatever the
                // point's.
                order: m.knobs.as_ref().map_or(r.config.order.name().into(), |k| {
                    k.order
                        .clone()
                        .unwrap_or_else(|| Order::Stage.name().into())
                }),
                reduce_via: m
                    .knobs
                    .as_ref()
                    .map_or(r.config.via.name().into(), |k| k.reduce.clone()),
                gemm_grid: m.knobs.as_ref().map_or(r.config.gemm_grid, |k| k.gemm_grid),
                step_lead: m.knobs.as_ref().map_or(r.config.step_lead.describe(), |k| {
                    k.step_lead.map_or("auto".into(), |w| w.to_string())
                }),
                link: match m.knobs.as_ref().and_then(|k| k.link_workgroups) {
                    Some(w) => crate::steps::Link::Workgroups(w).describe(),
                    None => r.config.link.describe(),
                },
                adapter: r.adapter.clone(),
                gemm_kernel: r.gemm_kernel.name().into(),
                mode: m.mode.name().into(),
                output_dtype: m.output_dtype.name().into(),
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
                config: m.config.clone().unwrap_or_default(),
                config_source: m.config_source.map(|s| s.name().into()).unwrap_or_default(),
                fallback: m.fallback.clone().unwrap_or_default(),
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
