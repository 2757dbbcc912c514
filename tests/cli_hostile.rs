//! Hostile input as a careless user gives it (issue 41): outputs that name an input or each other,
//! paths that cannot be written, a closed standard output, bad environment values. Each case says
//! what it expects (exit 2 before any GPU work for a bad input) and that no file but the declared
//! outputs changed.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use common::cli::{stderr, t3_within as t3};

fn tmp(name: &str) -> PathBuf {
    common::cli::tmp("hostile", name)
}

const S: &[&str] = &[
    "--shape",
    "64x48x32",
    "--ranks",
    "2",
    "--reps",
    "1",
    "--warmup",
    "0",
    "--warmup-s",
    "0",
    "--mode",
    "sequential",
];

fn run<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    ["run"].iter().chain(S).chain(extra).copied().collect()
}

/// Every entry under `dir` (links not followed) with its kind and bytes.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, (String, Vec<u8>)> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let m = std::fs::symlink_metadata(&p).unwrap();
            let t = m.file_type();
            let v = if t.is_symlink() {
                (
                    "link".into(),
                    std::fs::read_link(&p)
                        .unwrap()
                        .into_os_string()
                        .into_encoded_bytes(),
                )
            } else if t.is_dir() {
                stack.push(p.clone());
                ("dir".into(), Vec::new())
            } else if t.is_file() {
                ("file".into(), std::fs::read(&p).unwrap())
            } else {
                ("other".into(), Vec::new())
            };
            out.insert(p, v);
        }
    }
    out
}

/// Exit 2 naming every needle, and nothing under `dir` changed.
fn refused(dir: &Path, args: &[&str], env: &[(&str, &str)], needles: &[&str]) {
    let before = snapshot(dir);
    let o = t3(args, env, dir, 60);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{env:?} t3 {args:?}: {e}");
    assert!(!e.contains("panicked"), "{e}");
    for n in needles {
        assert!(
            e.contains(n),
            "{env:?} t3 {args:?}: message lacks '{n}': {e}"
        );
    }
    assert_eq!(
        snapshot(dir),
        before,
        "{env:?} t3 {args:?} changed files: {e}"
    );
}

fn fifo(path: &Path) -> bool {
    Command::new("mkfifo")
        .arg(path)
        .status()
        .is_ok_and(|s| s.success())
}

#[test]
fn outputs_never_replace_inputs_or_each_other() {
    let d = tmp("same");
    std::fs::write(
        d.join("keepme.csv"),
        "workload,ranks,mode,speedup,overlap_efficiency\nw,2,host,1.1,0.2\n",
    )
    .unwrap();
    std::fs::create_dir(d.join("w")).unwrap();
    // 1: plot's SVG onto its own CSV, however spelled.
    for svg in ["keepme.csv", "./w/../keepme.csv"] {
        refused(
            &d,
            &["plot", "--csv", "keepme.csv", "--svg", svg],
            &[],
            &["--csv reads that file"],
        );
    }
    // 2: the link table, and the kernel source `--kernel-wgsl` names.
    std::fs::write(d.join("tbl.json"), "{}").unwrap();
    refused(
        &d,
        &run(&[
            "--link-gbps",
            "2",
            "--link-table",
            "tbl.json",
            "--json",
            "tbl.json",
        ]),
        &[],
        &["--json", "--link-table reads that file"],
    );
    std::fs::write(d.join("k.wgsl"), "// kernel").unwrap();
    refused(
        &d,
        &run(&["--svg", "k.wgsl", "--kernel-wgsl", "simt=k.wgsl"]),
        &[],
        &["--kernel-wgsl simt reads that file"],
    );
    // 3: two outputs on one file through a symbolic or a hard link.
    std::fs::write(d.join("t.json"), "keep").unwrap();
    std::os::unix::fs::symlink("t.json", d.join("l.json")).unwrap();
    std::fs::hard_link(d.join("t.json"), d.join("h.json")).unwrap();
    for other in ["l.json", "h.json"] {
        refused(
            &d,
            &run(&["--json", "t.json", "--csv", other]),
            &[],
            &["--json writes there too"],
        );
    }
    // 4: a file the dump writes, whether its directory exists or not.
    for _ in 0..2 {
        refused(
            &d,
            &run(&["--dump", "dd", "--json", "dd/meta.json"]),
            &[],
            &["--dump writes that file"],
        );
        refused(
            &d,
            &run(&["--dump", "dd", "--svg", "dd/rank1_out.npy"]),
            &[],
            &["--dump writes that file"],
        );
        std::fs::create_dir_all(d.join("dd")).unwrap();
        std::fs::write(d.join("dd/rank1_out.npy"), "old").unwrap();
    }
    std::fs::hard_link(d.join("dd/rank1_out.npy"), d.join("x.npy")).unwrap();
    refused(
        &d,
        &run(&["--csv", "x.npy", "--dump", "dd"]),
        &[],
        &["--csv writes x.npy, a link to one"],
    );
}

