//! What a run, sweep, demo and dump write and say: every output file, the rows and their columns.

use super::*;

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
    // Which host links each adapter can take.
    for a in v.as_array().unwrap() {
        assert!(a["imports_host_memory"].is_boolean(), "{a}");
        assert!(a["transfer_queues"].as_u64().is_some_and(|n| n <= 2), "{a}");
    }
    let o = t3(&["info"], &d);
    assert!(String::from_utf8_lossy(&o.stdout).contains("  host links    "));
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

#[test]
fn a_closed_stdout_ends_quietly() {
    if common::gpu().is_none() {
        return;
    }
    use std::io::BufRead;
    let d = tmp("pipe");
    let mut child = Command::new(env!("CARGO_BIN_EXE_t3"))
        .args([
            "sweep",
            "--shape",
            "64x64x64",
            "--ranks",
            "1,2,4",
            "--reps",
            "1",
            "--warmup",
            "0",
            "--warmup-s",
            "0",
            "--mode",
            "sequential",
        ])
        .current_dir(&d)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(first.starts_with("workload,"), "{first}");
    // The reader is gone (as `| head -1` leaves it): the next row meets a broken pipe.
    let o = child.wait_with_output().unwrap();
    assert!(!stderr(&o).contains("panicked"), "{}", stderr(&o));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn known_multiprocessors_give_fused_mode_its_paying_defaults() {
    let d = tmp("sms");
    let mut args: Vec<&str> = vec!["run"];
    args.extend(SMALL);
    for v in ["0", "abc", "-3", "70000"] {
        let o = t3_within(&args, &[("T3_SMS", v)], &d, 60);
        assert_usage(&o, &["T3_SMS", &format!("'{v}'"), "1 to 65536"]);
    }
    if common::gpu().is_none() {
        return;
    }
    let o = t3_within(&["info"], &[("T3_SMS", "7")], &d, 60);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("multiprocessors 7"), "{text}");
    // Four multiprocessors named: the spares trigger from their own dispatch, two per SM (lavapipe
    // runs the SIMT kernel: two GEMM workgroups per SM) dispatched before the GEMM, which runs a
    // workgroup per tile; the result still matches the f64 reference and every tracker.
    let json = d.join("sms.json");
    // Fused mode alone on `shape` and `ranks` with `env`: its report's JSON.
    let fused_run = |shape: &str, ranks: &str, knobs: &str| -> serde_json::Value {
        let args = [
            "run",
            "--fused",
            knobs,
            "--shape",
            shape,
            "--ranks",
            ranks,
            "--chunks",
            "2",
            "--mode",
            "fused",
            "--reps",
            "1",
            "--warmup",
            "0",
            "--warmup-s",
            "0",
            "--json",
            json.to_str().unwrap(),
        ];
        let o = t3_within(&args, &[("T3_SMS", "4")], &d, 240);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap()
    };
    let v = fused_run("96x64x40", "4", "");
    let config = v["fused_config"].as_str().unwrap();
    assert!(
        config.contains("trigger the spares")
            && config.contains("spares 8 of their own dispatch before the GEMM's; GEMM grid off"),
        "{config}"
    );
    let results = v["results"].as_array().unwrap();
    let fused = results.iter().find(|m| m["mode"] == "fused").unwrap();
    assert!(fused["max_rel_error"].as_f64().unwrap() < 1e-5, "{fused}");
    assert_eq!(fused["trackers_ok"], true, "{fused}");
    // A knob that chooses the epilogue gets that configuration's counts, not the spares trigger's.
    let v = fused_run("32x32x32", "2", "trigger=epilogue");
    let config = v["fused_config"].as_str().unwrap();
    assert!(
        config.contains("trigger the GEMM's epilogue")
            && config.contains("spares auto in the GEMM's dispatch")
            && config.contains("grid off"),
        "{config}"
    );
}

/// One rank moves nothing: T_seq is T_gemm, so there is no room to overlap. Every row says so, not
/// that a check failed, and leaves its overlap efficiency empty.
#[test]
fn one_rank_has_no_room_to_overlap() {
    if common::gpu().is_none() {
        return;
    }
    let d = tmp("one-rank");
    let args = [
        "run",
        "--shape",
        "48x40x24",
        "--ranks",
        "1",
        "--reps",
        "3",
        "--warmup",
        "0",
        "--warmup-s",
        "0",
        "--mode",
        "sequential,encoded",
    ];
    let o = t3_within(&args, &[], &d, 120);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    let (eff, rows) = common::mode_rows(&text);
    assert_eq!(rows.len(), 2, "{text}");
    for row in rows {
        assert!(row.ends_with("no room to overlap"), "{row}");
        assert_eq!(row[..eff].trim_end().chars().last(), Some('-'), "{row}");
    }
    // Said apart from failed checks. A CPU adapter's times of a 0.3 ms run, beside the other tests
    // sharing its cores, can spread past the stability bound or put one baseline's median past
    // another's by more than their noise (checks that fail on timing, said with the figures):
    // any failed check must be one of those.
    assert!(text.contains("\nno room to overlap ("), "{text}");
    if let Some(at) = text.find("checks failed") {
        let failed = text[at..]
            .lines()
            .skip(1)
            .take_while(|l| l.starts_with("  "));
        for line in failed {
            assert!(
                line.starts_with("  spread ") || line.contains(" ms, noise "),
                "a check other than a timing one failed: {text}"
            );
        }
    }
}

