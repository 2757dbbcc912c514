//! The `t3` binary end to end: happy paths and every bad-input path with its exit code and message.

mod common;

use std::process::{Command, Output};

fn t3(args: &[&str], dir: &std::path::Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_t3"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run t3")
}

fn tmp(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("t3-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn usage_errors_exit_2_naming_the_value() {
    let d = tmp("usage");
    let cases: &[(&[&str], &str)] = &[
        (&["run", "--preset", "tnlg-fc2-tp7"], "tnlg-fc2-tp7"),
        (
            &["run", "--shape", "8x8x8", "--collective", "all-scatter"],
            "all-scatter",
        ),
        (&["run", "--shape", "0x8x8"], "M = 0"),
        (&["run", "--shape", "axbxc"], "axbxc"),
        (&["run", "--shape", "8x8x8", "--reps", "many"], "many"),
        (&["run", "--shape", "8x8x8", "--chunks", "0"], "at least 1"),
        (&["run", "--shape", "8x8x8", "--ranks", "65"], "65"),
        (&["run", "--shape", "8x8x8", "--mode", "warp"], "warp"),
        (&["run", "--shape", "8x8x8", "--step-lead", "-3"], "-3"),
        (
            &["sweep", "--shape", "8x8x8", "--step-lead", "0,soon"],
            "soon",
        ),
        (&["presets", "--scale", "2"], "'2'"),
        (&["run", "--timeout", "1e20", "--shape", "8x8x8"], "1e20"),
        (
            &["run", "--backend", "vulcan", "--shape", "8x8x8"],
            "vulcan",
        ),
        (&["frobnicate"], "frobnicate"),
    ];
    for (args, needle) in cases {
        let o = t3(args, &d);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(
            stderr(&o).contains(needle),
            "{args:?}: message lacks '{needle}': {}",
            stderr(&o)
        );
    }
    let o = t3(&["run", "--preset", "tnlg-fc2-tp7"], &d);
    assert!(
        stderr(&o).contains("did you mean tnlg-fc2-tp8"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn ranks_that_do_not_fit_are_usage_errors() {
    if common::gpu().is_none() {
        return;
    }
    let d = tmp("fit");
    let o = t3(&["run"], &d);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--shape MxNxK or --preset"),
        "{}",
        stderr(&o)
    );
    let o = t3(&["run", "--shape", "3x8x8", "--ranks", "4"], &d);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("rank count: 4") && stderr(&o).contains("3 rows"),
        "{}",
        stderr(&o)
    );
    let o = t3(
        &["run", "--shape", "8x8x8", "--ranks", "2", "--chunks", "5"],
        &d,
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("chunks per rank: 5"), "{}", stderr(&o));
}

#[test]
fn shapes_beyond_the_adapter_exit_1_naming_the_limit() {
    if common::gpu().is_none() {
        return;
    }
    let d = tmp("big");
    let o = t3(
        &[
            "run",
            "--shape",
            "200000x200000x1",
            "--ranks",
            "2",
            "--reps",
            "1",
        ],
        &d,
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("max_storage_buffer_binding_size") || e.contains("max_buffer_size"),
        "{e}"
    );
    assert!(e.contains("--scale"), "{e}");
}

#[test]
fn run_writes_every_output() {
    if common::gpu().is_none() {
        return;
    }
    let d = tmp("run");
    let o = t3(
        &[
            "run",
            "--shape",
            "70x33x20",
            "--ranks",
            "3",
            "--chunks",
            "2",
            "--collective",
            "all-reduce",
            "--reps",
            "1",
            "--warmup",
            "0",
            "--warmup-s",
            "0.5",
            "--json",
            "-",
            "--csv",
            "r.csv",
            "--trace",
            "t.json",
            "--svg",
            "g.svg",
            "--dump",
            "dump",
        ],
        &d,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value =
        serde_json::from_slice(&o.stdout).expect("stdout is only the JSON report");
    let results = v["results"].as_array().unwrap();
    assert_eq!(results.len(), 4, "{v}");
    for r in results {
        if r["skipped"].is_null() {
            assert!(r["max_rel_error"].as_f64().unwrap() <= 1e-5, "{r}");
            assert!(r["median_ms"].as_f64().unwrap() > 0.0, "{r}");
        }
    }
    for key in ["t_gemm_ms", "t_comm_ms", "t_seq_ms", "ideal_ms"] {
        assert!(v[key].as_f64().unwrap() > 0.0, "{key}: {v}");
    }
    // Spreads beside the medians, the warm-up's outcome, the checks and every rep's raw sample.
    for key in ["t_gemm_spread", "t_comm_spread", "t_seq_spread"] {
        let s = &v[key];
        assert!(
            s["lo"].as_f64().unwrap() <= s["hi"].as_f64().unwrap(),
            "{key}: {s}"
        );
    }
    assert!(v["attempts"].as_u64().unwrap() >= 1);
    assert!(!v["checks"].as_array().unwrap().is_empty());
    for w in v["warmups"].as_array().unwrap() {
        assert!(w["runs"].as_u64().unwrap() >= 1, "{w}");
    }
    for s in v["samples"].as_array().unwrap() {
        let reps = s["reps"].as_array().unwrap();
        assert_eq!(reps.len(), 1, "{s}");
        assert!(reps[0]["at_s"].as_f64().unwrap() > 0.0, "{s}");
    }
    let csv = std::fs::read_to_string(d.join("r.csv")).unwrap();
    assert_eq!(csv.lines().count(), 5, "{csv}");
    let trace: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("t.json")).unwrap()).unwrap();
    assert!(!trace["traceEvents"].as_array().unwrap().is_empty());
    assert!(std::fs::read_to_string(d.join("g.svg"))
        .unwrap()
        .starts_with("<svg"));
    for p in 0..3 {
        for f in ["a", "b", "out"] {
            let bytes = std::fs::read(d.join(format!("dump/rank{p}_{f}.npy"))).unwrap();
            assert_eq!(&bytes[..6], b"\x93NUMPY", "rank{p}_{f}.npy");
        }
    }
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("dump/meta.json")).unwrap()).unwrap();
    assert_eq!(meta["chunk_bounds"].as_array().unwrap().len(), 3 * 2 + 1);
}