#[test]
fn unwritable_outputs_are_refused_before_any_gpu_work() {
    let d = tmp("unwritable");
    std::os::unix::fs::symlink("nodir/x.json", d.join("dangling.json")).unwrap();
    // 6
    for (flag, path, needle) in [
        ("--json", "out.json/", "names a directory"),
        ("--json", "/sys/new.json", "can be written"),
        ("--json", "/proc/new.json", "can be written"),
        ("--dump", "/sys/newdir", "can be written"),
        ("--json", "dangling.json", "existing directory"),
        ("--json", "/dev/full", "a device"),
    ] {
        refused(&d, &run(&[flag, path]), &[], &[flag, path, needle]);
    }
    refused(
        &d,
        &["calibrate", "--out", "cal.json/"],
        &[],
        &["--out", "names a directory"],
    );
    let sweep: Vec<&str> = ["sweep"]
        .iter()
        .chain(S)
        .chain(&["--csv", "new.csv/"])
        .copied()
        .collect();
    refused(&d, &sweep, &[], &["--csv", "names a directory"]);
    // 12: a FIFO is never opened for writing (the open would wait for a reader forever).
    if fifo(&d.join("f")) {
        refused(&d, &run(&["--json", "f"]), &[], &["--json", "FIFO"]);
        refused(&d, &["calibrate", "--out", "f"], &[], &["--out", "FIFO"]);
    }
}

