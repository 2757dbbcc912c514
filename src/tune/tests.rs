//! The tuner's CPU tests: knobs onto a configuration and back, flags over the table, the space's
//! axes and grid.

use super::knobs::Given;
use super::knobs::Knobs;
use super::space::{self, Context, Value};
use crate::config::host::HostGrain;
use crate::config::{Config, ModeKind, StepLead};
use crate::plan::ReduceVia;
use crate::schedule::Collective;
use crate::shapes::Shape;
use crate::steps::Link;

pub(super) fn config(collective: Collective) -> Config {
    Config {
        collective,
        ..Config::new(Shape::new(96, 40, 24).unwrap(), 4)
    }
}

fn every_knob() -> Knobs {
    Knobs {
        chunks: 3,
        reduce: "forward".into(),
        gemm_grid: Some(128),
        step_lead: Some(0),
        link_workgroups: Some(64),
        arbitrate: Some(16),
        host_grain: Some("chunk".into()),
        host_depth: Some(4),
        fused_spares: Some(16),
        fused_pieces: Some(0),
        fused_pause: Some(64),
        collective: None,
        order: None,
    }
}

#[test]
fn knobs_count_their_differences() {
    let k = every_knob();
    assert_eq!(k.differences(&k), 0);
    let mut other = k.clone();
    other.chunks = 1;
    other.host_depth = None;
    other.fused_pause = None;
    assert_eq!(k.differences(&other), 3);
    assert_eq!(other.differences(&k), 3);
    assert_eq!(k.differences(&Knobs::default()), 11);
}

#[test]
fn knobs_survive_a_configuration_and_back() {
    let base = config(Collective::ReduceScatter);
    let k = every_knob();
    let c = k.apply(&base).unwrap();
    assert_eq!(Knobs::of(&c), k);
    assert_eq!(c.via, ReduceVia::Forward);
    assert_eq!(c.step_lead, StepLead::Workgroups(0));
    // None leaves a knob to its default, and an emulated link as it was.
    let plain = Knobs::of(&base);
    assert_eq!(plain.apply(&base).unwrap().link, Link::Unthrottled);
    assert!(k.describe(ModeKind::Host).contains("grain chunk, depth 4"));
    let halves = Knobs {
        host_grain: Some("2".into()),
        ..k.clone()
    };
    assert!(halves
        .describe(ModeKind::Host)
        .contains("grain 2 chunks, depth 4"));
    // At 2 chunks per rank or fewer a grain of 2 (or a chunk, at 1) is one submission a stage: the
    // default grain's configuration, measured once.
    for (chunks, grain, same) in [
        (2, "2", true),
        (4, "2", false),
        (1, "chunk", true),
        (2, "chunk", false),
        (4, "stage", true),
    ] {
        let k = Knobs {
            chunks,
            host_grain: Some(grain.into()),
            ..every_knob()
        };
        let c = k.canonical();
        assert_eq!(
            c.host_grain.is_none(),
            same,
            "{chunks} chunks, grain {grain}"
        );
        assert_eq!(c.canonical(), c);
    }
    // One chunk at a time is written `chunk`, and a grain is written by its name in the JSON too.
    let one = Knobs {
        chunks: 4,
        host_grain: Some("1".into()),
        ..every_knob()
    };
    assert_eq!(one.canonical().host_grain.as_deref(), Some("chunk"));
    assert!(one.describe(ModeKind::Host).contains("grain chunk,"));
    assert_eq!(
        serde_json::to_value(HostGrain::Chunks(2)).unwrap(),
        serde_json::json!("2")
    );
    assert_eq!(c.arbitrate, Some(16));
    assert!(k.describe(ModeKind::Host).contains("arbitrate 16 wg"));
    assert!(k
        .describe(ModeKind::Fused)
        .contains("spares 16, pieces link, pause 64"));
    assert!(!k.describe(ModeKind::Fused).contains("grid"));
    // The chunk order goes onto the configuration and back, is said, and keeps its grain as written
    // (its stage holds a chunk of every shard).
    let ordered = Knobs {
        order: Some("chunk".into()),
        chunks: 2,
        host_grain: Some("2".into()),
        ..every_knob()
    };
    let c = ordered.apply(&config(Collective::AllReduce)).unwrap();
    assert_eq!(c.order, crate::schedule::Order::Chunk);
    assert_eq!(Knobs::of(&c), ordered);
    assert_eq!(ordered.canonical(), ordered);
    assert!(ordered.describe(ModeKind::Host).contains("chunk order"));
    let bad = Knobs {
        order: Some("sideways".into()),
        ..every_knob()
    };
    assert!(bad
        .apply(&base)
        .unwrap_err()
        .to_string()
        .contains("sideways"));
}

