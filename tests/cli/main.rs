//! The `t3` binary end to end: happy paths and every bad-input path with its exit code and message.
//! One test binary: `refused` (bad input and what cannot apply), `runs` (what a run, sweep, demo
//! and dump write and say), `devices` (the link between devices, calibrated).

#[path = "../common/mod.rs"]
mod common;

mod devices;
mod refused;
mod runs;

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