#[test]
fn bad_environment_values_are_usage_errors_before_any_gpu_work() {
    let d = tmp("env");
    let r = run(&[]);
    // 13: fused mode's knobs (once variables, now `--fused`), each checked with its own rules.
    for (k, v) in [
        ("pieces", "x"),
        ("pieces", "0"),
        ("spares", "x"),
        ("polls", "-1"),
        ("window", "0"),
        ("grid", "x"),
        ("pause", "soon"),
        ("pause", "1048577"),
        ("help", "x"),
        ("trigger", "epilogue!"),
        ("land", "x"),
        ("spares-at", "x"),
        ("spare-dispatch", "x"),
        ("put", "x"),
        ("alias", "x"),
    ] {
        let knob = format!("{k}={v}");
        let args: Vec<&str> = r.iter().copied().chain(["--fused", &knob]).collect();
        refused(
            &d,
            &args,
            &[],
            &[&format!("--fused {k}"), &format!("'{v}'")],
        );
    }
    // Combinations the knobs alone rule out.
    let with = |knobs: &'static str| -> Vec<&str> {
        r.iter().copied().chain(["--fused", knobs]).collect()
    };
    refused(&d, &with("help=never"), &[], &["--fused help", "alias=off"]);
    refused(
        &d,
        &with("trigger=spares,spare-dispatch=gemm"),
        &[],
        &["--fused trigger"],
    );
    // The GEMM's order: a word it does not know, and the chunk order where the collective's steps
    // do not follow one chunk index.
    refused(
        &d,
        &run(&["--order", "sideways"]),
        &[],
        &["--order", "'sideways'", "stage or chunk"],
    );
    refused(
        &d,
        &run(&["--order", "chunk", "--collective", "direct-all-reduce"]),
        &[],
        &["order", "chunk with direct-all-reduce", "stage"],
    );
    refused(
        &d,
        &run(&["--order", "chunk"]),
        &[],
        &["chunks per rank in the chunk order", "1", "at least 2"],
    );
    // A list of orders is for `sweep`: a run or a tuning takes one.
    refused(
        &d,
        &run(&["--order", "stage,chunk"]),
        &[],
        &["--order", "stage,chunk", "one order"],
    );
    // 17: every command checks the environment, `info` and `sweep` too.
    for (k, v) in [
        ("T3_TIMEOUT_S", "abc"),
        ("WGPU_POWER_PREF", "x"),
        ("T3_SMS", "0"),
    ] {
        refused(&d, &["info"], &[(k, v)], &[k]);
        refused(&d, &["presets"], &[(k, v)], &[k]);
    }
    let sweep: Vec<&str> = ["sweep"]
        .iter()
        .chain(S)
        .chain(&["--mode", "host"])
        .copied()
        .collect();
    refused(&d, &sweep, &[("T3_SMS", "x")], &["T3_SMS", "1 to 65536"]);
    let host: Vec<&str> = sweep
        .iter()
        .copied()
        .chain(["--host-loop", "in-flight=x"])
        .collect();
    refused(&d, &host, &[], &["--host-loop in-flight", "1 to 16"]);
    // A value that is not UTF-8.
    {
        use std::os::unix::ffi::OsStrExt;
        let bad = std::ffi::OsStr::from_bytes(b"1\xff");
        let o = Command::new(env!("CARGO_BIN_EXE_t3"))
            .arg("presets")
            .env("T3_TIMEOUT_S", bad)
            .current_dir(&d)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains("T3_TIMEOUT_S"), "{}", stderr(&o));
    }
    // An unknown T3_* variable is named in a warning, a retired one with its flag; the command
    // goes on.
    let o = t3(
        &["presets"],
        &[
            ("T3_PEICES", "4"),
            ("T3_FUSED_PIECES", "4"),
            ("T3_SIMT_WGSL", "k.wgsl"),
        ],
        &d,
        60,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains("warning: T3_PEICES"), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("T3_FUSED_PIECES is set, but t3 no longer reads it: use --fused"),
        "{}",
        stderr(&o)
    );
    assert!(
        stderr(&o)
            .contains("T3_SIMT_WGSL is set, but t3 no longer reads it: use --kernel-wgsl simt"),
        "{}",
        stderr(&o)
    );
    // An empty kernel path, or a key that names no kernel, is refused naming the flag.
    refused(
        &d,
        &["presets", "--kernel-wgsl", "simt="],
        &[],
        &["--kernel-wgsl simt"],
    );
    refused(
        &d,
        &["presets", "--kernel-wgsl", "cuda=k.wgsl"],
        &[],
        &["--kernel-wgsl", "cuda"],
    );
}

