//! Bad input: every usage error and refusal, with its exit code and the value and limit it names.

use super::*;

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
    // The link table's copies past what one buffer binds: refused naming --mib and the limit, not
    // clamped to it without a word; no table written.
    let o = t3_within(&["calibrate", "--mib", "4096", "--reps", "1"], &[], &d, 60);
    assert_usage(
        &o,
        &[
            "--mib",
            "4096",
            "MiB on these devices",
            "max_storage_buffer_binding_size",
        ],
    );
    assert!(!d.join("t3-link.json").exists(), "no table written");
    // The library's own bound, where it is called past it.
    let gpu = common::gpu().unwrap();
    let kernel = t3_wgpu::steps::StepKernel::new(gpu).unwrap();
    let past = t3_wgpu::link::largest_copy(gpu) + 16;
    let e = t3_wgpu::link::calibrate(gpu, &kernel, past, 1)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains(&format!("{past} bytes")) && e.contains("max_buffer_size"),
        "{e}"
    );
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
        // A preset's knobs beside a shape: nothing they could shrink.
        (
            &["--scale", "0.5"],
            &["'--shape <SHAPE>' cannot be used with '--scale"],
        ),
        (
            &["--tokens", "5"],
            &["'--shape <SHAPE>' cannot be used with '--tokens"],
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
    // Named alone and skipped where it lowers (not by the flags' check): nothing asked for ran, a
    // failure that says why after the report.
    let o = small(
        "run",
        &[
            "--mode",
            "fused",
            "--fused",
            "trigger=spares",
            "--tune",
            "off",
        ],
        &d,
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("every mode named was skipped (fused: --fused trigger"),
        "{}",
        stderr(&o)
    );
    assert!(String::from_utf8_lossy(&o.stdout).contains("skipped"));
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
fn host_loop_knobs_are_validated() {
    if common::gpu().is_none() {
        return;
    }
    let d = tmp("host-in-flight");
    // `t3 run` of SMALL timing `mode`.
    let timing = |mode: &'static str| -> Vec<&str> {
        ["run"]
            .iter()
            .chain(SMALL)
            .chain(&["--mode", mode])
            .copied()
            .collect()
    };
    let args = timing("host");
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
    // A mode's knobs where the run times no such mode are said, and the run goes on.
    let seq = timing("sequential");
    for (flag, knobs, mode) in [
        ("--host-loop", "grain=chunk", "host"),
        ("--fused", "spares=2", "fused"),
    ] {
        let args: Vec<&str> = seq.iter().copied().chain([flag, knobs]).collect();
        let o = t3_within(&args, &[], &d, 120);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let said = format!("{flag} configures {mode} mode, which this run does not time");
        assert!(stderr(&o).contains(&said), "{}", stderr(&o));
    }
    // Where the run times host mode, no such note.
    let o = t3_within(&with("grain=chunk"), &[], &d, 120);
    assert!(!stderr(&o).contains("does not time"), "{}", stderr(&o));
}
