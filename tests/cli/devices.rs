//! The link between devices: `t3 calibrate --devices`, and the devices it refuses.

use super::*;

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
    // The send kernels' budget as `run` takes it: a dispatch's limit per dimension.
    let o = t3_within(
        &["calibrate", "--devices", "2", "--link-workgroups", "65536"],
        &[],
        &d,
        60,
    );
    assert_usage(&o, &["--link-workgroups", "between 1 and 65535"]);
    let o = t3_within(&["calibrate", "--stream-mib", "8"], &[], &d, 60);
    assert_usage(&o, &["--devices"]);
    if common::gpu().is_none() {
        return;
    }
    // A largest chunk past what one buffer holds is refused before any chunk is timed, naming
    // the devices' limit (every adapter's buffers stop short of 4 GiB).
    let o = t3_within(
        &[
            "calibrate",
            "--devices",
            "2",
            "--mib",
            "4096",
            "--reps",
            "1",
        ],
        &[],
        &d,
        60,
    );
    assert_usage(
        &o,
        &["--mib", "4096", "MiB on these devices", "max_buffer_size"],
    );
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