#[test]
fn flags_and_tables_out_of_range_are_usage_errors() {
    let d = tmp("ranges");
    // 14: a mode that runs on one device, the only one asked, with the ranks on two.
    for mode in ["encoded", "fused", "sequential,encoded"] {
        let args: Vec<&str> = ["run"]
            .iter()
            .chain(&S[..10])
            .chain(&["--devices", "2", "--mode", mode])
            .copied()
            .collect();
        refused(&d, &args, &[], &["--mode", "2 devices"]);
    }
    // 15: a link table of one row (step bytes, workgroups, GB/s) refused, naming what it says.
    let table_refused = |(bytes, workgroups, gbps): (u64, &str, &str), said: &[&str]| {
        let t = format!(
            r#"{{"adapter":"x","bytes":{bytes},"timer":"t","rows":[{{"workgroups":{workgroups},"gbps":{gbps},"ms":0.5}}]}}"#
        );
        std::fs::write(d.join("tbl.json"), t).unwrap();
        refused(
            &d,
            &run(&["--link-gbps", "2", "--link-table", "tbl.json"]),
            &[],
            said,
        );
    };
    // A row of no workgroups, or more than a dispatch holds.
    for w in ["0", "4294967295"] {
        table_refused((1048576, w, "2.0"), &[&format!("a row of {w} workgroups")]);
    }
    // A table of no step bytes, or a row at a rate no link has.
    table_refused(
        (0, "4", "2.0"),
        &["link table", "a step of 16 bytes or more"],
    );
    table_refused((1048576, "4", "1e300"), &["link table", "at most 1e6 GB/s"]);
    // A link budget beyond what a dispatch holds, on run and on sweep.
    refused(
        &d,
        &run(&["--link-workgroups", "4294967295"]),
        &[],
        &["link workgroups", "4294967295", "65535"],
    );
    refused(
        &d,
        &[
            "sweep",
            "--shape",
            "64x48x32",
            "--ranks",
            "2",
            "--link-workgroups",
            "65536",
        ],
        &[],
        &["link workgroups", "65536"],
    );
    // 16: a preset beside a shape is a conflict in sweep as in run.
    refused(
        &d,
        &["sweep", "--shape", "64x48x32", "--presets", "tnlg-op-tp8"],
        &[],
        &["--presets"],
    );
    // A value twice in a swept or tuned list: its points would run twice.
    for (args, needle) in [
        (
            &["sweep", "--shape", "64x48x32", "--ranks", "2,3,2"][..],
            "--ranks",
        ),
        (
            &["sweep", "--presets", "tnlg-op-tp8,tnlg-op-tp8"][..],
            "--presets",
        ),
        (
            &["sweep", "--shape", "64x48x32", "--chunks", "1,2,1"][..],
            "--chunks",
        ),
        (
            &["sweep", "--shape", "64x48x32", "--step-lead", "auto,auto"][..],
            "--step-lead",
        ),
        (
            &["tune", "--shape", "64x48x32", "--ranks", "4,4"][..],
            "--ranks",
        ),
    ] {
        refused(&d, args, &[], &[needle, "twice"]);
    }
    // A replacement kernel that does not compile names its own file and line, not the composed
    // shader's.
    let src =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("shaders/gemm.wgsl"))
            .unwrap();
    let mut lines: Vec<&str> = src.lines().collect();
    lines.insert(29, "fn broken() -> u32 { return undefined_thing; }");
    std::fs::write(d.join("k.wgsl"), lines.join("\n")).unwrap();
    refused(
        &d,
        &run(&["--kernel-wgsl", "simt=k.wgsl"]),
        &[],
        &["--kernel-wgsl simt", "k.wgsl line 30:", "undefined_thing"],
    );
    // One cut short (its last brace gone) names its end, without a panic.
    let cut = src.trim_end().strip_suffix('}').unwrap();
    std::fs::write(d.join("k.wgsl"), cut).unwrap();
    refused(
        &d,
        &run(&["--kernel-wgsl", "simt=k.wgsl"]),
        &[],
        &["--kernel-wgsl simt", "k.wgsl at its end"],
    );
    // 17: a rate no link has, said in a few digits.
    let before = snapshot(&d);
    let o = t3(&run(&["--link-gbps", "1e308"]), &[], &d, 60);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).len() < 400 && stderr(&o).contains("1e6"),
        "{}",
        stderr(&o)
    );
    assert_eq!(snapshot(&d), before);
}

