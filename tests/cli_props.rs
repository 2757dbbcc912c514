//! Property test over the command line: random combinations of flags, environment values and file
//! kinds (regular, symbolic and hard links to an input, a link to nowhere yet, FIFO, directory,
//! /proc, /sys, /dev/full, the command's own inputs) never panic the binary, end within a bound,
//! exit 0, 1 or 2 only, say why on stderr when not 0, write no file after a usage error, and never
//! change a file but the declared outputs (an input never, whatever names it; no temporary file
//! stays). A few dozen tiny cases by default; T3_SOAK=N runs N.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use proptest::prelude::*;

mod common;
use proptest::test_runner::{Config as PtConfig, TestCaseError, TestRunner};

use common::cases;

/// One flag's choices, valid and invalid: each case takes one of them, or leaves the flag out.
type Group = (
    &'static str,
    &'static [&'static str],
    &'static [&'static str],
);

const RUN: &[Group] = &[
    (
        "--shape",
        &["1x1x1", "7x5x3", "16x8x4", "33x17x9"],
        &["0x8x8", "axb", "8x8", "99999999x1x1"],
    ),
    ("--ranks", &["1", "2", "3", "4"], &["0", "65", "x", ""]),
    ("--chunks", &["1", "2", "3"], &["0", "100", "99999999999"]),
    (
        "--collective",
        &[
            "reduce-scatter",
            "direct-reduce-scatter",
            "all-gather",
            "all-reduce",
        ],
        &["nosuch"],
    ),
    ("--reduce", &["update", "land", "forward"], &["nope"]),
    (
        "--mode",
        &[
            "sequential",
            "sequential,host",
            "encoded",
            "fused",
            "all,sequential",
        ],
        &["warp", ""],
    ),
    ("--link-workgroups", &["1", "4"], &["0", "x", "65536"]),
    (
        "--fused",
        &[
            "pieces=2,spares=4",
            "trigger=epilogue",
            "put=cas,alias=off",
            "grid=off",
        ],
        &["pieces=0", "x", "help=never", "spares=1,spares=2"],
    ),
    (
        "--host-loop",
        &["in-flight=1", "grain=chunk,wait=block"],
        &["in-flight=17", "grain=tile", "depth=2"],
    ),
    ("--arbitrate", &["1", "3"], &["0"]),
    ("--gemm-grid", &["0", "1", "128"], &["-1", "x"]),
    ("--step-lead", &["auto", "0", "3"], &["-1"]),
    ("--reps", &["1", "2"], &["0", "1000000000000"]),
    ("--warmup", &["0", "1"], &["x", "10001"]),
    ("--dtype", &["f32", "f16"], &["bf8"]),
    ("--out-dtype", &["f32"], &["f64", ""]),
    (
        "--json",
        &["out.json", "-", "ls.csv", "dangling.json"],
        &[
            "nodir/x.json",
            "",
            ".",
            "out.json/",
            "fifo",
            "/dev/full",
            "/proc/x.json",
        ],
    ),
    (
        "--csv",
        &["out.csv", "-", "hs.csv"],
        &["out.json", "", "sub", "dump/meta.json"],
    ),
    (
        "--svg",
        &["g.svg"],
        &["nodir/g.svg", "s.csv", "/sys/g.svg", "other.json"],
    ),
    ("--trace", &["t.json"], &["out.csv", "dump/rank0_out.npy"]),
    ("--dump", &["dump", "sub"], &["", "s.csv", "/sys/d", "fifo"]),
    ("--link-gbps", &["1", "4"], &["0", "-3", "nan", "1e9"]),
    (
        "--link-table",
        &["other.json"],
        &["none.json", "/dev/zero", "."],
    ),
    ("--timeout", &["30"], &["0", "abc", "1e20"]),
    ("--sms", &["132"], &["0", "65537", "x"]),
    ("--seed", &["1", "18446744073709551615"], &["-1"]),
    ("--no-verify", &[""], &[]),
    ("--preset", &["tnlg-op-tp4"], &["tnlg-fc2-tp7", "nosuch"]),
];