#[test]
fn unreadable_knobs_are_refused_naming_them() {
    let base = config(Collective::ReduceScatter);
    for (k, says) in [
        (
            Knobs {
                reduce: "teleport".into(),
                ..every_knob()
            },
            "teleport",
        ),
        (
            Knobs {
                host_grain: Some("pass".into()),
                ..every_knob()
            },
            "pass",
        ),
        (
            Knobs {
                chunks: 0,
                ..every_knob()
            },
            "chunks",
        ),
        (
            Knobs {
                fused_pause: Some(u32::MAX),
                ..every_knob()
            },
            "tuned fused pause: 4294967295 (must be at most 1048576)",
        ),
        (
            Knobs {
                host_depth: Some(1_000_000),
                ..every_knob()
            },
            "tuned host depth: 1000000 (must be 1 to 16)",
        ),
        (
            Knobs {
                host_depth: Some(0),
                ..every_knob()
            },
            "tuned host depth: 0 (must be 1 to 16)",
        ),
        (
            Knobs {
                link_workgroups: Some(0),
                ..every_knob()
            },
            "tuned link workgroups: 0 (must be 1 to 65535)",
        ),
        (
            Knobs {
                link_workgroups: Some(65536),
                ..every_knob()
            },
            "tuned link workgroups: 65536 (must be 1 to 65535)",
        ),
    ] {
        let e = k.apply(&base).unwrap_err().to_string();
        assert!(e.contains(says), "{e}");
    }
}

#[test]
fn given_flags_win_over_the_table() {
    let table = every_knob();
    let flags = Knobs::of(&config(Collective::ReduceScatter));
    let none = Given::default().overlay(&table, &flags);
    assert_eq!(none, table);
    let some = Given {
        chunks: true,
        host_grain: true,
        ..Given::default()
    }
    .overlay(&table, &flags);
    assert_eq!(some.chunks, 1);
    assert_eq!(some.host_grain, None);
    assert_eq!(some.reduce, "forward");
}