/// Numbers refused with their range, `t3 tune --warmup 0` refused as its help says, a preset
/// shrunk below a row a rank said of its --tokens and --scale, an empty path named as one, and a
/// replacement kernel that only fused mode's epilogue refuses caught by the kernel's check
/// (naming the file), not by the device's compile.
#[test]
fn numbers_paths_and_kernels_are_refused_by_name() {
    let d = tmp("named");
    refused(
        &d,
        &run(&["--seed", "x"]),
        &[],
        &["--seed", "between 0 and 18446744073709551615"],
    );
    refused(
        &d,
        &run(&["--gemm-grid", "x"]),
        &[],
        &["--gemm-grid", "between 0 and 4294967295"],
    );
    let sweep: Vec<&str> = ["sweep"].iter().chain(&S[..4]).copied().collect();
    let grids = [sweep.as_slice(), &["--gemm-grid", "0,x"]].concat();
    refused(
        &d,
        &grids,
        &[],
        &["--gemm-grid", "between 0 and 4294967295"],
    );
    let tune: Vec<&str> = ["tune"].iter().chain(&S[..4]).copied().collect();
    refused(
        &d,
        &[tune.as_slice(), &["--warmup", "0"]].concat(),
        &[],
        &["--warmup", "at least 1"],
    );
    // A preset shrunk below a row a rank: the flags that shrank it named, not the ranks.
    let shrunk = [
        "run",
        "--preset",
        "tnlg-op-tp4",
        "--scale",
        "0.03125",
        "--tokens",
        "4",
    ];
    refused(
        &d,
        &shrunk,
        &[],
        &["output rows: 1", "its 4 ranks", "--tokens or --scale"],
    );
    let o = t3(&run(&["--tune", ""]), &[], &d, 60);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(e.contains("could not read \"\" (an empty path)"), "{e}");
    // More invocations than fused mode's epilogue serves: refused before the device sees it, even
    // where fused mode does not run.
    let src =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("shaders/gemm.wgsl"))
            .unwrap();
    let wide = src.replacen(
        "const INVOCATIONS: u32 = 256u;",
        "const INVOCATIONS: u32 = 1024u;",
        1,
    );
    assert_ne!(src, wide, "shaders/gemm.wgsl's INVOCATIONS is gone");
    std::fs::write(d.join("wide.wgsl"), wide).unwrap();
    let kernel = d.join("wide.wgsl").display().to_string();
    let flag = format!("simt={kernel}");
    let args = [&["--kernel-wgsl", flag.as_str()], run(&[]).as_slice()].concat();
    refused(
        &d,
        &args,
        &[],
        &["--kernel-wgsl simt", &kernel, "const_assert"],
    );
}

#[test]
fn plot_writes_a_valid_picture_of_extreme_values() {
    // 8
    let d = tmp("plot");
    std::fs::write(
        d.join("s.csv"),
        "workload,ranks,mode,speedup,overlap_efficiency\nw,2,host,1e308,0.2\nw,4,host,1.2,-3\n",
    )
    .unwrap();
    let o = t3(&["plot", "--csv", "s.csv", "--svg", "p.svg"], &[], &d, 60);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let svg = std::fs::read_to_string(d.join("p.svg")).unwrap();
    assert!(!svg.contains("inf") && !svg.contains("NaN"), "{svg}");
}

/// shaders/gemm.wgsl with one store doubled: a kernel whose results fail the check.
fn wrong_kernel(dir: &Path) -> PathBuf {
    let src =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("shaders/gemm.wgsl"))
            .unwrap();
    let bad = src.replacen("c00, c01, job", "c00 * 2.0, c01, job", 1);
    assert_ne!(
        src, bad,
        "the store to double is gone from shaders/gemm.wgsl"
    );
    let p = dir.join("wrong.wgsl");
    std::fs::write(&p, bad).unwrap();
    p
}

/// `t3 args` with standard output closed before it prints (`| true`).
fn closed_stdout(args: &[&str], env: &[(&str, &str)], dir: &Path) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_t3"))
        .args(args)
        .envs(env.iter().copied())
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    child.wait_with_output().unwrap()
}

#[test]
fn a_closed_stdout_loses_neither_files_nor_the_exit_code() {
    if common::gpu().is_none() {
        return;
    }
    // 5
    let d = tmp("pipe");
    let outs = [
        "--json", "o.json", "--svg", "o.svg", "--csv", "o.csv", "--dump", "od",
    ];
    let o = closed_stdout(&run(&outs), &[], &d);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    for f in [
        "o.json",
        "o.svg",
        "o.csv",
        "od/meta.json",
        "od/rank1_out.npy",
    ] {
        assert!(d.join(f).is_file(), "{f} missing: {}", stderr(&o));
    }
    let e = tmp("pipe-wrong");
    let k = wrong_kernel(&e);
    let kernels = format!("simt={0},coop={0}", k.display());
    let o = closed_stdout(
        &run(&["--json", "o.json", "--kernel-wgsl", &kernels]),
        &[],
        &e,
    );
    assert_eq!(
        o.status.code(),
        Some(1),
        "a failed check exits 1: {}",
        stderr(&o)
    );
    assert!(stderr(&o).contains("check failed"), "{}", stderr(&o));
    assert!(e.join("o.json").is_file(), "{}", stderr(&o));
    // The same with the report on the closed standard output itself.
    let o = closed_stdout(&run(&["--json", "-", "--kernel-wgsl", &kernels]), &[], &e);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
}

