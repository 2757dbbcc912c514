//! The direct all-reduce as a choice: tuned for every mode but fused, and run as the table says.

use super::*;

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
    args.extend(["--mode", "sequential,host", "--budget-s", "6", SEARCH]);
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
