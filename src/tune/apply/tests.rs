//! `plan`'s CPU tests: which configuration each mode runs (the table's, the model's, the flags'),
//! and what a run says of a table choice it cannot take.

use super::{baseline_group, fallback_note, mode_checks, mode_warmups, plan, Fallback, ModePlan};
use crate::config::host::HostGrain;
use crate::config::{Config, ModeKind};
use crate::consistency::{Check, Kind};
use crate::schedule::{Collective, Order};
use crate::shapes::Shape;
use crate::tune::knobs::{Given, Knobs, Source};
use crate::tune::table::{Choice, Key, Point, Table};
use crate::tune::tests::config;

#[test]
fn a_tables_grain_wins_over_the_models_and_is_said_as_a_stage() {
    // The model's grain across four devices, set on the point as `model_defaults` sets it.
    let mut base = config(Collective::AllReduce);
    base.host.grain = Some(HostGrain::Chunks(2));
    let staged = Knobs {
        host_grain: None,
        ..Knobs::of(&base)
    };
    let choice = paying(ModeKind::Host, staged.clone());
    let mut t = Table::new("GPU (Vulkan, 1)", "Vulkan", "1");
    t.insert(Point {
        workload: "p".into(),
        key: Key::of(&base, 4),
        sequential_ms: 3.0,
        modes: vec![choice],
        not_run: Vec::new(),
        no_room: None,
    });
    let modes = [ModeKind::Sequential, ModeKind::Host];
    let tuned = plan(
        &base,
        &modes,
        Some(&t),
        4,
        wgpu::DeviceType::DiscreteGpu,
        &Given::default(),
        true,
    );
    assert_eq!(
        (tuned[1].source, tuned[1].config.host.grain),
        (Source::Table, None)
    );
    assert!(staged.describe(ModeKind::Host).contains("grain stage"));
    // Sequential has no choice in the table: the point as the model made it.
    assert_eq!(tuned[0].source, Source::Model);
    let untuned = plan(
        &base,
        &modes,
        None,
        4,
        wgpu::DeviceType::DiscreteGpu,
        &Given::default(),
        true,
    );
    assert_eq!(
        (untuned[1].source, untuned[1].config.host.grain),
        (Source::Model, Some(HostGrain::Chunks(2)))
    );
    assert!(Knobs::of(&untuned[1].config)
        .describe(ModeKind::Host)
        .contains("grain 2 chunks"));
}

#[test]
fn without_a_table_fused_runs_its_own_configuration_on_one_gpu() {
    // tnlg-op-tp2 in f32: chunks of the GEMM long enough for the chunk order.
    let base = Config::new(Shape::new(8192, 4256, 2128).unwrap(), 2);
    let gpu = wgpu::DeviceType::DiscreteGpu;
    let modes = [ModeKind::Sequential, ModeKind::Encoded, ModeKind::Fused];
    let untuned = plan(&base, &modes, None, 1, gpu, &Given::default(), false);
    let at = |p: &ModePlan| (p.source, p.config.chunks, p.config.order);
    assert_eq!(at(&untuned[0]), (Source::Flags, 1, Order::Stage));
    assert_eq!(at(&untuned[1]), (Source::Flags, 1, Order::Stage));
    assert_eq!(at(&untuned[2]), (Source::Model, 4, Order::Chunk));
    // A CPU adapter, several devices, or `--chunks` given: fused runs the point as given.
    let chunks = Given {
        chunks: true,
        ..Given::default()
    };
    for (devices, kind, given) in [
        (1, wgpu::DeviceType::Cpu, Given::default()),
        (2, gpu, Given::default()),
        (1, gpu, chunks),
    ] {
        let p = plan(&base, &modes, None, devices, kind, &given, false);
        assert_eq!(at(&p[2]), (Source::Flags, 1, Order::Stage));
    }
    // A table's choice for fused wins over the model's.
    let knobs = Knobs {
        chunks: 2,
        ..Knobs::of(&base)
    };
    let mut t = Table::new("GPU (Vulkan, 1)", "Vulkan", "1");
    t.insert(Point {
        workload: "p".into(),
        key: Key::of(&base, 1),
        sequential_ms: 3.0,
        modes: vec![paying(ModeKind::Fused, knobs)],
        not_run: Vec::new(),
        no_room: None,
    });
    let tuned = plan(&base, &modes, Some(&t), 1, gpu, &Given::default(), false);
    assert_eq!(at(&tuned[2]), (Source::Table, 2, Order::Stage));
}