#[test]
fn demo_presets_and_info() {
    let d = tmp("demo");
    let o = t3(&["presets"], &d);
    assert_eq!(o.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&o.stdout).contains("tnlg-fc2-tp8"));
    if common::gpu().is_none() {
        return;
    }
    let o = t3(&["info", "--json"], &d);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(!v.as_array().unwrap().is_empty());
    let o = t3(&[], &d);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    for f in ["t3-timeline.svg", "t3-trace.json", "t3-results.json"] {
        assert!(d.join(f).exists(), "{f} missing");
    }
    assert!(String::from_utf8_lossy(&o.stdout).contains("encoded"));
}

#[test]
fn sweep_writes_a_row_per_point_and_mode() {
    if common::gpu().is_none() {
        return;
    }
    let d = tmp("sweep");
    let o = t3(
        &[
            "sweep",
            "--shape",
            "40x16x8",
            "--ranks",
            "2,4",
            "--chunks",
            "1,2",
            "--reps",
            "1",
            "--warmup",
            "0",
            "--warmup-s",
            "0.2",
            "--csv",
            "s.csv",
        ],
        &d,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let csv = std::fs::read_to_string(d.join("s.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 2 * 2 * 4, "{csv}");
    assert!(csv.lines().skip(1).all(|l| !l.contains(",error,")), "{csv}");
    // Not a terminal: plain progress lines, one per point.
    assert_eq!(
        stderr(&o).lines().filter(|l| l.starts_with('[')).count(),
        4,
        "{}",
        stderr(&o)
    );
}