#[test]
fn tables_are_replaced_whole_while_runs_read_them() {
    let Some(gpu) = common::gpu() else { return };
    // 7: a run reading the table while calibrate saves it sees the old table or the new one.
    let d = tmp("calibrate");
    let o = t3(
        &["calibrate", "--mib", "1", "--reps", "1", "--out", "t.json"],
        &[],
        &d,
        120,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let table: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("t.json")).unwrap()).unwrap();
    assert_eq!(table["adapter"], gpu.describe());
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let reader = {
        let (stop, path) = (stop.clone(), d.join("t.json"));
        std::thread::spawn(move || {
            let mut reads = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) || reads == 0 {
                let text = std::fs::read_to_string(&path).unwrap();
                serde_json::from_str::<serde_json::Value>(&text)
                    .unwrap_or_else(|e| panic!("read {} bytes mid-write: {e}", text.len()));
                reads += 1;
            }
            reads
        })
    };
    for _ in 0..3 {
        let o = t3(
            &["calibrate", "--mib", "1", "--reps", "1", "--out", "t.json"],
            &[],
            &d,
            120,
        );
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    assert!(reader.join().unwrap() > 0);
    let left: Vec<_> = std::fs::read_dir(&d)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n != "t.json")
        .collect();
    assert!(left.is_empty(), "temporary files left: {left:?}");
}

#[test]
fn a_timeout_ends_the_process_within_its_bound() {
    let Some(gpu) = common::gpu() else { return };
    // A CPU adapter: four 2048^3 GEMMs queued take half a minute there, past a 1 s bound; the
    // devices' drop used to wait for them all (10).
    if gpu.info.device_type != wgpu::DeviceType::Cpu {
        return;
    }
    let d = tmp("timeout");
    // `t3 WHAT ARGS` at one rep and no warm-up, its bound (`--timeout`) among ARGS: its output and
    // how long it took.
    let timed = |what: &[&str], args: &[&str]| {
        let quick = ["--reps", "1", "--warmup", "0", "--warmup-s", "0"];
        let all: Vec<&str> = what.iter().chain(&quick).chain(args).copied().collect();
        let t0 = std::time::Instant::now();
        let o = t3(&all, &[], &d, 120);
        (o, t0.elapsed().as_secs_f64())
    };
    let big = [
        "--shape",
        "2048x2048x2048",
        "--mode",
        "sequential",
        "--no-verify",
        "--timeout",
        "1",
    ];
    let (o, took) = timed(
        &["run", "--ranks", "4"],
        &[&big[..], &["--json", "o.json"]].concat(),
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("timed out after"), "{}", stderr(&o));
    assert!(
        took < 15.0,
        "ended {took:.1} s after it started: {}",
        stderr(&o)
    );
    assert!(!d.join("o.json").exists());
    // A sweep stops at the point that timed out, keeps the rows before it, and ends in the same
    // bound (it went on to its next point, and dropped its devices after waiting for them).
    let (o, took) = timed(
        &["sweep", "--ranks", "4,2"],
        &[&big[..], &["--csv", "s.csv"]].concat(),
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("the sweep stopped at point 1 of 2"),
        "{}",
        stderr(&o)
    );
    assert!(
        took < 20.0,
        "sweep: ended {took:.1} s after it started: {}",
        stderr(&o)
    );
    let rows = std::fs::read_to_string(d.join("s.csv")).unwrap();
    assert_eq!(
        rows.lines().count(),
        2,
        "the header and the failed point: {rows}"
    );
    // Fused mode's spares polling a million times over: the same bound (it ran past 120 s).
    let (o, took) = timed(
        &[
            "run", "--shape", "64x48x32", "--ranks", "2", "--mode", "fused",
        ],
        &["--timeout", "2", "--fused", "spares=1048576"],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("timed out after"), "{}", stderr(&o));
    assert!(
        took < 15.0,
        "fused: ended {took:.1} s after it started: {}",
        stderr(&o)
    );
}