/// A table's choice for `mode` at `knobs` that pays (1.5x), with nothing else measured.
fn paying(mode: ModeKind, knobs: Knobs) -> Choice {
    Choice {
        mode,
        knobs,
        median_ms: 2.0,
        sequential_ms: Some(3.0),
        speedup: 1.5,
        fallback: false,
        model_ms: None,
        given_ms: None,
        alternatives: Vec::new(),
        confirmed: Vec::new(),
    }
}

fn group(c: &Config, modes: &[ModeKind]) -> (Config, Vec<ModeKind>, String) {
    (c.clone(), modes.to_vec(), serde_json::to_string(c).unwrap())
}

#[test]
fn the_baselines_are_sequentials_or_the_points_never_another_modes_own() {
    let base = Config::new(Shape::new(64, 64, 64).unwrap(), 4);
    let own = Config {
        chunks: 4,
        order: Order::Chunk,
        ..base.clone()
    };
    let tuned_seq = Config {
        gemm_grid: Some(128),
        ..base.clone()
    };
    let direct = Config {
        collective: Collective::DirectReduceScatter,
        ..base.clone()
    };
    use ModeKind::{Encoded, Fused, Sequential};
    // Fused at its own configuration asked alone: the point's runs for the baselines.
    assert_eq!(baseline_group(&[group(&own, &[Fused])], &base), None);
    // Beside the point's: the point's, wherever it comes.
    let g = [group(&own, &[Fused]), group(&base, &[Encoded])];
    assert_eq!(baseline_group(&g, &base), Some(1));
    // Sequential's own (a table's) before the point's.
    let g = [
        group(&base, &[Encoded]),
        group(&own, &[Fused]),
        group(&tuned_seq, &[Sequential]),
    ];
    assert_eq!(baseline_group(&g, &base), Some(2));
    // Sequential's on another collective does not time them.
    let g = [group(&direct, &[Sequential]), group(&own, &[Fused])];
    assert_eq!(baseline_group(&g, &base), None);
}

/// A table holding only `choice`, at `base` on one device.
fn holding(base: &Config, choice: Choice) -> Table {
    let mut t = Table::new("GPU (Vulkan, 1)", "Vulkan", "1");
    t.insert(Point {
        workload: "p".into(),
        key: Key::of(base, 1),
        sequential_ms: 3.0,
        modes: vec![choice],
        not_run: Vec::new(),
        no_room: None,
    });
    t
}

#[test]
fn a_choice_that_cannot_run_here_is_said_where_its_mode_runs_untuned() {
    use crate::plan::ReduceVia;
    use ModeKind::{Encoded, Fused, Host, Sequential};
    let gpu = wgpu::DeviceType::DiscreteGpu;
    let reduce = Given {
        reduce: true,
        ..Given::default()
    };
    // More chunks than the shape has rows: said, and encoded runs the point as the flags give it.
    let base = config(Collective::ReduceScatter);
    let many = Knobs {
        chunks: 100_000,
        ..Knobs::of(&base)
    };
    let t = holding(&base, paying(Encoded, many));
    let p = plan(
        &base,
        &[Sequential, Encoded],
        Some(&t),
        1,
        gpu,
        &Given::default(),
        false,
    );
    assert_eq!((p[1].source, p[1].config.chunks), (Source::Flags, 1));
    let said = p[1].not_taken.as_deref().expect("said");
    assert!(
        said.starts_with("the tune table's encoded configuration (chunks 100000,")
            && said.contains("invalid chunks per rank: 100000")
            && said.ends_with("encoded runs at its [flags] configuration instead"),
        "{said}"
    );
    assert_eq!(p[0].not_taken, None);
    // A flag given over a choice that then cannot run (the direct all-reduce reduces by update):
    // said as the flags' doing.
    let landed = Config {
        collective: Collective::AllReduce,
        via: ReduceVia::Land,
        ..Config::new(Shape::new(96, 40, 24).unwrap(), 2)
    };
    let direct = Knobs {
        collective: Some("direct-all-reduce".into()),
        reduce: "update".into(),
        ..Knobs::of(&landed)
    };
    let t = holding(&landed, paying(Host, direct));
    let p = plan(
        &landed,
        &[Sequential, Host],
        Some(&t),
        1,
        gpu,
        &reduce,
        false,
    );
    let said = p[1].not_taken.as_deref().expect("said");
    assert!(
        said.contains("(direct-all-reduce, chunks 1, reduce update")
            && said.contains(") with the flags given (direct-all-reduce, chunks 1, reduce land"),
        "{said}"
    );
    assert_eq!(p[1].config.via, ReduceVia::Land);
    // Where the mode cannot run untuned either, its row says it is skipped and why: nothing here.
    let base_land = Config {
        via: ReduceVia::Land,
        ..base.clone()
    };
    assert!(base_land.check_mode(Fused).is_err());
    let t = holding(&base_land, paying(Fused, Knobs::of(&base)));
    let p = plan(
        &base_land,
        &[Sequential, Fused],
        Some(&t),
        1,
        gpu,
        &reduce,
        false,
    );
    assert_eq!(p[1].not_taken, None);
}