const SWEEP: &[Group] = &[
    ("--shape", &["16x8x4", "33x17x9"], &["0x8x8"]),
    ("--ranks", &["1,2", "2"], &["2,0", "3,65"]),
    ("--chunks", &["1", "1,2"], &["0"]),
    (
        "--collective",
        &["reduce-scatter", "all-gather"],
        &["nosuch"],
    ),
    ("--reduce", &["update", "land", "forward"], &[]),
    (
        "--mode",
        &["sequential", "sequential,encoded", "fused", "all"],
        &["x"],
    ),
    ("--link-workgroups", &["0", "0,2"], &["x"]),
    ("--reps", &["1"], &["0"]),
    ("--warmup", &["0"], &["-1"]),
    (
        "--csv",
        &["s2.csv", "-", "ls.csv"],
        &["nodir/s.csv", ".", "", "s2.csv/", "fifo", "/dev/full"],
    ),
    ("--presets", &["tnlg-op-tp4"], &["nosuch"]),
];

const PLOT: &[Group] = &[
    (
        "--csv",
        &["s.csv", "ls.csv"],
        &["none.csv", "/dev/zero", ".", "fifo", "/proc/self/status"],
    ),
    ("--x", &["ranks", "chunks"], &["nosuch"]),
    (
        "--svg",
        &["p.svg", "dangling.json"],
        &["nodir/p.svg", "", "s.csv", "ls.csv", "hs.csv", "fifo"],
    ),
    ("--title", &["t", ""], &[]),
];

const PRESETS: &[Group] = &[("--scale", &["0.5"], &["2", "x"]), ("--json", &[""], &[])];

/// Files a case starts with: a measured sweep CSV and a link table of another adapter.
fn seed_files(dir: &Path) {
    // Every kind of file an argument may name: links to an input, a FIFO, a directory, a link to
    // nowhere yet.
    std::fs::create_dir(dir.join("sub")).unwrap();
    std::os::unix::fs::symlink("new.json", dir.join("dangling.json")).unwrap();
    let _ = Command::new("mkfifo").arg(dir.join("fifo")).status();
    std::fs::write(
        dir.join("s.csv"),
        "workload,ranks,chunks,mode,speedup,overlap_efficiency,skipped\n\
         w,2,1,host,1.1,0.2,\nw,4,1,host,1.2,-3,\nw,4,2,error,,,\"x\"\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("other.json"),
        r#"{"adapter":"Another GPU (Metal, 1)","bytes":1048576,"timer":"gpu timestamps",
            "rows":[{"workgroups":1,"gbps":0.5,"ms":2.0},{"workgroups":null,"gbps":8.0,"ms":0.1}]}"#,
    )
    .unwrap();
    std::os::unix::fs::symlink("s.csv", dir.join("ls.csv")).unwrap();
    std::fs::hard_link(dir.join("s.csv"), dir.join("hs.csv")).unwrap();
}

/// Every path under `dir` (links not followed, FIFOs not opened) with its kind and bytes.
fn contents(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let t = std::fs::symlink_metadata(&p).unwrap().file_type();
            let v = if t.is_symlink() {
                let mut v = b"link:".to_vec();
                v.extend(
                    std::fs::read_link(&p)
                        .unwrap()
                        .into_os_string()
                        .into_encoded_bytes(),
                );
                v
            } else if t.is_dir() {
                stack.push(p.clone());
                b"dir".to_vec()
            } else if t.is_file() {
                std::fs::read(&p).unwrap()
            } else {
                b"other".to_vec()
            };
            out.insert(p, v);
        }
    }
    out
}

