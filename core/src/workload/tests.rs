//! The preset table's names, shapes and suggestions, and its printed table.

use super::*;

#[test]
fn tnlg_fc2_tp8_shape() {
    let p = find("tnlg-fc2-tp8", 8192, 1.0).expect("preset exists");
    assert_eq!((p.m, p.n, p.k), (8192, 4256, 4 * 4256 / 8));
    assert_eq!(p.hidden, 4256);
    assert_eq!(p.tokens, 8192);
    assert_eq!(p.tp, 8);
    assert!(p.paper);
    assert_eq!(p.collective, Collective::AllReduce);
    assert_eq!(p.flops_per_rank(), 2.0 * 8192.0 * 4256.0 * 2128.0);
    assert_eq!(p.output_bytes(), 8192 * 4256 * 4);
    assert_eq!(
        p.bytes_communicated_per_rank(),
        2 * 7 * (8192 * 4256 * 4) / 8
    );
}

#[test]
fn tp2_shapes() {
    // Two ranks each hold half of the reduction: the paper's Megatron layout at TP 2.
    let get = |n: &str| find(n, DEFAULT_TOKENS, 1.0).unwrap_or_else(|| panic!("{n}"));
    let p = get("tnlg-op-tp2");
    assert_eq!((p.m, p.n, p.k, p.tp), (8192, 4256, 4256 / 2, 2));
    assert!(!p.paper);
    assert_eq!(p.bytes_communicated_per_rank(), p.output_bytes());
    assert_eq!(get("tnlg-fc2-tp2").k, 4 * 4256 / 2);
    assert_eq!(get("gpt3-op-tp2").k, 12288 / 2);
    let p = get("gpt3-fc2-tp2");
    assert_eq!((p.m, p.n, p.k), (8192, 12288, 4 * 12288 / 2));
    assert_eq!(p.b_bytes(), 24576 * 12288 * 4);
    assert_eq!(get("megagpt2-ipbwd-tp2").k, 3 * 3072 / 2);
    assert_eq!(get("palm-ipbwd-tp2").k, 3 * 18432 / 2);
}

#[test]
fn tp2_only_where_buffers_fit() {
    let tp2: Vec<String> = names()
        .into_iter()
        .filter(|n| n.ends_with("-tp2"))
        .collect();
    let mut want = Vec::new();
    for m in ["megagpt2", "tnlg", "gpt3"] {
        for s in ["op", "fc2", "fc1bwd", "ipbwd"] {
            want.push(format!("{m}-{s}-tp2"));
        }
    }
    want.insert(12, "mtnlg-op-tp2".into());
    want.extend(["palm-op-tp2".into(), "palm-ipbwd-tp2".into()]);
    assert_eq!(tp2, want);
    // The ones left out are over the limit by their weight slice, and only at TP 2.
    for model in &MODELS {
        for sub in &SUBLAYERS {
            let p = build(model, sub, 2, DEFAULT_TOKENS, 1.0);
            assert_eq!(
                offered(model, sub, 2),
                p.b_bytes() <= PRESET_BUFFER_LIMIT,
                "{}",
                p.name
            );
            for tp in [4, 8, 16, 32] {
                assert!(offered(model, sub, tp));
            }
        }
    }
    assert!(closest("mtnlg-fc2-tp2").is_some_and(|c| c != "mtnlg-fc2-tp2"));
}

#[test]
fn sublayer_k_formulas() {
    let t = 16;
    let h = 12288;
    let get = |s: &str| find(&format!("gpt3-{s}-tp{t}"), 1024, 1.0).unwrap();
    assert_eq!(get("op").k, h / t);
    assert_eq!(get("fc2").k, 4 * h / t);
    assert_eq!(get("fc1bwd").k, 4 * h / t);
    assert_eq!(get("ipbwd").k, 3 * h / t);
    for s in ["op", "fc2", "fc1bwd", "ipbwd"] {
        let p = get(s);
        assert_eq!((p.m, p.n), (1024, h));
    }
}