#[test]
fn the_space_offers_only_what_the_point_accepts() {
    let ctx = Context {
        devices: 1,
        sms: None,
    };
    let rs = config(Collective::ReduceScatter);
    let axes = space::axes(ModeKind::Host, &rs, &[2, 1], ctx);
    assert_eq!(axes[0], vec![Value::Chunks(2), Value::Chunks(1)]);
    assert!(axes
        .iter()
        .flatten()
        .any(|v| *v == Value::Reduce("forward")));
    // No link axis on one device: an emulated link's budget is not tuned.
    assert!(!axes.iter().flatten().any(|v| matches!(v, Value::Link(_))));
    // Fused mode reduces by update only; an all-gather reduces nothing.
    let fused = space::axes(ModeKind::Fused, &rs, &[1], ctx);
    assert!(!fused
        .iter()
        .flatten()
        .any(|v| matches!(v, Value::Reduce(_))));
    let ag = space::axes(ModeKind::Encoded, &config(Collective::AllGather), &[1], ctx);
    assert!(!ag.iter().flatten().any(|v| matches!(v, Value::Reduce(_))));
    // Across devices the real link's budget is; known multiprocessors size the grids.
    let two = Context {
        devices: 2,
        sms: Some(132),
    };
    let axes = space::axes(ModeKind::Encoded, &rs, &[1], two);
    assert!(axes.iter().flatten().any(|v| *v == Value::Link(Some(64))));
    assert!(axes.iter().flatten().any(|v| *v == Value::Grid(Some(128))));
    // Host mode across devices also tunes what the link's kernels share beside GEMM work; on one
    // device, and in the other modes, nothing shares it.
    let arbitrated = |axes: &[Vec<Value>]| {
        axes.iter()
            .flatten()
            .any(|v| *v == Value::Arbitrate(Some(16)))
    };
    assert!(!arbitrated(&axes));
    assert!(arbitrated(&space::axes(ModeKind::Host, &rs, &[1], two)));
    assert!(!arbitrated(&space::axes(ModeKind::Host, &rs, &[1], ctx)));
    // Across devices at 4 chunks per rank or more, host mode also tries a stage in halves.
    let halves = |axes: &[Vec<Value>]| axes.iter().flatten().any(|v| *v == Value::Grain(Some("2")));
    assert!(halves(&space::axes(ModeKind::Host, &rs, &[4, 1], two)));
    assert!(!halves(&space::axes(ModeKind::Host, &rs, &[1, 2], two)));
    assert!(!halves(&space::axes(ModeKind::Host, &rs, &[4], ctx)));
    // The table writes a grain of N chunks as N, and reads it back.
    for g in [HostGrain::Chunk, HostGrain::Stage, HostGrain::Chunks(2)] {
        assert_eq!(super::knobs::parse_grain(&g.name()).unwrap(), g);
    }
    assert!(super::knobs::parse_grain("0").is_err());
    // The grid is the axes' product, each point distinct, capped.
    let start = space::start(&rs, &axes);
    let all = space::grid(&start, &axes, usize::MAX);
    let product: usize = axes.iter().map(Vec::len).product();
    assert_eq!(all.len(), product);
    let mut uniq = all.clone();
    uniq.sort_by_key(|k| format!("{k:?}"));
    uniq.dedup();
    assert_eq!(uniq.len(), product);
    assert_eq!(space::grid(&start, &axes, 5).len(), 5);
}