/// The paths a case may change: its declared outputs (through links: the file they reach; a dump:
/// everything under it).
fn declared(args: &[String], dir: &Path) -> Vec<PathBuf> {
    let cmd = args[0].as_str();
    let flags: &[&str] = match cmd {
        "run" => &["--json", "--csv", "--trace", "--svg", "--dump"],
        "sweep" => &["--csv"],
        "plot" => &["--svg"],
        _ => &[],
    };
    let mut out = Vec::new();
    for w in args.windows(2) {
        if flags.contains(&w[0].as_str()) && w[1] != "-" {
            let p = dir.join(&w[1]);
            out.push(p.clone());
            if let Ok(to) = std::fs::read_link(&p) {
                out.push(dir.join(to));
            }
        }
    }
    out
}

/// The files a case reads (canonical): no output may change them, whatever their names.
fn inputs(args: &[String], env: &[(&str, &str)], dir: &Path) -> Vec<PathBuf> {
    let mut flags = vec![];
    match args[0].as_str() {
        "plot" => flags.push("--csv"),
        "run" if args.iter().any(|a| a == "--link-gbps") => flags.push("--link-table"),
        _ => {}
    }
    let named = args
        .windows(2)
        .filter(|w| flags.contains(&w[0].as_str()))
        .map(|w| w[1].as_str());
    let knobs = env
        .iter()
        .filter(|(k, _)| k.ends_with("_WGSL"))
        .map(|(_, v)| *v);
    named
        .chain(knobs)
        .filter_map(|v| std::fs::canonicalize(dir.join(v)).ok())
        .collect()
}

/// The arguments of one case: `picks` holds, per group, (present, choice).
fn command_line(picks: &[(u8, usize)]) -> (Vec<String>, Vec<(&'static str, &'static str)>) {
    let (cmd, groups): (&str, &[Group]) = match picks[0].1 % 20 {
        0..=13 => ("run", RUN),
        14..=16 => ("sweep", SWEEP),
        17..=18 => ("plot", PLOT),
        _ => ("presets", PRESETS),
    };
    let mut args = vec![cmd.to_string()];
    for (g, &(present, choice)) in groups.iter().zip(&picks[1..]) {
        // Shapes most of the time, so that runs get past the workload check; plot's two required
        // flags always; presets (which conflict with shapes) seldom.
        let p = match (cmd, g.0) {
            (_, "--shape") => 8,
            ("plot", "--csv" | "--svg") => 10,
            (_, "--preset") => 1,
            _ => 2,
        };
        if present % 10 < p {
            args.push(g.0.to_string());
            let switch = g.0 == "--no-verify" || (cmd == "presets" && g.0 == "--json");
            // One flag in eight takes an invalid value where it has one.
            let pool = if choice % 8 == 0 && !g.2.is_empty() {
                g.2
            } else {
                g.1
            };
            if !switch {
                args.push(pool[(choice / 8) % pool.len()].to_string());
            }
        }
    }
    let has = |flag: &str| args.iter().any(|a| a == flag);
    // Keep runs tiny and short unless the case picked its own counts or modes.
    let mut extra = Vec::new();
    if cmd == "run" || cmd == "sweep" {
        // No warm-up by stability either: lavapipe's times never settle, so each run would spend
        // the whole bound (10 s) warming up.
        for (flag, v) in [
            ("--reps", "1"),
            ("--warmup", "0"),
            ("--warmup-s", "0"),
            ("--mode", "sequential"),
        ] {
            if !has(flag) {
                extra.extend([flag, v]);
            }
        }
        // A preset at full size would be a long run.
        if has("--preset") || has("--presets") {
            extra.extend(["--scale", "0.01"]);
        }
    }
    args.extend(extra.into_iter().map(String::from));
    let mut env = Vec::new();
    match picks[picks.len() - 1].1 % 24 {
        0 => env.push(("T3_TIMEOUT_S", "abc")),
        1 => env.push(("WGPU_BACKEND", "nosuch")),
        2 => env.push(("T3_TIMEOUT_S", "60")),
        3 => env.push(("T3_SMS", "0")),
        4 => env.push(("T3_ALIAS", "x")),
        5 => env.push(("T3_SMS", "x")),
        6 => env.push(("WGPU_POWER_PREF", "sideways")),
        // A kernel source that is the case's own CSV: an input no output may replace.
        7 => args.extend(["--kernel-wgsl".to_string(), "simt=s.csv".to_string()]),
        8 => env.push(("T3_FUSED_TRIGGER", " epilogue")),
        9 => env.push(("T3_NO_SUCH_KNOB", "1")),
        _ => {}
    }
    (args, env)
}