#[test]
fn built_in_models_divide_exactly() {
    // Unscaled, t·K equals the full reduction for every preset (no ceil padding).
    for p in presets(DEFAULT_TOKENS, 1.0) {
        let model = MODELS.iter().find(|m| m.key == p.model).unwrap();
        let sub = SUBLAYERS.iter().find(|s| s.key == p.sublayer).unwrap();
        assert_eq!(p.k * p.tp, sub.reduce.full(model), "{}", p.name);
    }
}

#[test]
fn k_rounds_up() {
    let model = Model {
        key: "odd",
        long: "odd",
        hidden: 10,
        ffn: 40,
        layers: 1,
        heads: 1,
        paper_tp: &[],
    };
    let p = build(&model, &SUBLAYERS[0], 4, 8, 1.0);
    assert_eq!(p.k, 3); // ceil(10 / 4)
    let p = build(&model, &SUBLAYERS[3], 4, 8, 1.0);
    assert_eq!(p.k, 8); // ceil(30 / 4)
}

#[test]
fn every_name_parses_back() {
    let names = names();
    assert_eq!(names.len(), 95);
    for n in &names {
        let p = find(n, DEFAULT_TOKENS, 1.0).unwrap_or_else(|| panic!("{n} not found"));
        assert_eq!(&p.name, n);
        let upper = find(&n.to_uppercase(), DEFAULT_TOKENS, 1.0).unwrap();
        assert_eq!(&upper.name, n);
    }
    let table_names: Vec<String> = presets(DEFAULT_TOKENS, 1.0)
        .into_iter()
        .map(|p| p.name)
        .collect();
    assert_eq!(table_names, names);
    assert!(find("tnlg-fc2-tp7", DEFAULT_TOKENS, 1.0).is_none());
    assert!(find("mtnlg-fc2-tp2", DEFAULT_TOKENS, 1.0).is_none());
}

#[test]
fn names_are_unique() {
    let mut names = names();
    let n = names.len();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), n);
}

#[test]
fn tiny_scale_never_zero() {
    for scale in [0.01, 1e-6, f64::MIN_POSITIVE] {
        for p in presets(1, scale) {
            assert!(p.m >= 1 && p.n >= 1 && p.k >= 1 && p.hidden >= 1, "{p:?}");
        }
    }
    let p = find("megagpt2-op-tp32", 8192, 0.01).unwrap();
    assert_eq!((p.m, p.n, p.k), (82, 31, 1)); // 81.92, 30.72, 0.96
    assert_eq!(p.hidden, p.n);
}

#[test]
fn scale_half() {
    let p = find("mtnlg-fc2-tp32", 8192, 0.5).unwrap();
    assert_eq!((p.m, p.n, p.k), (4096, 10240, 1280));
    assert_eq!(p.tokens, 8192);
}

#[test]
fn bad_parameters_give_no_presets() {
    assert!(presets(8192, 1.5).is_empty());
    assert!(presets(8192, 0.0).is_empty());
    assert!(presets(0, 1.0).is_empty());
    assert!(find("tnlg-fc2-tp8", 8192, f64::NAN).is_none());
}

#[test]
fn paper_marks() {
    let ps = presets(DEFAULT_TOKENS, 1.0);
    let paper: Vec<&str> = ps
        .iter()
        .filter(|p| p.paper && p.sublayer == "op")
        .map(|p| p.name.as_str())
        .collect();
    assert_eq!(
        paper,
        [
            "megagpt2-op-tp8",
            "megagpt2-op-tp16",
            "tnlg-op-tp8",
            "tnlg-op-tp16",
            "gpt3-op-tp32",
            "mtnlg-op-tp32",
            "palm-op-tp32",
        ]
    );
    assert_eq!(ps.iter().filter(|p| p.paper).count(), 7 * 4);
}

#[test]
fn communication_formulas() {
    let mut p = find("gpt3-op-tp4", 100, 1.0).unwrap();
    let s = p.output_bytes();
    assert_eq!(p.bytes_communicated_per_rank(), s * 2 * 3 / 4);
    for c in [
        Collective::ReduceScatter,
        Collective::DirectReduceScatter,
        Collective::AllGather,
    ] {
        p.collective = c;
        assert_eq!(p.bytes_communicated_per_rank(), s * 3 / 4);
    }
    // Every partial whole to each of the t-1 peers.
    p.collective = Collective::DirectAllReduce;
    assert_eq!(p.bytes_communicated_per_rank(), s * 3);
    p.tp = 2;
    assert_eq!(p.bytes_communicated_per_rank(), s);
    p.tp = 1;
    assert_eq!(p.bytes_communicated_per_rank(), 0);
}

