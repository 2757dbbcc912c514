//! `t3 tune` end to end on a small shape, and the tune table as `run` reads it: the round trip of
//! its choices into each mode's row, the said fallback (and `--no-fallback`), and bad, stale and
//! foreign tables refused or, for `--tune auto`, said and ignored.

mod common;

use std::path::Path;
use std::process::Output;

use common::cli::{stderr, t3_within};
use serde_json::Value;

const SHAPE: &str = "64x48x32";
const FAST: [&str; 6] = ["--reps", "2", "--warmup", "1", "--warmup-s", "0"];

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

/// [`tune`] with `extra` flags; also what it printed.
fn tune_with(dir: &Path, modes: &str, extra: &[&str]) -> Option<(String, Value, String)> {
    let mut args = vec![
        "tune",
        "--shape",
        SHAPE,
        "--ranks",
        "2",
        "--mode",
        modes,
        "--budget-s",
        "4",
    ];
    args.extend(FAST);
    args.extend(extra);
    let o = t3(&args, dir);
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

#[test]
fn the_tuner_chooses_the_fastest_it_measured_and_run_takes_it() {
    let d = tmp("end-to-end");
    let Some((name, t)) = tune(&d, "host,encoded") else {
        return;
    };
    assert_eq!(t["format"], "t3-tune");
    assert_eq!(t["version"], 4);
    assert!(t["adapter"].as_str().is_some_and(|a| !a.is_empty()));
    assert!(t["date"].as_str().is_some_and(|a| a.ends_with('Z')));
    let p = &t["points"][0];
    assert_eq!(p["key"]["m"], 64);
    assert_eq!(p["key"]["ranks"], 2);
    let seq = p["sequential_ms"].as_f64().unwrap();
    assert!(seq.is_finite() && seq > 0.0);
    let modes = p["modes"].as_array().unwrap();
    assert!(!modes.is_empty(), "{p}");
    // Sequential on warm clocks per layout (chunks, reduce, link, grid, collective): its fastest
    // figure beside any measurement of any mode; the point's, the fastest layout's.
    let layout = |a: &serde_json::Value| {
        let k = &a["knobs"];
        format!(
            "{} {} {} {} {}",
            k["chunks"], k["reduce"], k["link_workgroups"], k["gemm_grid"], k["collective"]
        )
    };
    let mut warm: std::collections::HashMap<String, f64> = Default::default();
    for c in modes {
        for a in c["alternatives"]
            .as_array()
            .unwrap()
            .iter()
            .chain(c["confirmed"].as_array().unwrap())
        {
            if let Some(t) = a["sequential_ms"].as_f64() {
                let w = warm.entry(layout(a)).or_insert(f64::INFINITY);
                *w = w.min(t);
            }
        }
    }
    let fastest_seq = warm.values().copied().fold(f64::INFINITY, f64::min);
    assert!((seq - fastest_seq).abs() < 1e-9, "{seq} {warm:?}");
    let on_warm_clocks = |a: &serde_json::Value| {
        let (t, beside) = (a["median_ms"].as_f64()?, a["sequential_ms"].as_f64()?);
        Some(t * warm[&layout(a)] / beside)
    };
    for c in modes {
        let best = c["median_ms"].as_f64().unwrap();
        let alts = c["alternatives"].as_array().unwrap();
        assert!(!alts.is_empty());
        // The choice is the confirmation fastest on warm clocks of the three fastest
        // alternatives and the configuration as given, or the configuration as given where that
        // one does not lead it clearly (by 3% both on warm clocks and by the ratio to the
        // sequential beside each); its speedup and fallback follow the chosen figure.
        let confirmed = c["confirmed"].as_array().unwrap();
        assert!(!confirmed.is_empty() && confirmed.len() <= 4, "{c}");
        let fastest = confirmed
            .iter()
            .filter_map(on_warm_clocks)
            .fold(f64::INFINITY, f64::min);
        assert_eq!(on_warm_clocks(&confirmed[0]), Some(fastest), "{c}");
        let chosen = confirmed
            .iter()
            .chain(alts)
            .find(|a| a["knobs"] == c["knobs"] && a["median_ms"].as_f64() == Some(best))
            .expect("the choice's figure is one measured");
        let t_chosen = on_warm_clocks(chosen).unwrap();
        let is_given = |a: &serde_json::Value| {
            let k = &a["knobs"];
            k["chunks"] == 1
                && k["reduce"] == "update"
                && k.as_object()
                    .unwrap()
                    .iter()
                    .all(|(n, v)| n == "chunks" || n == "reduce" || v.is_null())
        };
        let ratio = |a: &serde_json::Value| {
            a["sequential_ms"].as_f64().unwrap() / a["median_ms"].as_f64().unwrap()
        };
        // The fastest confirmed leads `g` past the noise on both readings (`slack` widens or
        // narrows the margins by a rounding's worth, so that neither direction's assertion fails
        // on a tie).
        let leads = |g: &serde_json::Value, slack: f64| {
            let t_g = on_warm_clocks(g).unwrap();
            fastest * 1.03 < t_g + slack && ratio(&confirmed[0]) > ratio(g) * 1.03 - slack
        };
        if confirmed[0]["knobs"] != c["knobs"] {
            assert!(
                is_given(chosen),
                "only the configuration as given stands in the fastest's place: {c}"
            );
            assert!(
                t_chosen <= seq,
                "a given slower than sequential never stands: {c}"
            );
            if confirmed.contains(chosen) {
                assert!(!leads(chosen, -1e-9), "beaten clearly: {c}");
            }
        } else if let Some(g) = confirmed
            .iter()
            .find(|a| is_given(a) && a["median_ms"].is_f64() && a["knobs"] != c["knobs"])
        {
            // The fastest confirmed replaced the configuration as given: it led clearly, or the
            // given was slower than sequential.
            assert!(
                leads(g, 1e-9) || on_warm_clocks(g).unwrap() > seq,
                "replaced without a clear lead: {c}"
            );
        }
        let timed: Vec<&serde_json::Value> =
            alts.iter().filter(|a| a["median_ms"].is_f64()).collect();
        let mut as_given = 0;
        for k in confirmed {
            let rank = timed.iter().position(|a| a["knobs"] == k["knobs"]);
            if rank.is_some_and(|r| r >= 3) {
                // The configuration as given, its first figure the point's as-given time.
                as_given += 1;
                assert_eq!(timed[rank.unwrap()]["median_ms"], c["given_ms"], "{k}");
            }
            assert!(
                rank.is_some() && as_given <= 1,
                "confirmed {k} among the three fastest of {alts:?} or as given"
            );
        }
        let speedup = c["speedup"].as_f64().unwrap();
        assert!((speedup - seq / t_chosen).abs() < 1e-9, "{speedup} {c}");
        assert_eq!(c["fallback"].as_bool().unwrap(), t_chosen > seq);
    }
    // `run` (auto) finds the table and runs each tuned mode as chosen, naming it and its source.
    let rows = run_csv(&d, &["--mode", "host,encoded", "--no-fallback"]);
    for c in modes {
        let mode = c["mode"].as_str().unwrap();
        let row = rows.iter().find(|r| &r[0] == mode).expect("a row per mode");
        assert_eq!(&row[5], "table", "{row:?}");
        assert_eq!(
            row[7].parse::<u64>().unwrap(),
            c["knobs"]["chunks"].as_u64().unwrap()
        );
        assert!(row[4].contains(&format!(
            "reduce {}",
            c["knobs"]["reduce"].as_str().unwrap()
        )));
        assert_eq!(&row[8], c["knobs"]["order"].as_str().unwrap_or("stage"));
    }
    // Off: the flags' configuration.
    let rows = run_csv(&d, &["--mode", "host", "--tune", "off"]);
    assert_eq!(&rows[0][5], "flags");
    assert!(rows[0][4].starts_with("chunks 1, reduce update"));
    // A flag given wins over the table's choice.
    let rows = run_csv(&d, &["--mode", "host", "--chunks", "3"]);
    assert_eq!(&rows[0][7], "3");
    let _ = std::fs::remove_file(d.join(name));
}

#[test]
fn a_swept_list_given_wins_over_the_table_even_at_its_default_value() {
    let d = tmp("sweep-given");
    let Some((name, t)) = tune(&d, "host") else {
        return;
    };
    // The table's choice for host mode: a persistent GEMM grid of 3 workgroups, in the chunk order.
    edit(&d, &name, &t, |t| {
        let k = &mut t["points"][0]["modes"][0]["knobs"];
        k["gemm_grid"] = 3.into();
        k["chunks"] = 2.into();
        k["order"] = "chunk".into();
    });
    let rows = csv_of(&d, "sweep", &["--mode", "host"]);
    assert!(rows[0][4].contains("grid 3"), "left out: {:?}", rows[0]);
    assert_eq!(&rows[0][5], "table");
    assert_eq!(
        &rows[0][8], "chunk",
        "the order column is the table's: {:?}",
        rows[0]
    );
    assert_eq!(
        &csv_of(&d, "sweep", &["--mode", "host", "--order", "stage"])[0][8],
        "stage"
    );
    let rows = csv_of(&d, "sweep", &["--mode", "host", "--gemm-grid", "0"]);
    assert!(rows[0][4].contains("grid off"), "given as 0: {:?}", rows[0]);
    let rows = csv_of(&d, "sweep", &["--mode", "host", "--gemm-grid", "0,2"]);
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert!(rows[1][4].contains("grid 2"), "{:?}", rows[1]);
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

#[test]
fn a_mode_that_loses_falls_back_and_says_so() {
    // Forced: the table says host's best ran at half sequential's speed.
    let Some(d) = tuned_then("fallback", "host", |c| {
        c["fallback"] = true.into();
        c["speedup"] = 0.5.into();
    }) else {
        return;
    };
    let rows = run_csv(&d, &["--mode", "sequential,host"]);
    let host = rows.iter().find(|r| &r[0] == "host").unwrap();
    let seq = rows.iter().find(|r| &r[0] == "sequential").unwrap();
    assert!(host[6].starts_with("fell back to sequential"), "{host:?}");
    assert!(host[6].contains("0.500x"), "{host:?}");
    assert_eq!(&host[1], "none", "a fallback runs no trigger");
    assert_eq!(host[2], seq[2], "its time is sequential's");
    // The report's first screen says it too.
    let o = run_modes(&d, "host", &[]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("fell back to sequential"), "{out}");
    assert!(out.contains("[table]"), "{out}");
    // --no-fallback: the losing run as it is, said.
    let rows = run_csv(&d, &["--mode", "host", "--no-fallback"]);
    assert_eq!(&rows[0][1], "tracked");
    assert!(rows[0][6].starts_with("shown as run"), "{:?}", rows[0]);
    // JSON says it as well.
    let r = run_json(&d, "host");
    let host = row(&r, "host");
    assert!(host["fallback"].as_str().unwrap().starts_with("fell back"));
    assert_eq!(host["config_source"], "table");
}

/// A mode that cannot run at a point as given is not tuned, and the tuner says so and why, in its
/// output and in the table (before, it was left out without a word).
#[test]
fn a_mode_that_cannot_run_is_said_not_tuned() {
    // No spares and no help from the GEMM: fused mode has nothing to run its steps on.
    let fused = "help=never,spare-dispatch=own,alias=off,spares=0";
    let Some((_, t, out)) = tune_with(&tmp("not-run"), "encoded,fused", &["--fused", fused]) else {
        return;
    };
    let line = out
        .lines()
        .find(|l| l.trim_start().starts_with("fused"))
        .unwrap_or_else(|| panic!("no fused line: {out}"));
    assert!(line.contains("not tuned"), "{line}");
    assert!(
        line.contains("spares=0"),
        "the reason names the value: {line}"
    );
    let p = &t["points"][0];
    assert_eq!(p["not_run"][0]["mode"], "fused", "{p}");
    assert!(
        p["not_run"][0]["why"].as_str().unwrap().contains("spares"),
        "{p}"
    );
    assert_eq!(tuned_modes(p), ["encoded"], "{p}");
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

/// Under `--mode all` a collective fused mode cannot run leaves it untuned with the reason, and the
/// other modes tuned (before, the point failed as a whole); named, fused is refused at the flags.
#[test]
fn the_direct_all_reduce_tunes_every_mode_but_fused() {
    let dir = tmp("direct-all-reduce");
    let extra = ["--collective", "direct-all-reduce"];
    let Some((_, t, _)) = tune_with(&dir, "all", &extra) else {
        return;
    };
    let p = &t["points"][0];
    assert_eq!(p["not_run"][0]["mode"], "fused", "{p}");
    assert!(
        p["not_run"][0]["why"]
            .as_str()
            .unwrap()
            .contains("direct all-reduce"),
        "{p}"
    );
    assert_eq!(tuned_modes(p), ["host", "encoded"], "{p}");
    let mut args = vec!["tune", "--shape", SHAPE, "--ranks", "2", "--mode", "fused"];
    args.extend(extra);
    let o = t3(&args, &dir);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("direct-all-reduce with --mode fused"));
}

/// A TP-2 preset (after `--preset` or `--presets`), shrunk for a CPU adapter: an all-reduce at two
/// ranks (48x61x31), on two devices.
const TP2: [&str; 7] = [
    "megagpt2-op-tp2",
    "--tokens",
    "2400",
    "--scale",
    "0.02",
    "--devices",
    "2",
];

/// The ring's all-reduce at two ranks across two devices: the tuner measures the direct all-reduce
/// beside it (the same sums and bytes), and where the table chooses it `run` runs it for that mode,
/// checked, named first in the row's configuration, over the ring's sequential (whose baselines
/// run even where no mode asked runs the ring), its links said; `--collective` given runs the ring
/// as named.
#[test]
fn the_table_may_run_the_all_reduce_as_the_direct_one() {
    let d = tmp("direct");
    let mut args = vec!["tune", "--presets"];
    args.extend(TP2);
    args.extend(["--mode", "sequential,host", "--budget-s", "6"]);
    args.extend(FAST);
    let o = t3(&args, &d);
    if no_adapter(&o) {
        return;
    }
    assert!(o.status.success(), "{}", stderr(&o));
    let name = std::fs::read_dir(&d)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .find(|n| n.starts_with("t3-tune-"))
        .expect("the default table");
    let t: Value = serde_json::from_str(&std::fs::read_to_string(d.join(&name)).unwrap()).unwrap();
    let p = &t["points"][0];
    assert_eq!(p["key"]["collective"], "all-reduce", "{p}");
    let host = &p["modes"][0];
    assert_eq!(host["mode"], "host", "{p}");
    let direct: Vec<&Value> = host["alternatives"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["knobs"]["collective"] == "direct-all-reduce")
        .collect();
    assert!(!direct.is_empty(), "measured beside the ring: {host}");
    for a in &direct {
        assert!(a["median_ms"].is_f64(), "it ran and was checked: {a}");
        assert_eq!(
            a["knobs"]["reduce"], "update",
            "only what runs is measured: {a}"
        );
    }
    // The table's choice for host: the direct all-reduce.
    edit(&d, &name, &t, |t| {
        let c = &mut t["points"][0]["modes"][0];
        c["knobs"]["collective"] = "direct-all-reduce".into();
        c["knobs"]["reduce"] = "update".into();
        // The direct all-reduce takes the stage order only.
        c["knobs"]["order"] = Value::Null;
        c["fallback"] = false.into();
    });
    let run = |modes: &str, extra: &[&str]| {
        let mut args = vec!["run", "--preset"];
        args.extend(TP2);
        args.extend(["--mode", modes, "--json", "-"]);
        args.extend(FAST);
        args.extend(extra);
        let o = t3(&args, &d);
        assert!(o.status.success(), "{}", stderr(&o));
        serde_json::from_slice::<Value>(&o.stdout).unwrap()
    };
    let config = |r: &Value, mode: &str| row(r, mode)["config"].as_str().unwrap().to_string();
    let r = run("sequential,host", &[]);
    assert_eq!(
        r["config"]["collective"], "all-reduce",
        "the ring's baselines"
    );
    assert!(config(&r, "host").starts_with("direct-all-reduce, "));
    assert!(config(&r, "sequential").starts_with("chunks "));
    // Its links are said beside the point's: engine links (`--link-path auto`) where the adapter
    // imports host memory.
    let links: Vec<&str> = r["devices"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|l| l.as_str())
        .filter(|l| l.starts_with("link "))
        .collect();
    let info: Value = serde_json::from_slice(&t3(&["info", "--json"], &d).stdout).unwrap();
    if info[0]["imports_host_memory"] == true {
        assert!(
            links
                .iter()
                .any(|l| l.starts_with("link 0->1 (direct-all-reduce): engine, ")),
            "{links:?}"
        );
    }
    let host = row(&r, "host");
    assert_eq!(host["config_source"], "table");
    assert!(host["max_rel_error"].is_f64(), "checked: {host}");
    assert!(host["own_t_seq_ms"].is_f64(), "{host}");
    let t_seq = r["t_seq_ms"].as_f64().unwrap();
    let speedup = host["speedup"].as_f64().unwrap();
    assert!((speedup - t_seq / host["median_ms"].as_f64().unwrap()).abs() < 1e-9);
    // The CSV's collective column says what each row ran.
    let mut args = vec!["run", "--preset"];
    args.extend(TP2);
    args.extend(["--mode", "sequential,host", "--csv", "-"]);
    args.extend(FAST);
    let o = t3(&args, &d);
    assert!(o.status.success(), "{}", stderr(&o));
    let mut csv = csv::Reader::from_reader(o.stdout.as_slice());
    let h = csv.headers().unwrap().clone();
    let col = |name: &str| h.iter().position(|x| x == name).unwrap();
    let ran: Vec<(String, String)> = csv
        .records()
        .map(|x| {
            let x = x.unwrap();
            (x[col("mode")].to_string(), x[col("collective")].to_string())
        })
        .collect();
    assert_eq!(
        ran,
        [
            ("sequential".to_string(), "all-reduce".to_string()),
            ("host".into(), "direct-all-reduce".into())
        ]
    );
    // Host alone: the ring's baselines still run, first.
    let r = run("host", &[]);
    assert_eq!(r["config"]["collective"], "all-reduce");
    assert!(config(&r, "host").starts_with("direct-all-reduce, "));
    // Named, the collective runs as named.
    let r = run("host", &["--collective", "all-reduce"]);
    assert!(!config(&r, "host").contains("direct"), "{r}");
    let _ = std::fs::remove_file(d.join(name));
}

/// Presets of one shape are one point, as the table keys it: tuned once under the first name, the
/// second said, so that a second tuning neither spends the budget again nor replaces the first.
#[test]
fn presets_of_one_shape_are_tuned_once() {
    let dir = tmp("one-point");
    let mut args = vec![
        "tune",
        "--presets",
        "megagpt2-fc2-tp2,megagpt2-fc1bwd-tp2",
        "--tokens",
        "2400",
        "--scale",
        "0.02",
        "--mode",
        "encoded",
        "--budget-s",
        "4",
    ];
    args.extend(FAST);
    let o = t3(&args, &dir);
    if no_adapter(&o) {
        return;
    }
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("megagpt2-fc1bwd-tp2: the same point as megagpt2-fc2-tp2, tuned above"),
        "{out}"
    );
    let (_, table) = default_table(&dir);
    let points = table["points"].as_array().unwrap();
    assert_eq!(points.len(), 1, "{table}");
    assert_eq!(points[0]["workload"], "megagpt2-fc2-tp2");
}

/// A mode the table puts at a configuration of its own runs apart from sequential's: its speedup is
/// still over the T_seq the report shows (not over its own configuration's sequential, which would
/// read as a gain where that sequential is the slower), and a note gives its own.
#[test]
fn a_mode_at_its_own_configuration_is_over_the_t_seq_shown() {
    let Some(d) = tuned_then("own", "encoded", |c| {
        c["fallback"] = false.into();
        c["knobs"]["chunks"] = 3.into();
    }) else {
        return;
    };
    let r = run_json(&d, "sequential,encoded");
    let (seq, enc) = (row(&r, "sequential"), row(&r, "encoded"));
    assert!(seq.get("own_t_seq_ms").is_none(), "{seq}");
    let own = enc["own_t_seq_ms"].as_f64().expect("its own sequential");
    let (t_seq, t) = (
        r["t_seq_ms"].as_f64().unwrap(),
        enc["median_ms"].as_f64().unwrap(),
    );
    assert!(own > 0.0 && own != t_seq, "{own} {t_seq}");
    assert!(
        (enc["speedup"].as_f64().unwrap() - t_seq / t).abs() < 1e-9,
        "{enc}"
    );
    // The first screen marks it and says what its own sequential took.
    let o = run_modes(&d, "sequential,encoded", &[]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("† encoded: over T_seq"), "{out}");
}

#[test]
fn bad_stale_and_foreign_tables_are_refused_or_said_and_ignored() {
    let d = tmp("bad");
    let Some((name, t)) = tune(&d, "encoded") else {
        return;
    };
    let mut run = vec!["run", "--shape", SHAPE, "--ranks", "2", "--mode", "encoded"];
    run.extend(FAST);
    let with = |file: &str| {
        let mut a = run.clone();
        a.extend(["--tune", file]);
        t3(&a, &d)
    };
    // Not JSON: a usage error naming the file, before any GPU work.
    std::fs::write(d.join("bad.json"), "{ not json").unwrap();
    let o = with("bad.json");
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("invalid tune table: bad.json"),
        "{}",
        stderr(&o)
    );
    // Another format.
    std::fs::write(d.join("link.json"), r#"{"adapter":"x","rows":[]}"#).unwrap();
    let o = with("link.json");
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("format none"), "{}", stderr(&o));
    // Stale: an older format version, or another tool version.
    let mut stale = t.clone();
    stale["version"] = 0.into();
    std::fs::write(d.join("stale.json"), stale.to_string()).unwrap();
    let o = with("stale.json");
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("stale: format version 0"),
        "{}",
        stderr(&o)
    );
    let mut old = t.clone();
    old["tool"] = "0.0.1".into();
    std::fs::write(d.join("old.json"), old.to_string()).unwrap();
    assert!(stderr(&with("old.json")).contains("by t3 0.0.1"));
    // A figure no run could have measured.
    for (field, value) in [
        ("median_ms", -1.0),
        ("speedup", 0.0),
        ("sequential_ms", -2.0),
    ] {
        let mut neg = t.clone();
        neg["points"][0]["modes"][0][field] = value.into();
        std::fs::write(d.join("neg.json"), neg.to_string()).unwrap();
        let e = stderr(&with("neg.json"));
        assert!(e.contains("positive finite times"), "{field}: {e}");
    }
    // A collective the point cannot run as (a reduce-scatter has no alternative), or none at all.
    for (name, says) in [
        (
            "direct-all-reduce",
            "the point's (reduce-scatter): it has no alternative",
        ),
        ("teleport", "invalid tuned collective: teleport"),
    ] {
        let mut other = t.clone();
        other["points"][0]["modes"][0]["knobs"]["collective"] = name.into();
        std::fs::write(d.join("other.json"), other.to_string()).unwrap();
        let o = with("other.json");
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains(says), "{name}: {}", stderr(&o));
    }
    // Foreign: tuned on another adapter.
    let mut foreign = t.clone();
    foreign["adapter"] = "Other GPU (Metal, 1.0)".into();
    std::fs::write(d.join("foreign.json"), foreign.to_string()).unwrap();
    let o = with("foreign.json");
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("tuned on Other GPU (Metal, 1.0)"),
        "{}",
        stderr(&o)
    );
    // Missing.
    let o = with("missing.json");
    assert_ne!(o.status.code(), Some(0));
    assert!(stderr(&o).contains("missing.json"));
    // `t3 tune --out` never replaces another adapter's table.
    let mut args = vec![
        "tune",
        "--shape",
        SHAPE,
        "--ranks",
        "2",
        "--mode",
        "encoded",
        "--budget-s",
        "1",
    ];
    args.extend(FAST);
    args.extend(["--out", "foreign.json"]);
    let o = t3(&args, &d);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("tuned on Other GPU"), "{}", stderr(&o));
    assert_eq!(
        std::fs::read_to_string(d.join("foreign.json")).unwrap(),
        foreign.to_string()
    );
    // auto: the same faults in the default table are said, and the run goes on without it.
    for (bad, says) in [(&stale, "stale"), (&foreign, "tuned on Other GPU")] {
        std::fs::write(d.join(&name), bad.to_string()).unwrap();
        let o = t3(&run, &d);
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(
            stderr(&o).contains("warning: tune table ignored"),
            "{}",
            stderr(&o)
        );
        assert!(stderr(&o).contains(says), "{}", stderr(&o));
    }
}

