//! The `t3` binary end to end: happy paths and every bad-input path with its exit code and message.

mod common;

use std::process::{Command, Output};

use common::cli::{stderr, t3_within};

fn tmp(name: &str) -> std::path::PathBuf {
    common::cli::tmp("cli", name)
}

fn t3(args: &[&str], dir: &std::path::Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_t3"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run t3")
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
        (&["run", "--sms", "0", "--shape", "8x8x8"], "1 to 65536"),
        (&["info", "--sms", "lots"], "'lots'"),
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
    // One buffer over the adapter's limit, or all of them over the memory there is (checked first
    // where the adapter's memory is the host's).
    assert!(
        e.contains("max_storage_buffer_binding_size")
            || e.contains("max_buffer_size")
            || e.contains("MemAvailable"),
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

/// A small point, its warm-up a fixed count: lavapipe's figures are noisy enough that the settle
/// test (timed in `run_writes_every_output`) would spend up to its 10 s bound on each run.
#[rustfmt::skip]
const SMALL: &[&str] = &[
    "--shape", "32x32x32", "--ranks", "2", "--reps", "1", "--warmup", "0", "--warmup-s", "0",
];

/// A small run or sweep (`cmd`), of sequential mode unless `extra` names modes.
fn small(cmd: &str, extra: &[&str], dir: &std::path::Path) -> Output {
    let mode: &[&str] = if extra.contains(&"--mode") {
        &[]
    } else {
        &["--mode", "sequential"]
    };
    let args: Vec<&str> = [cmd]
        .iter()
        .chain(SMALL)
        .chain(mode)
        .chain(extra)
        .copied()
        .collect();
    t3_within(&args, &[], dir, 120)
}

fn run_small(extra: &[&str], dir: &std::path::Path) -> Output {
    small("run", extra, dir)
}

fn assert_usage(o: &Output, needles: &[&str]) {
    let e = stderr(o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    for n in needles {
        assert!(e.contains(n), "message lacks '{n}': {e}");
    }
}

#[test]
fn devices_and_fifos_are_refused_without_reading() {
    let d = tmp("fifo");
    let fifo = d.join("fifo");
    let made = Command::new("mkfifo").arg(&fifo).status();
    let mut hostile = vec!["/dev/zero".to_string(), "/dev/full".to_string()];
    if made.is_ok_and(|s| s.success()) {
        hostile.push(fifo.to_str().unwrap().into());
    }
    for f in &hostile {
        let mut args: Vec<&str> = vec!["run"];
        args.extend(SMALL);
        args.extend(["--link-gbps", "100", "--link-table", f]);
        let o = t3_within(&args, &[], &d, 20);
        assert_usage(&o, &["link table", f, "regular file"]);
        let o = t3_within(&["plot", "--csv", f, "--svg", "p.svg"], &[], &d, 20);
        assert_usage(&o, &["sweep CSV", f, "regular file"]);
        assert!(!d.join("p.svg").exists());
    }
    // Too long to be a table: refused after a bounded read of its size.
    std::fs::write(d.join("big.json"), vec![b' '; 2 << 20]).unwrap();
    let o = run_small(&["--link-gbps", "1", "--link-table", "big.json"], &d);
    assert_usage(&o, &["at most 1048576 bytes"]);
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
fn environment_values_get_the_flags_validation() {
    let d = tmp("env");
    let mut args: Vec<&str> = vec!["run"];
    args.extend(SMALL);
    for v in ["abc", "0", "-1", "NaN", "inf", "", "1e12"] {
        let o = t3_within(&args, &[("T3_TIMEOUT_S", v)], &d, 60);
        assert_usage(&o, &["T3_TIMEOUT_S", &format!("'{v}'"), "(0, 1e9]"]);
    }
    let o = t3_within(&args, &[("WGPU_BACKEND", "nosuch")], &d, 60);
    assert_usage(&o, &["WGPU_BACKEND", "nosuch", "vulkan"]);
    assert!(!stderr(&o).contains("Backends("), "{}", stderr(&o));
    let o = t3_within(&args, &[("WGPU_POWER_PREF", "sideways")], &d, 60);
    assert_usage(&o, &["WGPU_POWER_PREF", "sideways", "high, low or none"]);
    let o = t3_within(&["info", "--backend", "vulcan"], &[], &d, 60);
    assert_usage(&o, &["vulcan"]);
    if common::gpu().is_none() {
        return;
    }
    let o = t3_within(&["info", "--adapter", "nosuch-adapter"], &[], &d, 60);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("nosuch-adapter"), "{}", stderr(&o));
    let o = t3_within(&["info", "--json"], &[("T3_TIMEOUT_S", "30")], &d, 60);
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

/// A link table with rows at 2, 4 and 8 GB/s measured on `adapter`.
fn table(dir: &std::path::Path, name: &str, adapter: &str) {
    let t = serde_json::json!({
        "adapter": adapter, "bytes": 1 << 20, "timer": "gpu timestamps",
        "rows": [
            {"workgroups": 1, "gbps": 2.0, "ms": 0.5},
            {"workgroups": 2, "gbps": 4.0, "ms": 0.25},
            {"workgroups": null, "gbps": 8.0, "ms": 0.125},
        ]
    });
    std::fs::write(dir.join(name), t.to_string()).unwrap();
}

#[test]
fn link_rates_outside_the_table_or_from_another_adapter_are_refused() {
    let d = tmp("link");
    table(&d, "other.json", "Another GPU (Metal, 1.0)");
    let o = run_small(&["--link-gbps", "0.001", "--link-table", "other.json"], &d);
    assert_usage(&o, &["0.001 GB/s", "at least 2.0"]);
    let o = run_small(&["--link-gbps", "100", "--link-table", "other.json"], &d);
    assert_usage(&o, &["100 GB/s", "at most 8.0"]);
    let Some(gpu) = common::gpu() else { return };
    let o = run_small(&["--link-gbps", "4", "--link-table", "other.json"], &d);
    assert_usage(&o, &["Another GPU", &gpu.describe(), "t3 calibrate"]);
    table(&d, "here.json", &gpu.describe());
    let o = run_small(&["--link-gbps", "3", "--link-table", "here.json"], &d);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("asked 3 GB/s, emulating 2.0 GB/s with 1 workgroups")
            || e.contains("asked 3 GB/s, emulating 4.0 GB/s with 2 workgroups"),
        "{e}"
    );
    assert!(e.contains("-33%") || e.contains("+33%"), "{e}");
}

#[test]
fn combinations_that_cannot_apply_are_usage_errors() {
    let d = tmp("combo");
    for (extra, needles) in [
        (
            &["--reduce", "forward", "--collective", "all-gather"][..],
            &["forward with all-gather"][..],
        ),
        (
            &["--reduce", "land", "--collective", "all-gather"],
            &["land with all-gather"],
        ),
        (
            &[
                "--reduce",
                "forward",
                "--collective",
                "direct-reduce-scatter",
            ],
            &["forward with direct-reduce-scatter", "ring"],
        ),
    ] {
        assert_usage(&run_small(extra, &d), needles);
    }
    let o = small("run", &["--mode", "fused", "--reduce", "land"], &d);
    assert_usage(&o, &["land with --mode fused"]);
    let o = small(
        "sweep",
        &[
            "--reduce",
            "forward",
            "--collective",
            "all-gather",
            "--csv",
            "s.csv",
        ],
        &d,
    );
    assert_usage(&o, &["forward with all-gather"]);
    assert!(!d.join("s.csv").exists());
    if common::gpu().is_none() {
        return;
    }
    // Under `all`, fused is listed as skipped with its reason; the others measure.
    let o = small(
        "run",
        &["--reduce", "land", "--json", "-", "--mode", "all"],
        &d,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let fused = &v["results"].as_array().unwrap()[3];
    assert!(fused["skipped"].as_str().unwrap().contains("update"), "{v}");
}

#[test]
fn the_total_over_ranks_is_checked_before_allocating() {
    let Some(gpu) = common::gpu() else { return };
    // Only a CPU adapter's device memory is host memory, which the check can see.
    if gpu.info.device_type != wgpu::DeviceType::Cpu {
        return;
    }
    let d = tmp("total");
    // Every single buffer fits (64 MiB outputs per chunk); all 64 ranks' together need 256 GiB.
    let o = t3_within(
        &[
            "run",
            "--shape",
            "65536x16384x16",
            "--ranks",
            "64",
            "--reps",
            "1",
            "--warmup",
            "0",
            "--warmup-s",
            "0",
        ],
        &[],
        &d,
        120,
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("64 ranks") && e.contains("MemAvailable") && e.contains("bytes"),
        "{e}"
    );
}

#[test]
fn outputs_are_checked_before_any_gpu_work() {
    let d = tmp("paths");
    for (extra, needles) in [
        (&["--json", "nodir/x.json"][..], &["--json", "nodir"][..]),
        (&["--svg", "nodir/x.svg"], &["--svg", "nodir"]),
        (&["--dump", ""], &["--dump", "directory path"]),
        (
            &["--json", "x", "--csv", "./x"],
            &["--json writes there too"],
        ),
        (&["--json", "-", "--csv", "-"], &["standard output"]),
        (&["--trace", "."], &["directory"]),
    ] {
        assert_usage(&run_small(extra, &d), needles);
    }
    let o = t3_within(
        &[
            "sweep",
            "--shape",
            "8x8x8",
            "--reps",
            "1",
            "--csv",
            "nodir/s.csv",
        ],
        &[],
        &d,
        60,
    );
    assert_usage(&o, &["--csv", "nodir"]);
    let o = t3_within(&["calibrate", "--out", "nodir/t.json"], &[], &d, 60);
    assert_usage(&o, &["--out", "nodir"]);
    let o = t3_within(&["calibrate", "--out", "-"], &[], &d, 60);
    assert_usage(&o, &["--out", "a file path"]);
    let o = t3_within(
        &["plot", "--csv", "none.csv", "--svg", "nodir/p.svg"],
        &[],
        &d,
        60,
    );
    assert_usage(&o, &["--svg", "nodir"]);
    assert_eq!(std::fs::read_dir(&d).unwrap().count(), 0, "nothing written");
}

#[test]
fn counts_are_bounded_and_lists_forgiving() {
    let d = tmp("counts");
    for (flag, v) in [
        ("--reps", "1000000000000"),
        ("--warmup", "10001"),
        ("--chunks", "99999999999"),
    ] {
        let mut args: Vec<&str> = vec!["run", "--shape", "8x8x8"];
        args.extend([flag, v]);
        assert_usage(&t3_within(&args, &[], &d, 60), &[v]);
    }
    let o = t3_within(
        &[
            "sweep",
            "--shape",
            "64x64x64",
            "--chunks",
            "1,2,3,4,5,6,7,8,9,10",
            "--link-workgroups",
            "1,2,3,4,5,6,7,8,9,10",
            "--arbitrate",
            "1,2,3,4,5,6,7,8,9,10",
            "--step-lead",
            "0,1,2,3,4,5,6,7,8,9,10",
            "--ranks",
            "1,2,3,4,5,6,7,8,9,10",
        ],
        &[],
        &d,
        60,
    );
    assert_usage(&o, &["110000 points", "at most 100000"]);
    // `all` inside a list, and repeats, are every mode once.
    let o = t3_within(
        &[
            "run",
            "--shape",
            "8x8x8",
            "--mode",
            "all,all,host",
            "--reps",
            "0",
        ],
        &[],
        &d,
        60,
    );
    assert_usage(&o, &["--reps"]);
    assert!(!stderr(&o).contains("unknown mode"), "{}", stderr(&o));
}

#[test]
fn errors_name_the_file_once_and_plot_refuses_what_it_cannot_draw() {
    let d = tmp("plot");
    let o = t3_within(
        &["plot", "--csv", "none.csv", "--svg", "p.svg"],
        &[],
        &d,
        60,
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(
        stderr(&o).matches("os error 2").count(),
        1,
        "{}",
        stderr(&o)
    );
    let o = t3_within(
        &["plot", "--csv", "s.csv", "--x", "nosuch", "--svg", "p.svg"],
        &[],
        &d,
        60,
    );
    assert_usage(&o, &["nosuch", "ranks", "chunks"]);
    std::fs::write(
        d.join("s.csv"),
        "workload,ranks,mode,speedup,overlap_efficiency,skipped\nw,2,error,,,\"invalid rank count: 9\"\n",
    )
    .unwrap();
    let o = t3_within(&["plot", "--csv", "s.csv", "--svg", "p.svg"], &[], &d, 60);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("failed points"), "{}", stderr(&o));
    assert!(!d.join("p.svg").exists());
    // `--svg -` is standard output, as everywhere.
    std::fs::write(
        d.join("s.csv"),
        "workload,ranks,mode,speedup,overlap_efficiency\nw,2,host,1.1,0.2\nw,4,host,1.2,0.3\n",
    )
    .unwrap();
    let o = t3_within(&["plot", "--csv", "s.csv", "--svg", "-"], &[], &d, 60);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(o.stdout.starts_with(b"<svg"));
    assert!(!d.join("-").exists());
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
        stderr(&o).contains("sweep: 1 points x 1 modes"),
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
    assert!(stderr(&o).contains("1 point(s) left out"), "{}", stderr(&o));
    assert_eq!(
        orders(&o),
        ["stage", "stage", "stage", "stage", "chunk", "chunk"]
    );
}

#[test]
fn calibrate_devices_measures_the_host_link_and_refuses_bad_devices() {
    let d = tmp("calibrate-devices");
    let o = t3_within(&["calibrate", "--devices", "0"], &[], &d, 60);
    assert_usage(&o, &["device count", "0"]);
    let o = t3_within(&["calibrate", "--devices", "1,x"], &[], &d, 60);
    assert_usage(&o, &["1,x"]);
    let stream_mib = |mib| {
        t3_within(
            &["calibrate", "--devices", "2", "--stream-mib", mib],
            &[],
            &d,
            60,
        )
    };
    assert_usage(
        &stream_mib("4097"),
        &["--stream-mib", "'4097'", "between 1 and 4096"],
    );
    assert_usage(&stream_mib("0"), &["--stream-mib", "at least 1"]);
    let o = t3_within(&["calibrate", "--stream-mib", "8"], &[], &d, 60);
    assert_usage(&o, &["--devices"]);
    if common::gpu().is_none() {
        return;
    }
    let o = t3_within(&["info"], &[], &d, 60);
    assert!(
        String::from_utf8_lossy(&o.stdout).starts_with("0: "),
        "{}",
        stderr(&o)
    );
    let o = t3_within(&["calibrate", "--devices", "63,"], &[], &d, 60);
    assert_usage(&o, &["device index", "63", "t3 info"]);
    let o = t3_within(&["calibrate", "--devices", "1"], &[], &d, 60);
    assert_usage(&o, &["device count", "at least 2"]);
    // The streamed rows: 8 MiB a direction in chunks of the largest size, three submissions queued
    // per device through six slots.
    let args = [
        "calibrate",
        "--devices",
        "2",
        "--mib",
        "1",
        "--reps",
        "1",
        "--stream-mib",
        "8",
        "--host-loop",
        "in-flight=3",
    ];
    let o = t3_within(&args, &[], &d, 120);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("device 1:") && text.contains("1->0"),
        "{text}"
    );
    let saved = std::fs::read_to_string(d.join("t3-hostlink.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&saved).unwrap();
    assert!(!v["rows"].as_array().unwrap().is_empty(), "{saved}");
    let streams = v["streams"].as_array().unwrap();
    assert_eq!(streams.len(), 3, "{saved}");
    for st in streams {
        assert_eq!(
            (&st["bytes"], &st["chunks"], &st["slots"], &st["in_flight"]),
            (&(1 << 20).into(), &8.into(), &6.into(), &3.into()),
            "{saved}"
        );
    }
    // A run on these devices reads its links' rates against the table: the share of the slowest
    // direction both ways at once (the last streamed row).
    let both = streams[2]["gbps"].as_array().unwrap();
    let slowest = both
        .iter()
        .map(|g| g.as_f64().unwrap())
        .fold(f64::MAX, f64::min);
    let quick = "--mode sequential --reps 1 --warmup 0 --warmup-s 0";
    let run: Vec<String> = format!("run --shape 16x8x8 --ranks 2 --devices 2 {quick} --verbose")
        .split(' ')
        .map(String::from)
        .collect();
    let json = d.join("r.json");
    // Each run succeeds, whatever the table says.
    let t3_run = |extra: &[&str]| {
        let mut v: Vec<&str> = run.iter().map(String::as_str).collect();
        v.extend(extra);
        v.extend(["--json", json.to_str().unwrap()]);
        let o = t3_within(&v, &[], &d, 120);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        o
    };
    let o = t3_run(&[]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains(" GB/s t3-hostlink.json streamed with every link busy"),
        "{text}"
    );
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let c = &r["link_calibration"];
    assert_eq!(c["file"], "t3-hostlink.json", "{c}");
    assert_eq!(c["streamed_gbps"].as_f64(), Some(slowest), "{c}");
    // A table whose streams read far below what the collective moved: the report says one of the
    // two figures is wrong rather than print a share above 1 as if it were one.
    let mut slow: serde_json::Value = serde_json::from_str(&saved).unwrap();
    for st in slow["streams"].as_array_mut().unwrap() {
        st["gbps"] = serde_json::json!([1e-9, 1e-9]);
    }
    let table = d.join("t3-hostlink.json");
    std::fs::write(&table, slow.to_string()).unwrap();
    let o = t3_run(&[]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("; ABOVE the 1.00e-9 GB/s t3-hostlink.json streamed with every link busy: one of the two figures is wrong"),
        "{text}"
    );
    // Other devices, another path, or a file that is no table: the run goes on and says why its
    // links are not read against it.
    let o = t3_within(
        &format!("run --shape 16x8x8 --ranks 3 --devices 3 {quick}")
            .split(' ')
            .collect::<Vec<_>>(),
        &[],
        &d,
        120,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains("not read against t3-hostlink.json: it calibrated device 0: "));
    let o = t3_run(&["--link-path", "mapped"]);
    assert!(
        stderr(&o).contains("it calibrated the links on another path"),
        "{}",
        stderr(&o)
    );
    std::fs::write(&table, "not a table").unwrap();
    let o = t3_run(&[]);
    assert!(
        stderr(&o).contains("not read against t3-hostlink.json: invalid host link table"),
        "{}",
        stderr(&o)
    );
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert!(
        r["link_calibration"].is_null() && r["links"].is_array(),
        "{r}"
    );
}

#[test]
fn host_loop_knobs_are_validated() {
    if common::gpu().is_none() {
        return;
    }
    let d = tmp("host-in-flight");
    let args: Vec<&str> = ["run"]
        .iter()
        .chain(SMALL)
        .chain(&["--mode", "host"])
        .copied()
        .collect();
    let with = |knobs: &'static str| -> Vec<&str> {
        args.iter().copied().chain(["--host-loop", knobs]).collect()
    };
    let o = t3_within(&with("in-flight=0"), &[], &d, 120);
    assert_usage(&o, &["--host-loop in-flight", "'0'", "1 to 16"]);
    let o = t3_within(&with("in-flight=3"), &[], &d, 120);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = t3_within(&with("grain=tile"), &[], &d, 120);
    assert_usage(&o, &["--host-loop grain", "'tile'", "auto, chunk, stage"]);
    let o = t3_within(&with("grain=chunk"), &[], &d, 120);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // A retired variable is named in a warning with the flag that took its place.
    let o = t3_within(&args, &[("T3_HOST_GRAIN", "chunk")], &d, 120);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains("T3_HOST_GRAIN") && stderr(&o).contains("--host-loop"));
}
