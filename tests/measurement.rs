//! A report never prints a figure it has evidence is wrong: a baseline made inconsistent on purpose
//! (the tracked GEMM alone timed 50x slower through the measurement's seam, so T_gemm > T_seq, as in
//! issue 14) is re-measured, flagged in the table, JSON and CSV, and no overlap efficiency is given;
//! and fused mode, whose GEMM timed alone as it packs it beats T_gemm, gets none either.

mod common;

use t3_wgpu::experiment::{self, Options, Stability, Verify, FUSED_GEMM, GEMM};
use t3_wgpu::modes::{Config, Kernels, StepLead};
use t3_wgpu::plan::ReduceVia;
use t3_wgpu::report;
use t3_wgpu::schedule::Collective;
use t3_wgpu::shapes::{Dtype, Shape};
use t3_wgpu::steps::Link;

fn options(reps: usize) -> Options {
    Options {
        config: Config {
            shape: Shape::new(40, 33, 17).unwrap(),
            ranks: 2,
            chunks: 1,
            collective: Collective::ReduceScatter,
            via: ReduceVia::Update,
            link: Link::Unthrottled,
            dtype: Dtype::F32,
            arbitrate: None,
            gemm_grid: None,
            step_lead: StepLead::Auto,
        },
        modes: vec!["sequential".into(), "encoded".into(), "host".into()],
        reps,
        warmup: 1,
        seed: common::seed("measurement"),
        verify: Some(Verify::Full),
        stability: Stability {
            warmup_s: 0.0,
            ..Default::default()
        },
    }
}

#[test]
fn an_inconsistent_baseline_is_flagged_and_gets_no_efficiency() {
    let Some(gpu) = common::gpu() else { return };
    let kernels = Kernels::new(gpu).unwrap();
    let opts = options(3);
    let (mut sys, inputs) = experiment::prepare(gpu, &kernels, &opts).unwrap();
    let slow = |what: &str, r: &mut experiment::Rep| {
        if what == GEMM {
            r.us = r.us * 50.0 + 1e4;
        }
    };
    let r = experiment::measure_with(&mut sys, &inputs, &opts, &slow).unwrap();

    assert!(!r.consistent);
    assert_eq!(
        r.attempts,
        1 + opts.stability.retries,
        "re-measured, bounded"
    );
    assert!(r.t_gemm_ms > r.t_seq_ms, "{} {}", r.t_gemm_ms, r.t_seq_ms);
    let failed: Vec<&str> = r
        .checks
        .iter()
        .filter(|c| !c.ok)
        .map(|c| c.name.as_str())
        .collect();
    assert!(failed.contains(&"T_gemm <= T_seq"), "{failed:?}");
    for m in &r.results {
        assert!(m.skipped.is_none(), "{m:?}");
        assert!(
            m.max_rel_error.unwrap() <= 1e-5,
            "the results stay right: {m:?}"
        );
        assert_eq!(m.overlap_efficiency, None, "{m:?}");
        assert!(
            m.checks_failed.iter().any(|c| c == "T_gemm <= T_seq"),
            "{m:?}"
        );
        let s = m.spread_ms.unwrap();
        assert!(s.lo <= s.median && s.median <= s.hi, "{s:?}");
    }

    // The table prints the failure beside T_gemm and no efficiency in any row.
    let text = report::text(&r);
    let gemm_line = text.lines().find(|l| l.contains("T_gemm ")).unwrap();
    assert!(
        gemm_line.contains("CHECK FAILED: T_gemm <= T_seq"),
        "{text}"
    );
    let header = text.lines().find(|l| l.starts_with("mode ")).unwrap();
    let rows: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("mode "))
        .skip(1)
        .take_while(|l| !l.is_empty())
        .collect();
    assert_eq!(rows.len(), 3, "{text}");
    let eff = header.find("overlap eff").unwrap() + "overlap eff".len();
    for row in rows {
        assert_eq!(row[..eff].trim_end().chars().last(), Some('-'), "{row}");
        assert!(row.contains("FAILED: baselines"), "{row}");
    }
    assert!(
        text.contains("checks failed after 3 measurement(s)"),
        "{text}"
    );

    // JSON: the checks, the spreads and every attempt's raw samples.
    let v = serde_json::to_value(&r).unwrap();
    assert_eq!(v["consistent"], false);
    assert!(v["results"][0]["overlap_efficiency"].is_null());
    let samples = v["samples"].as_array().unwrap();
    let gemm: Vec<_> = samples.iter().filter(|s| s["what"] == GEMM).collect();
    assert_eq!(gemm.len(), 3, "one series per attempt");
    assert_eq!(gemm[2]["reps"].as_array().unwrap().len(), 3);
    assert!(gemm[2]["warmup"][0]["at_s"].as_f64().unwrap() > 0.0);

    // CSV: the efficiency column is empty and the failure is named.
    for row in report::Row::measured("slowed", &r) {
        assert_eq!(row.overlap_efficiency, None, "{row:?}");
        assert!(row.checks_failed.contains("T_gemm <= T_seq"), "{row:?}");
        assert_eq!(row.consistent, Some(false), "{row:?}");
    }
    let text = report::csv_text(&report::Row::measured("slowed", &r), true).unwrap();
    let mut csv = csv::Reader::from_reader(text.as_bytes());
    let header = csv.headers().unwrap().clone();
    let col = |n: &str| header.iter().position(|h| h == n).unwrap();
    for row in csv.records() {
        let row = row.unwrap();
        assert_eq!(&row[col("overlap_efficiency")], "", "{row:?}");
        assert!(
            row[col("checks_failed")].contains("T_gemm <= T_seq"),
            "{row:?}"
        );
        assert_eq!(&row[col("consistent")], "false", "{row:?}");
    }
}

