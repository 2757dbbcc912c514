//! What the tuner chooses and how a run takes it: the fastest measured, a flag given over the
//! table, the said fallback, a mode that cannot run, a mode at its own configuration.

use super::*;

#[test]
fn the_tuner_chooses_the_fastest_it_measured_and_run_takes_it() {
    let d = tmp("end-to-end");
    let Some((name, t)) = tune(&d, "host,encoded") else {
        return;
    };
    assert_eq!(t["format"], "t3-tune");
    assert_eq!(t["version"], t3_wgpu::tune::table::VERSION);
    assert!(t["adapter"].as_str().is_some_and(|a| !a.is_empty()));
    assert!(t["date"].as_str().is_some_and(|a| a.ends_with('Z')));
    let p = &t["points"][0];
    assert_eq!(p["key"]["m"], 64);
    assert_eq!(p["key"]["ranks"], 2);
    let seq = p["sequential_ms"].as_f64().unwrap();
    assert!(seq.is_finite() && seq > 0.0);
    let modes = p["modes"].as_array().unwrap();
    assert!(!modes.is_empty(), "{p}");
    // Sequential on warm clocks per layout (chunks, reduce, link, grid, collective, order): its
    // fastest figure beside any measurement of any mode; the point's, the fastest layout's of its
    // own collective (the ring's, which the knobs leave unnamed).
    let layout = |a: &serde_json::Value| {
        let k = &a["knobs"];
        format!(
            "{} {} {} {} {} {}",
            k["chunks"],
            k["reduce"],
            k["link_workgroups"],
            k["gemm_grid"],
            k["collective"],
            k["order"]
        )
    };
    let mut own = f64::INFINITY;
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
                if a["knobs"]["collective"].is_null() {
                    own = own.min(t);
                }
            }
        }
    }
    assert!((seq - own).abs() < 1e-9, "{seq} {warm:?}");
    // Figures parsed back from JSON may lie a rounding away from the tuner's.
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-12 * a.abs().max(b.abs());
    // A choice runs only where it leads sequential by the least lead.
    let least = 1.0 + t3_wgpu::tune::search::LEAST_LEAD;
    let on_warm_clocks = |a: &serde_json::Value| {
        let (t, beside) = (a["median_ms"].as_f64()?, a["sequential_ms"].as_f64()?);
        Some(t * warm[&layout(a)] / beside)
    };
    for c in modes {
        let best = c["median_ms"].as_f64().unwrap();
        let alts = c["alternatives"].as_array().unwrap();
        assert!(!alts.is_empty());
        // The choice is the confirmed configuration (of the three fastest alternatives and the
        // configuration as given) fastest by its slowest figure on warm clocks, or the
        // configuration as given where that one does not lead it clearly (by 3% both on warm
        // clocks and by the ratio to the sequential beside each, their confirmations compared);
        // its speedup and fallback follow the chosen configuration's slowest figure (a fallback
        // below the least lead).
        let confirmed = c["confirmed"].as_array().unwrap();
        assert!(confirmed.len() <= 4, "{c}");
        if confirmed.is_empty() {
            // Past its share, a mode whose every figure read slower than the sequential beside it,
            // or under the least lead ahead (on the point's own collective), is not confirmed: it
            // falls back whatever one more figure says.
            let behind = |a: &serde_json::Value| {
                a["knobs"]["collective"].is_null()
                    && matches!(
                        (a["sequential_ms"].as_f64(), a["median_ms"].as_f64()),
                        (Some(s), Some(m)) if s / m < least + 1e-9
                    )
            };
            let mut timed = alts.iter().filter(|a| a["median_ms"].is_f64());
            assert!(timed.clone().count() > 0 && timed.all(behind), "{c}");
            assert!(c["fallback"].as_bool().unwrap(), "{c}");
            continue;
        }
        let slowest = |a: &serde_json::Value| {
            alts.iter()
                .chain(confirmed)
                .filter(|f| f["knobs"] == a["knobs"])
                .filter_map(on_warm_clocks)
                .fold(f64::NEG_INFINITY, f64::max)
        };
        let fastest = confirmed
            .iter()
            .filter(|a| on_warm_clocks(a).is_some())
            .map(slowest)
            .fold(f64::INFINITY, f64::min);
        assert!(close(slowest(&confirmed[0]), fastest), "{c}");
        let chosen = confirmed
            .iter()
            .chain(alts)
            .find(|a| a["knobs"] == c["knobs"] && a["median_ms"].as_f64() == Some(best))
            .expect("the choice's figure is one measured");
        let t_chosen = slowest(chosen);
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
            slowest(&confirmed[0]) * 1.03 < slowest(g) + slack
                && ratio(&confirmed[0]) > ratio(g) * 1.03 - slack
        };
        if confirmed[0]["knobs"] != c["knobs"] {
            assert!(
                is_given(chosen),
                "only the configuration as given stands in the fastest's place: {c}"
            );
            assert!(
                seq / t_chosen >= least || close(seq / t_chosen, least),
                "a given that would fall back never stands: {c}"
            );
            if confirmed.contains(chosen) {
                assert!(!leads(chosen, -1e-9), "beaten clearly: {c}");
            }
        } else if let Some(g) = confirmed
            .iter()
            .find(|a| is_given(a) && a["median_ms"].is_f64() && a["knobs"] != c["knobs"])
        {
            // The fastest confirmed replaced the configuration as given: it led clearly, or the
            // given would fall back.
            assert!(
                leads(g, 1e-9) || seq / slowest(g) < least + 1e-9,
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
        // Slower than sequential, or leading it by less than a choice needs: a fallback.
        if !close(seq / t_chosen, least) {
            assert_eq!(c["fallback"].as_bool().unwrap(), seq / t_chosen < least);
        }
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
    assert!(host[6].contains("0.5000x"), "{host:?}");
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
    // Each point says what it took of its share.
    assert!(
        out.lines()
            .any(|l| l.starts_with("  tuned in ") && l.ends_with(" s share")),
        "{out}"
    );
    let p = &t["points"][0];
    assert_eq!(p["not_run"][0]["mode"], "fused", "{p}");
    assert!(
        p["not_run"][0]["why"].as_str().unwrap().contains("spares"),
        "{p}"
    );
    assert_eq!(tuned_modes(p), ["encoded"], "{p}");
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

/// Fused mode at a configuration of its own runs in an experiment apart from the baselines': the
/// report still names what it ran (its configuration as resolved on the device, its own sequential
/// run), taken from that experiment.
#[test]
fn fused_at_its_own_configuration_says_what_it_ran() {
    let Some(d) = tuned_then("own-fused", "fused", |c| {
        c["fallback"] = false.into();
        let other = if c["knobs"]["chunks"] == 2 { 3 } else { 2 };
        c["knobs"]["chunks"] = other.into();
    }) else {
        return;
    };
    let r = run_json(&d, "sequential,fused");
    assert!(row(&r, "fused")["own_t_seq_ms"].as_f64().is_some(), "{r}");
    let config = r["fused_config"]
        .as_str()
        .expect("fused mode's configuration");
    assert!(config.contains("spares"), "{config}");
    let own = r["own"].as_array().expect("its own sequential run");
    assert!(own.iter().any(|o| o["mode"] == "fused"), "{own:?}");
    let o = run_modes(&d, "sequential,fused", &["--verbose"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.lines()
            .any(|l| l.starts_with("fused      ") && l.contains(config)),
        "{out}"
    );
}

/// A table's choice that cannot run here (an edited table, or flags that leave it invalid) is not
/// dropped without a word: the run says which configuration it could not take and why, and the
/// mode runs at its untuned one.
#[test]
fn a_choice_that_cannot_run_here_is_said() {
    let Some(d) = tuned_then("not-taken", "encoded", |c| {
        c["fallback"] = false.into();
        c["knobs"]["chunks"] = 100_000.into();
    }) else {
        return;
    };
    let o = run_modes(&d, "sequential,encoded", &["--json", "-"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("the tune table's encoded configuration (chunks 100000")
            && err.contains("invalid chunks per rank: 100000")
            && err.contains("encoded runs at its [flags] configuration instead"),
        "{err}"
    );
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    let enc = row(&r, "encoded");
    assert_eq!(enc["config_source"], "flags", "{enc}");
    assert!(
        enc["config"].as_str().unwrap().starts_with("chunks 1,"),
        "{enc}"
    );
}

/// A point whose first run leaves no room to overlap (one rank: nothing to move) is not searched:
/// each mode stands as given, measured once, and the point's line and table row say why;
/// `--search-no-room` searches it.
#[test]
fn a_point_without_room_to_overlap_stands_as_given_unless_searched() {
    let d = tmp("no-room");
    let args = |extra: &[&'static str]| {
        let mut a = vec![
            "tune", "--shape", SHAPE, "--ranks", "1", "--mode", "encoded",
        ];
        a.extend(["--budget-s", "3", "--out", "t.json"]);
        a.extend(FAST);
        a.extend(extra);
        a
    };
    let o = t3(&args(&[]), &d);
    if no_adapter(&o) {
        return;
    }
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(out.contains("\n  no room to overlap ("), "{out}");
    let read = || -> Value {
        serde_json::from_str(&std::fs::read_to_string(d.join("t.json")).unwrap()).unwrap()
    };
    let t = read();
    let p = &t["points"][0];
    assert!(
        p["no_room"]
            .as_str()
            .unwrap()
            .starts_with("no room to overlap ("),
        "{p}"
    );
    let encoded = &p["modes"][0];
    assert_eq!(encoded["alternatives"].as_array().unwrap().len(), 1, "{p}");
    assert!(encoded["confirmed"].as_array().unwrap().is_empty(), "{p}");
    let o = t3(&args(&[SEARCH]), &d);
    assert!(o.status.success(), "{}", stderr(&o));
    let p = &read()["points"][0];
    assert!(p.get("no_room").is_none(), "{p}");
    assert!(
        p["modes"][0]["alternatives"].as_array().unwrap().len() > 1,
        "{p}"
    );
}