/// The ring's all-reduce at two ranks may run as the direct one (the same sums, the same bytes): an
/// axis of the space for the modes that run it, a knob that survives a configuration and back, one
/// a hand-edited table cannot turn into another collective, and one `--collective` pins.
#[test]
fn the_all_reduce_at_two_ranks_may_run_as_the_direct_one() {
    let ctx = Context {
        devices: 2,
        sms: Some(132),
    };
    let two = |c| Config {
        collective: c,
        ..Config::new(Shape::new(96, 40, 24).unwrap(), 2)
    };
    let ring = two(Collective::AllReduce);
    let direct = Value::Collective(Some("direct-all-reduce"));
    let offered = |mode, c: &Config| {
        space::axes(mode, c, &[2, 4], ctx)
            .iter()
            .flatten()
            .any(|v| *v == direct)
    };
    assert!(offered(ModeKind::Host, &ring));
    assert!(offered(ModeKind::Encoded, &ring));
    // The exhaustive grid holds this, the largest space, whole.
    let largest: usize = space::axes(ModeKind::Host, &ring, &[1, 2, 4], ctx)
        .iter()
        .map(Vec::len)
        .product();
    assert!(largest <= super::search::MAX_GRID, "{largest}");
    // Fused mode cannot run it; at four ranks it moves twice the ring's bytes; a reduce-scatter has
    // none.
    assert!(!offered(ModeKind::Fused, &ring));
    assert!(!offered(ModeKind::Host, &config(Collective::AllReduce)));
    assert!(!offered(ModeKind::Host, &two(Collective::ReduceScatter)));
    // The knob onto the configuration and back; said first in its words.
    let k = Knobs {
        chunks: 8,
        reduce: "update".into(),
        host_grain: Some("2".into()),
        collective: Some("direct-all-reduce".into()),
        ..Knobs::default()
    };
    let c = k.apply(&ring).unwrap();
    assert_eq!(c.collective, Collective::DirectAllReduce);
    assert_eq!(Knobs::of(&c), k);
    assert_eq!(Knobs::of(&ring).collective, None);
    assert!(k
        .describe(ModeKind::Host)
        .starts_with("direct-all-reduce, chunks 8"));
    assert_eq!(k.differences(&Knobs::of(&ring)), 3);
    // The search measures no combination that cannot run: the direct all-reduce reduces by update.
    assert!(k.runnable(&ring, ModeKind::Host).is_some());
    let landed = Knobs {
        reduce: "land".into(),
        ..k.clone()
    };
    assert!(landed.runnable(&ring, ModeKind::Host).is_none());
    assert!(k.runnable(&ring, ModeKind::Fused).is_none());
    // A table's collective other than the point's own or its alternative is refused, naming both.
    for (base, name, says) in [
        (
            &ring,
            "all-gather",
            "the point's (all-reduce) or direct-all-reduce",
        ),
        (&ring, "teleport", "teleport"),
        (
            &config(Collective::AllReduce),
            "direct-all-reduce",
            "no alternative at 4 ranks",
        ),
        (
            &two(Collective::ReduceScatter),
            "direct-all-reduce",
            "(reduce-scatter)",
        ),
    ] {
        let k = Knobs {
            collective: Some(name.into()),
            ..Knobs::of(base)
        };
        let e = k.apply(base).unwrap_err().to_string();
        assert!(e.contains(says) && e.contains(name), "{e}");
    }
    // `--collective` given: the point runs as named, whatever the table says, and no axis offers
    // the other.
    let given = Given {
        collective: true,
        ..Given::default()
    };
    assert_eq!(given.overlay(&k, &Knobs::of(&ring)).collective, None);
    let axes = space::not_given(space::axes(ModeKind::Host, &ring, &[2], ctx), &given);
    assert!(!axes.iter().flatten().any(|v| *v == direct));
}

/// The chunk axis: the model's best, then the next finer count (which its pass cost cannot judge),
/// then the model's order.
#[test]
fn the_chunk_axis_tries_one_count_finer_than_the_models_best_second() {
    let base = Config::new(Shape::new(96, 40, 24).unwrap(), 2);
    let costs = |pass_ms| super::model::Costs {
        gemm_ms: 10.0,
        comm_ms: 10.0,
        pass_ms,
    };
    // Passes at 0.2 ms: 4 chunks best, then 2, 8, 1, 16 by the model.
    let c = costs(0.2);
    assert_eq!(
        super::model::ranked_chunks(ModeKind::Host, &c, &base),
        [4, 2, 8, 1, 16]
    );
    assert_eq!(
        space::chunk_order(ModeKind::Host, &c, &base),
        [4, 8, 2, 1, 16]
    );
    // Free passes: 16 best, nothing finer; dear ones: 1 best, 2 already second.
    assert_eq!(
        space::chunk_order(ModeKind::Host, &costs(0.0), &base),
        [16, 8, 4, 2, 1]
    );
    assert_eq!(
        space::chunk_order(ModeKind::Host, &costs(5.0), &base),
        [1, 2, 4, 8, 16]
    );
}

