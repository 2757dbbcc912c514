//! A report never prints a figure it has evidence is wrong: a baseline made inconsistent on purpose
//! (the tracked GEMM alone timed 100 ms slower through the measurement's seam, so T_gemm > T_seq, as in
//! issue 14) is re-measured, flagged in the table, JSON and CSV, and no overlap efficiency is given;
//! and fused mode, whose packed GEMM is not T_gemm's, is judged against its own GEMM.

mod common;

use t3_wgpu::config::fused::FusedOptions;
use t3_wgpu::experiment::{
    self, Baselines, Options, Stability, Verify, COMM, FUSED_COMM, FUSED_GEMM, FUSED_SEQ, GEMM,
    GEMM_UNTRACKED, SEQ,
};
use t3_wgpu::hostlink::Path;
use t3_wgpu::modes::{self, Config, Kernels, ModeKind, StepLead, System};
use t3_wgpu::plan::ReduceVia;
use t3_wgpu::ranks::Inputs;
use t3_wgpu::report;
use t3_wgpu::schedule::Collective;
use t3_wgpu::shapes::Shape;

fn options(reps: usize) -> Options {
    Options {
        config: Config {
            chunks: 1,
            collective: Collective::ReduceScatter,
            ..Config::new(Shape::new(40, 33, 17).unwrap(), 2)
        },
        modes: vec![ModeKind::Sequential, ModeKind::Encoded, ModeKind::Host],
        reps,
        warmup: 1,
        seed: common::seed("measurement"),
        verify: Some(Verify::Full),
        stability: Stability {
            warmup_s: 0.0,
            ..Default::default()
        },
        baselines: Default::default(),
    }
}

