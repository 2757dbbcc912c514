//! `t3 tune` end to end on a small shape, and the tune table as `run` reads it: the round trip of
//! its choices into each mode's row, the said fallback (and `--no-fallback`), and bad, stale and
//! foreign tables refused or, for `--tune auto`, said and ignored. One test binary: `choices` (what
//! is chosen and how a run takes it), `collectives` (the direct all-reduce as a choice), `tables`
//! (the table's file, its keys, and what is refused before any GPU work).

#[path = "../common/mod.rs"]
mod common;

mod choices;
mod collectives;
mod tables;

use std::path::Path;
use std::process::Output;

use common::cli::{stderr, t3_within};
use serde_json::Value;

const SHAPE: &str = "64x48x32";
const FAST: [&str; 6] = ["--reps", "2", "--warmup", "1", "--warmup-s", "0"];

/// `t3 tune`'s flag that searches every point: on lavapipe a small point's room to overlap lies
/// within its noise as often as not.
const SEARCH: &str = "--search-no-room";

fn t3(args: &[&str], dir: &Path) -> Output {
    t3_within(args, &[], dir, 120)
}

fn tmp(name: &str) -> std::path::PathBuf {
    common::cli::tmp("tune", name)
}

/// Whether the machine has no adapter at all (the test is then skipped, said on stderr).
fn no_adapter(o: &Output) -> bool {
    let none = stderr(o).contains("no GPU adapter found");
    if none {
        eprintln!("skipped: no GPU adapter");
    }
    none
}

/// Tunes SHAPE at 2 ranks for `modes` into the adapter's default table in `dir`; its path and JSON.
fn tune(dir: &Path, modes: &str) -> Option<(String, Value)> {
    tune_with(dir, modes, &[]).map(|(name, table, _)| (name, table))
}

/// `t3 tune` of SHAPE at 2 ranks for `modes` within `budget_s` seconds, with `extra` flags.
fn tune_args<'a>(modes: &'a str, budget_s: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "tune",
        "--shape",
        SHAPE,
        "--ranks",
        "2",
        "--mode",
        modes,
        "--budget-s",
        budget_s,
        SEARCH,
    ];
    args.extend(FAST);
    args.extend(extra);
    args
}

/// [`tune`] with `extra` flags; also what it printed.
fn tune_with(dir: &Path, modes: &str, extra: &[&str]) -> Option<(String, Value, String)> {
    let o = t3(&tune_args(modes, "4", extra), dir);
    if no_adapter(&o) {
        return None;
    }
    assert!(o.status.success(), "{}", stderr(&o));
    let (name, table) = default_table(dir);
    Some((name, table, String::from_utf8_lossy(&o.stdout).into_owned()))
}

/// The adapter's default table in `dir`: its file's name and its JSON.
fn default_table(dir: &Path) -> (String, Value) {
    let name = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .find(|n| n.starts_with("t3-tune-") && n.ends_with(".json"))
        .expect("the default table");
    let table: Value = serde_json::from_str(&std::fs::read_to_string(dir.join(&name)).unwrap())
        .expect("the table is JSON");
    (name, table)
}

/// `t3 run` on SHAPE at 2 ranks for `modes`, and `extra`.
fn run_modes(dir: &Path, modes: &str, extra: &[&str]) -> Output {
    let mut args = vec!["run", "--shape", SHAPE, "--ranks", "2", "--mode", modes];
    args.extend(FAST);
    args.extend(extra);
    t3(&args, dir)
}

/// [`run_modes`]'s report, `--json -`.
fn run_json(dir: &Path, modes: &str) -> Value {
    let o = run_modes(dir, modes, &["--json", "-"]);
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_slice(&o.stdout).unwrap()
}

/// `mode`'s row of the report `r`.
fn row<'r>(r: &'r Value, mode: &str) -> &'r Value {
    r["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["mode"] == mode)
        .unwrap_or_else(|| panic!("a row for {mode}"))
}

fn run_csv(dir: &Path, extra: &[&str]) -> Vec<csv::StringRecord> {
    csv_of(dir, "run", extra)
}

/// `t3 COMMAND` (run or sweep) on SHAPE at 2 ranks: each row's mode, trigger, times, configuration,
/// its source, fallback, chunks and order.
fn csv_of(dir: &Path, command: &str, extra: &[&str]) -> Vec<csv::StringRecord> {
    let mut args = vec![command, "--shape", SHAPE, "--ranks", "2", "--csv", "-"];
    args.extend(FAST);
    args.extend(extra);
    let o = t3(&args, dir);
    assert!(o.status.success(), "{}", stderr(&o));
    let mut r = csv::Reader::from_reader(o.stdout.as_slice());
    let header = r.headers().unwrap().clone();
    r.records()
        .map(|x| {
            let x = x.unwrap();
            let mut rec = csv::StringRecord::new();
            for name in [
                "mode",
                "trigger",
                "median_ms",
                "t_seq_ms",
                "config",
                "config_source",
                "fallback",
                "chunks",
                "order",
            ] {
                let i = header
                    .iter()
                    .position(|h| h == name)
                    .unwrap_or_else(|| panic!("column {name}"));
                rec.push_field(&x[i]);
            }
            rec
        })
        .collect()
}

/// The default table in `dir` with `edit` applied.
fn edit(dir: &Path, name: &str, t: &Value, edit: impl Fn(&mut Value)) {
    let mut t = t.clone();
    edit(&mut t);
    std::fs::write(dir.join(name), serde_json::to_string(&t).unwrap()).unwrap();
}

/// A fresh folder `label` tuned for `mode` alone, its table's choice for that mode then changed by
/// `change`; None where the tune found no adapter.
fn tuned_then(label: &str, mode: &str, change: impl Fn(&mut Value)) -> Option<std::path::PathBuf> {
    let d = tmp(label);
    let (name, t) = tune(&d, mode)?;
    edit(&d, &name, &t, |t| change(&mut t["points"][0]["modes"][0]));
    Some(d)
}

/// The modes a table's point chose a configuration for, in order.
fn tuned_modes(p: &Value) -> Vec<&str> {
    p["modes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["mode"].as_str().unwrap())
        .collect()
}
