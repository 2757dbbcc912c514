//! The table as a file: presets of one shape tuned once, bad, stale and foreign tables, what is
//! refused before any GPU work, and the device count in its keys.

use super::*;

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
        SEARCH,
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
    // A table `--tune FILE` refuses: a usage error saying what is wrong, before any GPU work.
    let refused = |file: &str, text: &str, says: &str| {
        std::fs::write(d.join(file), text).unwrap();
        let o = with(file);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains(says), "{file}: {}", stderr(&o));
    };
    // Not JSON: named.
    refused("bad.json", "{ not json", "invalid tune table: bad.json");
    // Another format.
    refused("link.json", r#"{"adapter":"x","rows":[]}"#, "format none");
    // Stale: an older format version, or another tool version.
    let mut stale = t.clone();
    stale["version"] = 0.into();
    refused("stale.json", &stale.to_string(), "stale: format version 0");
    let mut old = t.clone();
    old["tool"] = "0.0.1".into();
    std::fs::write(d.join("old.json"), old.to_string()).unwrap();
    assert!(stderr(&with("old.json")).contains("by t3 0.0.1"));
    // A figure no run could have measured, named.
    for (field, value, named) in [
        ("median_ms", -1.0, ": time -1 ms"),
        ("speedup", 0.0, ": speedup 0x"),
        ("sequential_ms", -2.0, ": sequential beside it -2 ms"),
    ] {
        let mut neg = t.clone();
        neg["points"][0]["modes"][0][field] = value.into();
        std::fs::write(d.join("neg.json"), neg.to_string()).unwrap();
        let e = stderr(&with("neg.json"));
        assert!(
            e.contains("positive finite times") && e.contains(named),
            "{field}: {e}"
        );
    }
    // A collective the point cannot run as (a reduce-scatter has no alternative), or none at all.
    for (name, says) in [
        (
            "direct-all-reduce",
            "the point's (reduce-scatter): it has no alternative",
        ),
        (
            "teleport",
            "invalid tuned collective: teleport in other.json, point",
        ),
    ] {
        let mut other = t.clone();
        other["points"][0]["modes"][0]["knobs"]["collective"] = name.into();
        refused("other.json", &other.to_string(), says);
    }
    // A point, or a mode in it, twice: which a run took would be the file's order.
    let mut twice = t.clone();
    let first = twice["points"][0].clone();
    twice["points"].as_array_mut().unwrap().push(first);
    refused(
        "twice.json",
        &twice.to_string(),
        "twice (must be one entry per point",
    );
    let mut twice = t.clone();
    let first = twice["points"][0]["modes"][0].clone();
    twice["points"][0]["modes"]
        .as_array_mut()
        .unwrap()
        .push(first);
    refused(
        "twice.json",
        &twice.to_string(),
        ", encoded twice (must be one",
    );
    // Foreign: tuned on another adapter.
    let mut foreign = t.clone();
    foreign["adapter"] = "Other GPU (Metal, 1.0)".into();
    refused(
        "foreign.json",
        &foreign.to_string(),
        "tuned on Other GPU (Metal, 1.0)",
    );
    // Missing.
    let o = with("missing.json");
    assert_ne!(o.status.code(), Some(0));
    assert!(stderr(&o).contains("missing.json"));
    // `t3 tune --out` never replaces another adapter's table.
    let o = t3(&tune_args("encoded", "1", &["--out", "foreign.json"]), &d);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("tuned on Other GPU"), "{}", stderr(&o));
    assert_eq!(
        std::fs::read_to_string(d.join("foreign.json")).unwrap(),
        foreign.to_string()
    );
    // Nor a file that is no tune table (given by mistake); a stale table it replaces.
    std::fs::write(d.join("notes.txt"), "my notes").unwrap();
    let o = t3(&tune_args("encoded", "1", &["--out", "notes.txt"]), &d);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("invalid --out: notes.txt"),
        "{}",
        stderr(&o)
    );
    assert_eq!(
        std::fs::read_to_string(d.join("notes.txt")).unwrap(),
        "my notes"
    );
    let o = t3(&tune_args("encoded", "1", &["--out", "stale.json"]), &d);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("starting a new table"),
        "{}",
        stderr(&o)
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
        // Nothing to choose: its table would only replace the points' choices.
        (
            vec!["tune", "--shape", SHAPE, "--mode", "sequential"],
            "invalid --mode: sequential (must be a mode to tune besides sequential",
        ),
    ] {
        let o = t3(&args, &d);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(needle), "{args:?}: {}", stderr(&o));
    }
    assert_eq!(
        std::fs::read_dir(&d).unwrap().count(),
        0,
        "no table written"
    );
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
    args.extend(["--budget-s", "2", "--out", "two.json", SEARCH]);
    let o = t3(&args, &d);
    assert!(o.status.success(), "{}", stderr(&o));
    let t: Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("two.json")).unwrap()).unwrap();
    assert_eq!(t["points"][0]["key"]["devices"], 2);
    assert_eq!(t["points"][0]["modes"][0]["mode"], "host");
    let rows = run_csv(&d, &["--mode", "host", "--tune", "two.json"]);
    assert_eq!(&rows[0][5], "flags", "{:?}", rows[0]);
}