#[test]
fn an_inconsistent_baseline_is_flagged_and_gets_no_efficiency() {
    let Some(gpu) = common::gpu() else { return };
    let kernels = Kernels::new(gpu).unwrap();
    let opts = options(3);
    let (mut sys, inputs) = experiment::prepare(gpu, &kernels, &opts).unwrap();
    let slow = |what: &str, r: &mut experiment::Rep| -> t3_wgpu::Result<()> {
        // 100 ms more, not a factor: a factor would widen the spread (and the noise the check
        // allows) with the host's jitter, and lavapipe's can cover the gap.
        if what == GEMM {
            r.us += 1e5;
        }
        Ok(())
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
        // Its last repetition's tail after its GEMM work, read off its timeline.
        assert!(
            m.after_gemm_ms.is_some_and(|a| a.is_finite() && a >= 0.0),
            "{m:?}"
        );
    }

    // The first screen: the table first (after the CPU note), 100 columns, the failure listed by name.
    let sum = report::summary(&r);
    for l in sum.lines() {
        assert!(
            l.chars().count() <= 100,
            "{} columns: {l}",
            l.chars().count()
        );
    }
    let first = sum.lines().find(|l| !l.starts_with("note:")).unwrap();
    assert!(first.starts_with("mode "), "{sum}");
    assert_eq!(
        sum.starts_with("note: a CPU adapter"),
        gpu.info.device_type == wgpu::DeviceType::Cpu,
        "{sum}"
    );
    assert!(sum.contains("  T_gemm <= T_seq: "), "{sum}");
    let (eff, rows) = common::mode_rows(&sum);
    assert_eq!(rows.len(), 3, "{sum}");
    for row in rows {
        assert_eq!(row[..eff].trim_end().chars().last(), Some('-'), "{row}");
        assert!(row.contains("FAILED"), "{row}");
    }
    // The table prints the failure beside T_gemm and no efficiency in any row.
    let text = report::text(&r);
    let gemm_line = text.lines().find(|l| l.contains("T_gemm ")).unwrap();
    assert!(
        gemm_line.contains("CHECK FAILED: T_gemm <= T_seq"),
        "{text}"
    );
    let (eff, rows) = common::mode_rows(&text);
    assert_eq!(rows.len(), 3, "{text}");
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
fn fused_mode_is_judged_against_its_own_gemm() {
    let Some(gpu) = common::gpu() else { return };
    let kernels = Kernels::new(gpu).unwrap();
    let mut opts = options(3);
    opts.modes = vec![ModeKind::Sequential, ModeKind::Encoded, ModeKind::Fused];
    let (mut sys, inputs) = experiment::prepare(gpu, &kernels, &opts).unwrap();
    // Every figure set through the measurement's seam (the runs still happen and are checked), so
    // that the accounting is exact: T_gemm 1000 µs, T_comm 500, T_seq 1500; fused mode's own GEMM
    // 800 (packed), its transfers 400, both 1200; encoded 1300, fused 1000.
    let slow = |what: &str, r: &mut experiment::Rep| -> t3_wgpu::Result<()> {
        let (us, parts): (f64, &[(&'static str, f64)]) = match what {
            GEMM => (1000.0, &[]),
            GEMM_UNTRACKED => (990.0, &[]),
            SEQ => (1500.0, &[(COMM, 500.0)]),
            FUSED_SEQ => (1200.0, &[(FUSED_GEMM, 800.0), (FUSED_COMM, 400.0)]),
            "encoded" => (1300.0, &[]),
            "fused" => (1000.0, &[]),
            other => panic!("timed thing {other}"),
        };
        assert_eq!(r.parts.len(), parts.len(), "{what}: {:?}", r.parts);
        r.us = us;
        r.parts = parts.to_vec();
        Ok(())
    };
    let r = experiment::measure_with(&mut sys, &inputs, &opts, &slow).unwrap();
    let [own] = &r.own[..] else {
        panic!("fused mode's own run: {:?}", r.own)
    };
    assert_eq!(own.mode, ModeKind::Fused);
    // Its own transfers (400) are faster than T_comm (500): its GEMM then them.
    assert!(own.own_comm, "{own:?}");
    let figures = [own.gemm_ms, own.comm_ms, own.seq_ms, own.ideal_ms];
    for (got, want) in figures.into_iter().zip([0.8, 0.4, 1.2, 0.8]) {
        assert!((got - want).abs() < 1e-9, "{own:?}");
    }
    let fused = r
        .results
        .iter()
        .find(|m| m.mode == ModeKind::Fused)
        .unwrap();
    assert!(fused.max_rel_error.unwrap() <= 1e-5, "{fused:?}");
    assert_eq!(fused.trackers_ok, Some(true), "{fused:?}");
    assert!(fused.own_baseline, "{fused:?}");
    assert_eq!(
        (fused.seq_ms, fused.ideal_ms),
        (Some(own.seq_ms), Some(own.ideal_ms))
    );
    // (1200 - 1000) / (1200 - 800): against T_seq it would read (1500 - 1000) / (1500 - 1000) = 1.
    let near = |e: Option<f64>, want: f64| e.is_some_and(|e| (e - want).abs() < 1e-9);
    assert!(near(fused.overlap_efficiency, 0.5), "{fused:?}");
    assert!(fused.checks_failed.is_empty(), "{fused:?}");
    let encoded = r
        .results
        .iter()
        .find(|m| m.mode == ModeKind::Encoded)
        .unwrap();
    assert!(near(encoded.overlap_efficiency, 0.4), "{encoded:?}");
    // Every other mode keeps T_seq and max(T_gemm, T_comm).
    for m in r.results.iter().filter(|m| m.mode != ModeKind::Fused) {
        assert!(!m.own_baseline, "{m:?}");
        assert_eq!(
            (m.seq_ms, m.ideal_ms),
            (Some(r.t_seq_ms), Some(r.ideal_ms)),
            "{m:?}"
        );
        assert!(
            !m.checks_failed.iter().any(|c| c.contains("fused")),
            "{m:?}"
        );
    }
    let text = report::text(&r);
    let own_line = |label: &str, ms: &str| {
        text.lines()
            .skip_while(|l| !l.starts_with("fused own"))
            .any(|l| {
                l.split_whitespace()
                    .collect::<Vec<_>>()
                    .windows(3)
                    .any(|w| w == [label, ms, "ms"])
            })
    };
    for (label, ms) in [
        ("gemm", "0.800"),
        ("comm", "0.400"),
        ("seq", "1.200"),
        ("ideal", "0.800"),
    ] {
        assert!(own_line(label, ms), "{label}: {text}");
    }
    assert!(
        text.contains("* fused: speedup over T_seq; efficiency against its own GEMM"),
        "{text}"
    );
    let v = serde_json::to_value(&r).unwrap();
    assert_eq!(v["own"][0]["mode"], "fused");
    assert!(v["own"][0]["comm_ms"].as_f64().unwrap() > 0.0);
    let rows = report::Row::measured("own", &r);
    let row = rows.iter().find(|row| row.mode == "fused").unwrap();
    assert_eq!(
        (row.own_baseline, row.efficiency_seq_ms),
        (Some(true), Some(own.seq_ms))
    );
}

/// A mode not asked for costs no lowering: fused mode's packing and tables (which grow with ranks
/// times chunks) are built only when fused mode runs.
#[test]
fn modes_not_asked_for_are_not_lowered() {
    let Some(gpu) = common::gpu() else { return };
    let kernels = Kernels::new(gpu).unwrap();
    let mut opts = options(1);
    let (sys, _) = experiment::prepare(gpu, &kernels, &opts).unwrap();
    let l = &sys.parts[0].lowered;
    assert!(l.fused.is_err());
    opts.modes.push(ModeKind::Fused);
    let (sys, _) = experiment::prepare(gpu, &kernels, &opts).unwrap();
    let l = &sys.parts[0].lowered;
    let f = l.fused.as_ref().unwrap();
    assert!(!f.sequential.commands.is_empty() && !f.recording.commands.is_empty());
}

/// The tuner's measurements after its first time only what they rank: sequential beside the mode
/// (`Baselines::Sequential`), no GEMM alone; each still checks the mode. Its first (`Costs`) times
/// every baseline but the untracked GEMM.
#[test]
fn a_lean_measurement_times_only_what_it_is_asked() {
    let Some(gpu) = common::gpu() else { return };
    let kernels = Kernels::new(gpu).unwrap();
    let mut opts = options(2);
    opts.modes = vec![ModeKind::Encoded];
    let (mut sys, inputs) = experiment::prepare(gpu, &kernels, &opts).unwrap();
    opts.baselines = Baselines::Sequential;
    let r = experiment::measure(&mut sys, &inputs, &opts).unwrap();
    // Every attempt's series (a spread too wide measures again), each name once.
    let mut what: Vec<&str> = r.samples.iter().map(|s| s.what.as_str()).collect();
    what.retain(|w| *w != COMM);
    what.sort_unstable();
    what.dedup();
    assert_eq!(what, ["encoded", "sequential"]);
    assert!(r.t_gemm_ms.is_nan(), "no GEMM alone");
    // Without the other baselines, each figure's spread is still checked.
    let names: Vec<&str> = r.checks.iter().map(|c| c.name.as_str()).collect();
    assert!(names.contains(&"spread encoded"), "{names:?}");
    assert!(r.t_seq_ms.is_finite());
    let m = &r.results[0];
    assert_eq!(m.mode, ModeKind::Encoded);
    assert!(m.median_ms.is_some_and(|t| t > 0.0));
    assert!(m.max_rel_error.is_some_and(|e| e < 1e-4), "{m:?}");
    assert_eq!(m.trackers_ok, Some(true));
    // A tuned point's first measurement: every baseline but the untracked GEMM, every mode checked.
    opts.baselines = Baselines::Costs;
    opts.modes = vec![ModeKind::Encoded, ModeKind::Fused];
    let mut sys = System::for_modes(
        std::slice::from_ref(gpu),
        std::slice::from_ref(&kernels),
        opts.config.clone(),
        Path::Mapped,
        &opts.modes,
    )
    .unwrap();
    sys.upload(&inputs);
    let r = experiment::measure(&mut sys, &inputs, &opts).unwrap();
    let mut what: Vec<&str> = r.samples.iter().map(|s| s.what.as_str()).collect();
    what.sort_unstable();
    what.dedup();
    assert_eq!(
        what,
        [COMM, "encoded", "fused", FUSED_COMM, FUSED_GEMM, FUSED_SEQ, GEMM, SEQ]
    );
    assert!(r.t_gemm_ms.is_finite() && r.t_gemm_untracked_ms.is_nan());
    let names: Vec<&str> = r.checks.iter().map(|c| c.name.as_str()).collect();
    assert!(names.contains(&"T_gemm <= T_seq"), "{names:?}");
    for m in &r.results {
        assert!(m.max_rel_error.is_some_and(|e| e < 1e-4), "{m:?}");
    }
}

/// Every mode `sys` can run, run once on poisoned outputs, matches the reference (`c` its
/// configuration, named where one does not).
fn every_mode_matches(sys: &mut System, inputs: &Inputs, c: &Config) {
    let order = modes::all();
    let runs: Vec<bool> = order.iter().map(|m| m.skip_reason(sys).is_none()).collect();
    let verdicts = t3_wgpu::check::check_all(sys, inputs, (&order, &runs), Verify::Full).unwrap();
    for ((m, v), runs) in order.iter().zip(verdicts).zip(runs) {
        if runs {
            let v = v.unwrap();
            assert!(v.ok(), "{} at {c:?}: {v:?}", m.name());
        }
    }
}

/// The tuner measures the configurations of one layout on one system lowered again for each: every
/// such lowering computes what the reference says on poisoned outputs, and a configuration that needs
/// other buffers (another chunk count) is refused, naming what differs.
#[test]
fn a_system_lowered_again_for_other_knobs_still_matches_the_reference() {
    let Some(gpu) = common::gpu() else { return };
    let kernels = Kernels::new(gpu).unwrap();
    let base = Config {
        chunks: 2,
        collective: Collective::AllReduce,
        ..Config::new(Shape::new(203, 131, 13).unwrap(), 3)
    };
    let mut opts = options(1);
    opts.config = base.clone();
    opts.modes = ModeKind::ALL.to_vec();
    let (mut sys, inputs) = experiment::prepare(gpu, &kernels, &opts).unwrap();
    let variants = [
        Config {
            gemm_grid: Some(1),
            ..base.clone()
        },
        Config {
            step_lead: StepLead::Workgroups(u32::MAX),
            ..base.clone()
        },
        Config {
            fused: FusedOptions {
                pause: Some(64),
                ..Default::default()
            },
            ..base.clone()
        },
        base.clone(),
    ];
    let mut seen = Vec::new();
    for c in variants {
        sys.relower(c.clone(), &ModeKind::ALL).unwrap();
        assert_eq!(
            (sys.config.gemm_grid, sys.config.step_lead),
            (c.gemm_grid, c.step_lead)
        );
        // Lowered again as a system built for `c` is.
        let fresh = System::new(gpu, &kernels, c.clone()).unwrap();
        let lowered = format!("{:?}", sys.parts[0].lowered);
        assert_eq!(lowered, format!("{:?}", fresh.parts[0].lowered), "{c:?}");
        seen.push(lowered);
        every_mode_matches(&mut sys, &inputs, &c);
    }
    // Each knob changed the recordings (the last variant, the base, lowers as the first system).
    let same: Vec<usize> = (0..3).filter(|&i| seen[i] == seen[3]).collect();
    assert!(same.is_empty(), "variants {same:?} lowered as the base");
    let other = Config {
        chunks: 1,
        ..base.clone()
    };
    let e = sys.relower(other, &ModeKind::ALL).unwrap_err().to_string();
    assert!(e.contains("chunks"), "{e}");
}

/// The tuner builds a point's next layout (another chunk count or reduce) on the last system's
/// operands, with no upload: on each collective (the all-gather's shards of A included) every mode
/// still matches the reference on poisoned outputs; a system of another shape adopts none.
#[test]
fn a_system_of_another_layout_adopts_the_operands_and_still_matches_the_reference() {
    let Some(gpu) = common::gpu() else { return };
    let kernels = Kernels::new(gpu).unwrap();
    let (gpus, sets) = (std::slice::from_ref(gpu), std::slice::from_ref(&kernels));
    for collective in Collective::ALL {
        let base = Config {
            chunks: 1,
            collective,
            ..Config::new(Shape::new(203, 131, 13).unwrap(), 3)
        };
        let mut opts = options(1);
        opts.config = base.clone();
        opts.modes = ModeKind::ALL.to_vec();
        let (sys, inputs) = experiment::prepare(gpu, &kernels, &opts).unwrap();
        let mut operands = sys.into_operands();
        let layouts = [
            Config {
                chunks: 3,
                ..base.clone()
            },
            Config {
                chunks: 2,
                via: ReduceVia::Land,
                ..base.clone()
            },
        ];
        let mut adopted = 0;
        for c in layouts.into_iter().filter(|c| c.validate().is_ok()) {
            adopted += 1;
            opts.config = c.clone();
            let mut sys =
                experiment::build_adopting(gpus, sets, &opts, Path::Mapped, operands).unwrap();
            assert!(sys.adopted_operands(), "{c:?}");
            every_mode_matches(&mut sys, &inputs, &c);
            operands = sys.into_operands();
        }
        assert!(adopted > 0, "{collective:?}: no other layout ran");
        opts.config = Config {
            shape: Shape::new(203, 131, 14).unwrap(),
            ..base
        };
        let sys = experiment::build_adopting(gpus, sets, &opts, Path::Mapped, operands).unwrap();
        assert!(!sys.adopted_operands(), "{collective:?}");
    }
}

/// Poison reaches every byte of every output, outputs larger than its NaN source included (each
/// then takes several copies): buffers start zeroed, so an element the poison missed reads 0.
#[test]
fn poison_fills_every_output_with_nan() {
    let Some(gpu) = common::gpu() else { return };
    let kernels = Kernels::new(gpu).unwrap();
    // Each rank's chunk of 1100 x 2048 f32 outputs: 9 MB, more than the 8 MiB source.
    let config = Config {
        chunks: 1,
        ..Config::new(Shape::new(2200, 2048, 1).unwrap(), 2)
    };
    let sys = System::new(gpu, &kernels, config).unwrap();
    sys.poison();
    let mut read = 0;
    for p in 0..2 {
        for x in 0..sys.chunking.count() {
            if !sys.writes(p, x) {
                continue;
            }
            let rows = sys.chunking.rows(x).len();
            let v = sys.read_rows(p, x, 0..rows).unwrap();
            let bad = v.iter().position(|f| !f.is_nan());
            assert_eq!(bad, None, "rank {p} chunk {x}: {} elements", v.len());
            read += v.len();
        }
    }
    assert_eq!(read, 2 * 2200 * 2048);
}