/// The chunk axis of a mode with its own configuration as given (fused mode's, 4 chunks per rank):
/// the model's best few, then that count and the next finer one where they are not among them; a
/// shard too short for the finer one leaves it out.
#[test]
fn the_chunk_axis_holds_a_modes_own_count_and_the_next_finer() {
    let base = Config::new(Shape::new(96, 40, 24).unwrap(), 2);
    let dear = super::model::Costs {
        gemm_ms: 10.0,
        comm_ms: 10.0,
        pass_ms: 5.0,
    };
    // The model's order from dear passes is 1, 2, 4, 8, 16.
    let axis = |own, tries| space::chunk_axis(ModeKind::Fused, &dear, &base, own, tries);
    assert_eq!(axis(None, 3), [1, 2, 4]);
    assert_eq!(axis(Some(4), 3), [1, 2, 4, 8]);
    assert_eq!(axis(Some(4), 2), [1, 2, 4, 8]);
    assert_eq!(axis(Some(8), 1), [1, 8, 16]);
    // 16 is the finest count the tuner tries; a shard of 4 rows takes no more than 4 chunks.
    assert_eq!(axis(Some(16), 3), [1, 2, 4, 16]);
    let short = Config::new(Shape::new(8, 40, 24).unwrap(), 2);
    assert_eq!(
        space::chunk_axis(ModeKind::Fused, &dear, &short, Some(4), 2),
        [1, 2, 4]
    );
    assert_eq!(
        space::chunk_axis(ModeKind::Fused, &dear, &short, Some(8), 2),
        [1, 2]
    );
}

/// The two ways the model's one-GPU defaults make room for the steps lead to each other, where the
/// space offers both; from anything else, or with a knob given as a flag, there is no other.
#[test]
fn each_way_to_make_room_for_the_steps_has_the_other() {
    let mut base = Config::new(Shape::new(64, 64, 64).unwrap(), 4);
    let ctx = Context {
        devices: 1,
        sms: Some(132),
    };
    let axes = space::axes(ModeKind::Encoded, &base, &[1, 2], ctx);
    let room = |grid, lead| {
        let mut k = Knobs::of(&base);
        (k.gemm_grid, k.step_lead) = (grid, lead);
        k
    };
    let grid = room(Some(128), None);
    let lead = room(None, Some(0));
    assert_eq!(space::other_room(&grid, &axes), Some(lead.clone()));
    assert_eq!(space::other_room(&lead, &axes), Some(grid.clone()));
    assert_eq!(space::other_room(&room(None, None), &axes), None);
    assert_eq!(space::other_room(&room(Some(132), Some(0)), &axes), None);
    // A step lead given as a flag: its axis is not searched, and nothing crosses it.
    base.step_lead = StepLead::Workgroups(0);
    let given = Given {
        step_lead: true,
        ..Given::default()
    };
    let axes = space::not_given(space::axes(ModeKind::Encoded, &base, &[1, 2], ctx), &given);
    assert_eq!(space::other_room(&grid, &axes), None);
    assert_eq!(space::other_room(&lead, &axes), None);
}

#[test]
fn a_knob_given_as_a_flag_is_searched_along_no_axis() {
    let ctx = Context {
        devices: 1,
        sms: Some(132),
    };
    let rs = config(Collective::ReduceScatter);
    let has = |axes: &[Vec<Value>], f: fn(&Value) -> bool| axes.iter().flatten().any(f);
    let all = space::axes(ModeKind::Host, &rs, &[1, 2], ctx);
    assert!(has(&all, |v| matches!(v, Value::Grain(_))));
    assert!(has(&all, |v| matches!(v, Value::Depth(_))));
    let given = Given {
        host_grain: true,
        ..Given::default()
    };
    let left = space::not_given(all.clone(), &given);
    assert!(!has(&left, |v| matches!(v, Value::Grain(_))));
    assert!(has(&left, |v| matches!(v, Value::Depth(_))));
    assert_eq!(left.len(), all.len() - 1);
    // Fused mode's knobs alike.
    let fused = space::axes(ModeKind::Fused, &rs, &[1], ctx);
    let given = Given {
        fused_spares: true,
        fused_pieces: true,
        fused_pause: true,
        ..Given::default()
    };
    let left = space::not_given(fused, &given);
    assert!(!has(&left, |v| matches!(
        v,
        Value::Spares(_) | Value::Pieces(_) | Value::Pause(_)
    )));
}