/// Longest a case may run: a hang fails the case instead of hanging the suite.
const LIMIT_S: u64 = 120;

#[test]
fn random_command_lines_keep_the_contract() {
    let root = std::env::temp_dir().join(format!("t3-cli-props-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let mut runner = TestRunner::new(PtConfig {
        cases: cases(48),
        failure_persistence: None,
        ..PtConfig::default()
    });
    let groups = 1 + RUN.len().max(SWEEP.len()) + 1;
    let n = std::sync::atomic::AtomicUsize::new(0);
    let tally = std::sync::Mutex::new([0usize; 3]);
    runner
        .run(
            &proptest::collection::vec((any::<u8>(), any::<usize>()), groups),
            |picks| {
                let case = n.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let dir = root.join(case.to_string());
                std::fs::create_dir_all(&dir).unwrap();
                seed_files(&dir);
                let seeded = contents(&dir);
                let (args, env) = command_line(&picks);
                let o = common::cli::within(
                    Command::new(env!("CARGO_BIN_EXE_t3"))
                        .args(&args)
                        .env_remove("T3_TIMEOUT_S")
                        .env_remove("WGPU_BACKEND")
                        .envs(env.iter().copied())
                        .current_dir(&dir),
                    LIMIT_S,
                );
                let Some(o) = o else {
                    return Err(TestCaseError::fail(format!(
                        "{env:?} t3 {args:?} ran past {LIMIT_S} s"
                    )));
                };
                let err = String::from_utf8_lossy(&o.stderr);
                let what = format!("{env:?} t3 {args:?}");
                prop_assert!(!err.contains("panicked"), "{what} panicked: {err}");
                let code = o.status.code();
                prop_assert!(matches!(code, Some(0..=2)), "{what}: exit {code:?}: {err}");
                if let Some(c @ 0..=2) = code {
                    tally.lock().unwrap()[c as usize] += 1;
                }
                if code != Some(0) {
                    prop_assert!(err.contains("error"), "{what}: exit {code:?}, no message");
                }
                if code == Some(2) {
                    prop_assert_eq!(
                        &contents(&dir),
                        &seeded,
                        "{}: a usage error wrote files: {}",
                        what,
                        err
                    );
                }
                // Whatever the exit: no file but the declared outputs changed, none is left half
                // written, and no temporary file stays.
                let outs = declared(&args, &dir);
                let after = contents(&dir);
                let ins = inputs(&args, &env, &dir);
                for (p, v) in &seeded {
                    let input = std::fs::symlink_metadata(p).is_ok_and(|m| m.is_file())
                        && std::fs::canonicalize(p).is_ok_and(|c| ins.contains(&c));
                    let out = !input && outs.iter().any(|o| p.starts_with(o));
                    prop_assert!(
                        out || after.get(p) == Some(v),
                        "{}: {} changed or went, not a declared output: {}",
                        what,
                        p.display(),
                        err
                    );
                }
                for p in after.keys() {
                    let name = p.file_name().unwrap().to_string_lossy();
                    prop_assert!(!name.ends_with(".tmp"), "{}: left {}", what, p.display());
                    prop_assert!(
                        seeded.contains_key(p) || outs.iter().any(|o| p.starts_with(o)),
                        "{}: made {}, not a declared output: {}",
                        what,
                        p.display(),
                        err
                    );
                }
                let _ = std::fs::remove_dir_all(&dir);
                Ok(())
            },
        )
        .unwrap();
    let _ = std::fs::remove_dir_all(&root);
    // Mostly usage errors is expected; none at exit 0 would mean the cases never reach a GPU.
    let [ok, failed, usage] = *tally.lock().unwrap();
    eprintln!("exit 0: {ok}, exit 1: {failed}, exit 2: {usage}");
}