/// The collective the tuner may run in a point's place moves no more bytes than the point's own,
/// and exists where it moves the same (the direct all-reduce at two ranks).
#[test]
fn an_alternative_collective_moves_no_more_bytes() {
    let mut p = find("gpt3-op-tp4", 100, 1.0).unwrap();
    let mut offered = 0;
    for tp in 1..=8 {
        p.tp = tp;
        for c in Collective::ALL {
            p.collective = c;
            let own = p.bytes_communicated_per_rank();
            let Some(a) = c.alternative(tp) else { continue };
            assert_ne!(a, c);
            offered += 1;
            p.collective = a;
            assert!(
                p.bytes_communicated_per_rank() <= own,
                "{a} for {c} at {tp}"
            );
        }
    }
    assert_eq!(offered, 1, "the ring's all-reduce at two ranks");
}

#[test]
fn default_tokens_fit_2gib_binding() {
    for p in presets(DEFAULT_TOKENS, 1.0) {
        assert!(
            p.largest_buffer_bytes() <= PRESET_BUFFER_LIMIT,
            "{}",
            p.name
        );
    }
}

#[test]
fn closest_suggestions() {
    let s = closest("tnlg-fc2-tp7").unwrap();
    assert!(s.starts_with("tnlg-fc2-tp"), "{s}");
    assert_eq!(s, "tnlg-fc2-tp8"); // tie with tp4 goes to the paper's preset
    assert_eq!(closest("GPT3-FC2-TP32").as_deref(), Some("gpt3-fc2-tp32"));
    assert_eq!(closest("gtp3-fc2-tp32").as_deref(), Some("gpt3-fc2-tp32"));
    assert_eq!(closest("mtnlg-fc1-tp32").as_deref(), Some("mtnlg-fc2-tp32"));
    assert_eq!(closest("palm-ipbwd").as_deref(), Some("palm-ipbwd-tp32"));
    assert_eq!(closest("megagpt2").as_deref(), Some("megagpt2-op-tp8"));
    assert_eq!(closest("completely-unrelated-words-here"), None);
    assert_eq!(closest(""), None);
}

#[test]
fn table_has_every_row_and_aligned_columns() {
    let ps = presets(DEFAULT_TOKENS, 1.0);
    let t = table(&ps);
    let lines: Vec<&str> = t.lines().collect();
    assert_eq!(lines.len(), ps.len() + 2);
    assert!(lines[0].starts_with("name"));
    assert!(lines[0].contains("GFLOP/rank") && lines[0].contains("MiB comm/rank"));
    assert!(lines[1].starts_with("----"));
    // Rows with a paper marker end at the same column as the header.
    let width = lines[0].len();
    for (line, p) in lines[2..].iter().zip(&ps) {
        assert!(line.starts_with(&p.name));
        if p.paper {
            assert_eq!(line.len(), width, "{line}");
            assert!(line.ends_with('*'));
        }
    }
    // tnlg-fc2-tp8: 2·8192·4256·2128 / 1e9 = 148.4 GFLOP; 2·7/8·8192·4256·4 B = 232.8 MiB.
    let row = lines
        .iter()
        .find(|l| l.starts_with("tnlg-fc2-tp8 "))
        .unwrap();
    assert!(row.contains("148.4"), "{row}");
    assert!(row.contains("232.8"), "{row}");
}

#[test]
fn quantities_stay_readable() {
    assert_eq!(fmt_quantity(148.386), "148.4");
    assert_eq!(fmt_quantity(4.8318), "4.832");
    assert_eq!(fmt_quantity(0.0), "0.0");
    assert_eq!(fmt_quantity(0.000123), "1.23e-4");
}

#[test]
fn serializes() {
    let p = find("palm-fc1bwd-tp32", 8192, 1.0).unwrap();
    let v = serde_json::to_value(&p).unwrap();
    assert_eq!(v["name"], "palm-fc1bwd-tp32");
    assert_eq!(v["k"], 73728 / 32);
    assert_eq!(v["paper"], true);
}