#[test]
fn a_table_round_trips_and_a_point_tuned_again_replaces_the_old() {
    use super::table::{Choice, Key, Measured, Point, Table};
    let c = config(Collective::ReduceScatter);
    let choice = Choice {
        mode: ModeKind::Host,
        knobs: every_knob(),
        median_ms: 2.0,
        sequential_ms: Some(3.0),
        speedup: 1.5,
        fallback: false,
        model_ms: Some(2.1),
        given_ms: Some(2.5),
        alternatives: vec![Measured {
            knobs: every_knob(),
            median_ms: Some(2.0),
            sequential_ms: Some(3.0),
            consistent: true,
            error: None,
        }],
        confirmed: vec![Measured {
            knobs: every_knob(),
            median_ms: Some(2.0),
            sequential_ms: Some(3.0),
            consistent: true,
            error: None,
        }],
    };
    let point = |seq: f64, not_run: Vec<super::table::NotRun>| Point {
        workload: "p".into(),
        key: Key::of(&c, 1),
        sequential_ms: seq,
        modes: vec![choice.clone()],
        not_run,
        no_room: None,
    };
    let fused_not_run = || {
        vec![super::table::NotRun {
            mode: ModeKind::Fused,
            why: "skipped: it cannot".into(),
        }]
    };
    let mut t = Table::new("GPU (Vulkan, 1)", "Vulkan", "1");
    // A point tuned again replaces the whole point: what could not run before goes with it.
    t.insert(point(3.0, fused_not_run()));
    t.insert(point(4.0, Vec::new()));
    assert_eq!(t.points.len(), 1);
    assert!(t.points[0].not_run.is_empty());
    let json = serde_json::to_string(&t).unwrap();
    assert!(
        !json.contains("not_run"),
        "an empty list is left out: {json}"
    );
    t.insert(point(4.0, fused_not_run()));
    assert!(serde_json::to_string(&t).unwrap().contains("not_run"));
    let dir = std::env::temp_dir().join(format!("t3-tune-lib-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("t.json").display().to_string();
    t.save(&path).unwrap();
    let back = Table::load(&path).unwrap();
    assert_eq!(back, t);
    assert_eq!(back.points[0].sequential_ms, 4.0);
    assert!(back.choice(&Key::of(&c, 1), ModeKind::Host).is_some());
    assert!(back.choice(&Key::of(&c, 2), ModeKind::Host).is_none());
    back.check_adapter(&path, "GPU (Vulkan, 1)").unwrap();
    let e = back.check_adapter(&path, "GPU (Vulkan, 2)").unwrap_err();
    assert!(e.to_string().contains("tuned on GPU (Vulkan, 1)"), "{e}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn the_search_moves_along_every_axis_before_any_axis_twice() {
    assert_eq!(
        space::rounds(&[3, 2, 3]),
        [
            (0, 0),
            (1, 0),
            (2, 0),
            (0, 1),
            (1, 1),
            (2, 1),
            (0, 2),
            (2, 2)
        ]
    );
    // Every value of every axis exactly once, whatever the limits.
    for limits in [vec![], vec![0, 4], vec![1, 1, 1], vec![5, 1, 3, 2]] {
        let order = space::rounds(&limits);
        assert_eq!(order.len(), limits.iter().sum::<usize>(), "{limits:?}");
        for (a, &n) in limits.iter().enumerate() {
            let vs: Vec<usize> = order.iter().filter(|o| o.0 == a).map(|o| o.1).collect();
            assert_eq!(vs, (0..n).collect::<Vec<_>>(), "{limits:?}");
        }
        // No axis's value v before every axis's value v-1.
        for w in order.windows(2) {
            assert!(w[0].1 <= w[1].1, "{order:?}");
        }
    }
}