#[test]
fn tune_refuses_bad_budgets_and_workloads_before_any_gpu_work() {
    let d = tmp("usage");
    for (args, needle) in [
        (
            vec!["tune", "--shape", SHAPE, "--budget-s", "0"],
            "from 1 to 86400",
        ),
        (
            vec!["tune", "--shape", SHAPE, "--budget-s", "nan"],
            "from 1 to 86400",
        ),
        (vec!["tune"], "--presets NAME"),
    ] {
        let o = t3(&args, &d);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(needle), "{args:?}: {}", stderr(&o));
    }
}

#[test]
fn across_devices_the_chunk_count_is_the_models_and_the_table_keys_the_device_count() {
    let d = tmp("devices");
    let base = ["--shape", SHAPE, "--ranks", "2", "--devices", "2"];
    let modes = ["--mode", "sequential,host"];
    // No table, no --chunks: the model's count, said as such.
    let mut args = vec!["run"];
    args.extend(base);
    args.extend(modes);
    args.extend(FAST);
    args.extend(["--tune", "off", "--csv", "-"]);
    let o = t3(&args, &d);
    if no_adapter(&o) {
        return;
    }
    assert!(o.status.success(), "{}", stderr(&o));
    let mut r = csv::Reader::from_reader(o.stdout.as_slice());
    let rows: Vec<csv::StringRecord> = r.records().map(Result::unwrap).collect();
    let h = r.headers().unwrap().clone();
    let col = |name: &str| h.iter().position(|x| x == name).unwrap();
    assert_eq!(rows.len(), 2);
    for row in &rows {
        assert_eq!(&row[col("config_source")], "model", "{row:?}");
    }
    // Tuned across the devices: the point is the two-device one, and a one-device run ignores it.
    let mut args = vec!["tune"];
    args.extend(base);
    args.extend(modes);
    args.extend(FAST);
    args.extend(["--budget-s", "2", "--out", "two.json"]);
    let o = t3(&args, &d);
    assert!(o.status.success(), "{}", stderr(&o));
    let t: Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("two.json")).unwrap()).unwrap();
    assert_eq!(t["points"][0]["key"]["devices"], 2);
    assert_eq!(t["points"][0]["modes"][0]["mode"], "host");
    let rows = run_csv(&d, &["--mode", "host", "--tune", "two.json"]);
    assert_eq!(&rows[0][5], "flags", "{:?}", rows[0]);
}