#[test]
fn a_later_experiment_keeps_its_modes_checks_and_its_failed_baselines_as_theirs() {
    let check = |name: &str, subject: Option<&str>, ok: bool| Check {
        name: name.into(),
        kind: Kind::Spread,
        subject: subject.map(Into::into),
        beside: subject.unwrap_or("T_seq").into(),
        ok,
        detail: String::new(),
    };
    let checks = vec![
        check("spread T_gemm", None, true),
        check("spread T_seq", None, false),
        check("spread gemm_untracked", Some("gemm_untracked"), false),
        check("spread T_fused", Some("fused"), true),
        check("spread T_host", Some("host"), false),
    ];
    let kept = mode_checks(checks, &[ModeKind::Fused]);
    let said: Vec<(&str, Option<&str>, &str, bool)> = kept
        .iter()
        .map(|c| {
            (
                c.name.as_str(),
                c.subject.as_deref(),
                c.beside.as_str(),
                c.ok,
            )
        })
        .collect();
    assert_eq!(
        said,
        [
            (
                "spread T_seq (at fused's configuration)",
                Some("fused"),
                "fused",
                false
            ),
            ("spread T_fused", Some("fused"), "fused", true),
        ]
    );
}

#[test]
fn a_later_experiment_keeps_every_warm_up_its_baselines_named_as_its_modes() {
    let warmup = |what: &str, settled: bool| crate::stats::Warmup {
        what: what.into(),
        runs: 7,
        seconds: 1.5,
        settled,
    };
    let warmups = vec![
        warmup("sequential", false),
        warmup("fused", true),
        warmup("fused_sequential", true),
    ];
    let kept = mode_warmups(warmups.clone(), &[ModeKind::Fused]);
    let said: Vec<(&str, bool)> = kept.iter().map(|w| (w.what.as_str(), w.settled)).collect();
    assert_eq!(
        said,
        [
            ("sequential (at fused's configuration)", false),
            ("fused", true),
            ("fused_sequential", true),
        ]
    );
    // Two modes at one configuration: the baselines' warm-up is each mode's; another mode's own
    // sequential run is a baseline there.
    let kept = mode_warmups(warmups, &[ModeKind::Host, ModeKind::Encoded]);
    let said: Vec<&str> = kept.iter().map(|w| w.what.as_str()).collect();
    assert_eq!(
        said,
        [
            "sequential (at host's configuration)",
            "sequential (at encoded's configuration)",
            "fused (at host's configuration)",
            "fused (at encoded's configuration)",
            "fused_sequential (at host's configuration)",
            "fused_sequential (at encoded's configuration)",
        ]
    );
}

/// A fallback's row says its tuned best's speedup; where that led sequential (by less than a choice
/// needs, or on a point without room to overlap, which asks more), why it fell back still.
#[test]
fn a_fallback_says_its_speedup_and_why_where_it_led() {
    let f = |speedup, no_room| Fallback {
        speedup,
        config: "chunks 1".into(),
        no_room,
    };
    assert_eq!(
        fallback_note(&f(0.996, false), false),
        "fell back to sequential: its tuned best (chunks 1) ran 0.9960x of sequential"
    );
    assert_eq!(
        fallback_note(&f(1.003, false), false),
        "fell back to sequential: its tuned best (chunks 1) ran 1.0030x of sequential, a lead \
         under the 0.5% a choice needs"
    );
    assert_eq!(
        fallback_note(&f(1.0049, false), false),
        "fell back to sequential: its tuned best (chunks 1) ran 1.0049x of sequential, a lead \
         under the 0.5% a choice needs"
    );
    assert_eq!(
        fallback_note(&f(1.005, true), false),
        "fell back to sequential: its tuned best (chunks 1) ran 1.0050x of sequential, within the \
         noise of a point without room to overlap"
    );
    assert_eq!(
        fallback_note(&f(0.996, false), true),
        "shown as run (--no-fallback): its tuned best (chunks 1) ran 0.9960x of sequential"
    );
}