#[test]
fn run_and_sweep_csv_share_columns_and_dumps_hold_one_run() {
    if common::gpu().is_none() {
        return;
    }
    let d = tmp("csvdump");
    let o = t3_within(
        &[
            "run",
            "--shape",
            "32x32x32",
            "--ranks",
            "3",
            "--reps",
            "1",
            "--warmup",
            "0",
            "--warmup-s",
            "0",
            "--mode",
            "sequential",
            "--dump",
            "dump",
            "--csv",
            "r.csv",
        ],
        &[],
        &d,
        120,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(d.join("dump/rank2_out.npy").exists());
    // Fewer ranks into the same directory: rank 2's files go; meta.json says what made the rest.
    let o = run_small(
        &[
            "--dump",
            "dump",
            "--mode",
            "sequential,encoded",
            "--reduce",
            "land",
            "--csv",
            "-",
        ],
        &d,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(!d.join("dump/rank2_out.npy").exists());
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("dump/meta.json")).unwrap()).unwrap();
    assert_eq!(meta["mode"], "encoded", "{meta}");
    assert_eq!(meta["dtype"], "f32", "{meta}");
    assert_eq!(meta["reduce_via"], "land", "{meta}");
    // --csv - is standard output, and nothing else goes there.
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.starts_with("workload,adapter,"), "{stdout}");
    assert_eq!(stdout.lines().count(), 3, "{stdout}");
    let o = small("sweep", &["--mode", "sequential", "--csv", "s.csv"], &d);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("sweep: 1 point x 1 mode (estimate"),
        "{}",
        stderr(&o)
    );
    let head = |f: &str| {
        std::fs::read_to_string(d.join(f))
            .unwrap()
            .lines()
            .next()
            .unwrap()
            .to_string()
    };
    assert_eq!(head("r.csv"), head("s.csv"));
    let row = |f: &str| {
        std::fs::read_to_string(d.join(f))
            .unwrap()
            .lines()
            .nth(1)
            .unwrap()
            .split(',')
            .next()
            .unwrap()
            .to_string()
    };
    assert_eq!(row("r.csv"), row("s.csv"), "one workload name in both");
}

/// Each CSV row says the GEMM order it ran, as `--order` takes it: run and sweep alike.
#[test]
fn csv_rows_say_the_gemm_order() {
    if common::gpu().is_none() {
        return;
    }
    let d = tmp("csvorder");
    let orders = |o: &Output| -> Vec<String> {
        assert_eq!(o.status.code(), Some(0), "{}", stderr(o));
        let mut r = csv::Reader::from_reader(o.stdout.as_slice());
        let h = r.headers().unwrap().clone();
        let i = h
            .iter()
            .position(|x| x == "order")
            .expect("an order column");
        r.records().map(|x| x.unwrap()[i].to_string()).collect()
    };
    let modes = ["--mode", "sequential,encoded", "--csv", "-"];
    let chunk = ["--order", "chunk", "--chunks", "2"];
    for cmd in ["run", "sweep"] {
        let given: Vec<&str> = modes.iter().chain(&chunk).copied().collect();
        assert_eq!(orders(&small(cmd, &given, &d)), ["chunk", "chunk"], "{cmd}");
        assert_eq!(orders(&small(cmd, &modes, &d)), ["stage", "stage"], "{cmd}");
    }
    // A sweep over both orders: each chunk count in each, but the chunk order at 1 chunk per rank,
    // which it cannot take (left out, and said).
    let swept: Vec<&str> = modes
        .iter()
        .chain(&["--order", "stage,chunk", "--chunks", "1,2"])
        .copied()
        .collect();
    let o = small("sweep", &swept, &d);
    assert!(
        stderr(&o).contains("sweep: 1 point left out"),
        "{}",
        stderr(&o)
    );
    assert_eq!(
        orders(&o),
        ["stage", "stage", "stage", "stage", "chunk", "chunk"]
    );
}