#[test]
fn fused_mode_whose_own_gemm_beats_t_gemm_gets_no_efficiency() {
    let Some(gpu) = common::gpu() else { return };
    let kernels = Kernels::new(gpu).unwrap();
    let mut opts = options(3);
    opts.modes = vec!["sequential".into(), "encoded".into(), "fused".into()];
    let (mut sys, inputs) = experiment::prepare(gpu, &kernels, &opts).unwrap();
    // Fused mode's packed GEMM timed at a tenth of what it took: T_gemm is then no bound for it.
    let fast = |what: &str, r: &mut experiment::Rep| {
        if what == FUSED_GEMM {
            r.us *= 0.1;
        }
    };
    let r = experiment::measure_with(&mut sys, &inputs, &opts, &fast).unwrap();
    let packed = r.t_fused_gemm_ms.expect("fused mode's GEMM timed");
    assert!(packed < r.t_gemm_ms, "{packed} {}", r.t_gemm_ms);
    let fused = r.results.iter().find(|m| m.mode == "fused").unwrap();
    assert!(fused.max_rel_error.unwrap() <= 1e-5, "{fused:?}");
    assert_eq!(fused.overlap_efficiency, None, "{fused:?}");
    assert!(
        fused
            .checks_failed
            .iter()
            .any(|c| c == "T_gemm <= T_fused_gemm"),
        "{fused:?}"
    );
    // Only fused mode's row carries it.
    for m in r.results.iter().filter(|m| m.mode != "fused") {
        assert!(
            !m.checks_failed.iter().any(|c| c.contains("fused_gemm")),
            "{m:?}"
        );
    }
    let text = report::text(&r);
    assert!(
        text.lines()
            .any(|l| l.trim_start().starts_with("fused gemm")),
        "{text}"
    );
    let row = text.lines().find(|l| l.starts_with("fused ")).unwrap();
    assert!(row.contains("T_gemm <= T_fused_gemm"), "{text}");
    let v = serde_json::to_value(&r).unwrap();
    assert!(v["t_fused_gemm_ms"].as_f64().unwrap() > 0.0);
}
