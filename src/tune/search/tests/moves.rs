//! What the search measures, and in which order: the grid, the other way to make room for the
//! steps, the rounds of one-knob moves, each collective's share of the time.

use super::*;

/// A landscape whose best point needs two knobs changed at once (a GEMM grid of 128 pays only with
/// a step lead of 0): one knob at a time never reaches it, the rest of the grid does.
#[test]
fn with_the_budget_for_it_the_search_measures_the_whole_grid_and_finds_its_best() {
    let job = job();
    let time = |k: &Knobs| {
        let mut t = 10.0 + (k.chunks as f64 - 2.0).abs() * 0.5;
        if k.reduce != "update" {
            t += 0.2;
        }
        if k.order.is_some() {
            t += 0.1;
        }
        match (k.gemm_grid, k.step_lead) {
            (Some(128), Some(0)) => t -= 3.0,
            (Some(_), None) => t += 1.0,
            _ => {}
        }
        t
    };
    let axes = axes(&job);
    let grid = space::grid(&space::start(&job.base, &axes), &axes, MAX_GRID);
    let truth = grid
        .iter()
        .min_by(|a, b| time(a).total_cmp(&time(b)))
        .unwrap();
    let land = Landscape::new(|k: &Knobs, _| Some(time(k)));
    let (c, asked) = choose(&job, land, far());
    let c = c.unwrap();
    assert_eq!(&c.knobs, truth, "{c:?}");
    assert_eq!(c.median_ms, time(truth));
    // Every point of the grid once, then the confirmations: the fastest, the configuration as
    // given (not among the three fastest here), and the next two.
    let first_pass: Vec<&Knobs> = asked
        .iter()
        .filter(|(_, h)| h.reps == 3)
        .map(|a| &a.0)
        .collect();
    // Every point that can run: the chunk order at one chunk per rank cannot.
    let runnable: Vec<&Knobs> = grid
        .iter()
        .filter(|k| k.runnable(&job.base, ModeKind::Encoded).is_some())
        .collect();
    assert!(runnable.len() < grid.len());
    assert_eq!(first_pass.len(), runnable.len());
    assert!(runnable.iter().all(|k| first_pass.contains(k)));
    let again: Vec<&(Knobs, How)> = asked.iter().filter(|(_, h)| h.reps == 9).collect();
    assert_eq!(again.len(), 4);
    assert_eq!(again[1].0, Knobs::of(&job.base));
    assert!(again
        .iter()
        .all(|(_, h)| h.warmup == Warmup::Settle && h.baselines == Baselines::Sequential));
    assert_eq!(c.confirmed.len(), 4);
}

/// The model's one-GPU default makes room for the steps by a persistent GEMM grid; where a step lead
/// of 0 with no grid pays instead, two knobs apart, the search measures it second, before any move
/// of one knob, so that a budget of a few measurements (the largest points) still finds it.
#[test]
fn the_other_way_to_make_room_for_the_steps_is_measured_first() {
    let mut job = job();
    job.base.gemm_grid = Some(128);
    let given = Knobs::of(&job.base);
    let mut lead = given.clone();
    (lead.gemm_grid, lead.step_lead) = (None, Some(0));
    let (g, l) = (given.clone(), lead.clone());
    let land = Landscape::new(move |k: &Knobs, _| {
        std::thread::sleep(Duration::from_millis(20));
        Some(if k == &g {
            10.0
        } else if k == &l {
            9.0
        } else {
            10.5
        })
    });
    let (c, asked) = choose(&job, land, Instant::now() + Duration::from_millis(400));
    assert_eq!(asked[0].0, given);
    assert_eq!(asked[1].0, lead, "second: {:?}", asked[1].0);
    assert_eq!(c.unwrap().knobs, lead);
}

/// Where the room kept for the confirmation (eight of the longest measurement: 800 ms here) would
/// take the whole share (600 ms), the grid still gets half of it.
#[test]
fn a_share_shorter_than_the_confirmations_room_still_measures_the_grid() {
    let job = job();
    let land = Landscape::new(|k: &Knobs, _| {
        std::thread::sleep(Duration::from_millis(100));
        Some(10.0 + k.chunks as f64)
    });
    let s = Settings {
        exhaustive: true,
        ..Settings::default()
    };
    let mut p = point(&job, land, &s);
    let axes = axes(&job);
    p.search(
        ModeKind::Encoded,
        &axes,
        Instant::now() + Duration::from_millis(600),
    )
    .unwrap();
    let grid = p.m.asked.len() - 1;
    assert!((1..=3).contains(&grid), "the grid measured {grid}");
}

/// Host mode of the ring's all-reduce at two ranks.
fn all_reduce_job() -> Job {
    Job {
        workload: "w".into(),
        base: Config {
            collective: crate::schedule::Collective::AllReduce,
            ..Config::new(Shape::new(64, 64, 64).unwrap(), 2)
        },
        modes: vec![ModeKind::Host],
        given: Given::default(),
        fused: None,
    }
}

/// Host mode's space for `job` across two devices, at 1, 2 and 4 chunks per rank.
fn host_axes(job: &Job, sms: Option<u32>) -> Vec<Vec<space::Value>> {
    let ctx = Context { devices: 2, sms };
    space::axes(ModeKind::Host, &job.base, &[1, 2, 4], ctx)
}

/// The ring's all-reduce at two ranks in host mode across two devices: the direct all-reduce is
/// searched beside it, from its own start (the knobs that pay for the ring, a forward reduce and a
/// GEMM grid, cannot run it or double its time, so one knob moved from the ring's best never finds
/// it), no combination that cannot run is measured, and a direct configuration is chosen only where
/// it is faster in time: a gain over its own sequential is no gain, and the point's sequential is
/// the ring's (here the slower).
#[test]
fn the_direct_all_reduce_is_chosen_where_it_is_faster_in_time() {
    let job = all_reduce_job();
    let axes = host_axes(&job, Some(132));
    let direct = |k: &Knobs| k.collective.is_some();
    let s = Settings::default();
    for (direct_ms, chosen) in [(9.0, true), (10.5, false)] {
        let mut land = Landscape::new(move |k: &Knobs, _| {
            Some(match (direct(k), k.gemm_grid, k.chunks) {
                (true, Some(_), _) => 18.0,
                (true, None, 4) => direct_ms,
                (true, None, _) => 13.0,
                (false, grid, chunks) => {
                    let mut t = if chunks == 4 { 10.0 } else { 10.5 };
                    if k.reduce == "forward" {
                        t -= 0.3;
                    }
                    if grid.is_some() {
                        t -= 0.2;
                    }
                    t
                }
            })
        });
        land.seq = Box::new(move |k: &Knobs, _| if direct(k) { 10.0 } else { 11.0 });
        let mut p = point(&job, land, &s);
        let mut c = p
            .choose(ModeKind::Host, &COSTS, &axes, far())
            .unwrap()
            .unwrap();
        let asked = &p.m.asked;
        // Found by its own rounds, not at the end of the grid nearest the ring's best.
        let first = asked
            .iter()
            .position(|(k, _)| direct(k) && k.gemm_grid.is_none() && k.chunks == 4)
            .unwrap();
        assert!(first < 60, "the direct one's best asked {first}th");
        assert!(
            asked
                .iter()
                .all(|(k, _)| k.runnable(&job.base, ModeKind::Host).is_some()),
            "only what runs is measured"
        );
        assert_eq!(direct(&c.knobs), chosen, "{direct_ms} ms: {:?}", c.knobs);
        // The point's sequential is the ring's (`t3 run` times its baselines there), though the
        // direct one's ran faster.
        let seq = p.sequential_ms();
        assert_eq!(seq, 11.0, "the ring's sequential");
        let warm = p.warm_ms(&layout(&c.knobs));
        judge(&mut c, seq, warm, LEAST_LEAD);
        let t = if chosen { direct_ms } else { 9.5 };
        assert!((c.speedup - 11.0 / t).abs() < 1e-9, "{}", c.speedup);
    }
}

/// The rounds from a start not yet measured go on while they gain (the first round's gain is over
/// nothing): the direct all-reduce's best here needs a second round, a step lead of 0 paying only
/// once the chunk count, tried after it in the first, is 4.
#[test]
fn the_rounds_from_an_unmeasured_start_go_on_while_they_gain() {
    let job = all_reduce_job();
    let axes = host_axes(&job, None);
    let others: Vec<Vec<space::Value>> = axes
        .into_iter()
        .filter(|a| !matches!(a.first(), Some(space::Value::Collective(_))))
        .collect();
    let land = Landscape::new(|k: &Knobs, _| {
        Some(match (k.chunks, k.step_lead) {
            (4, Some(0)) => 8.0,
            (4, None) => 9.0,
            (_, Some(0)) => 12.0,
            _ => 10.0,
        })
    });
    let s = Settings::default();
    let mut p = point(&job, land, &s);
    let mut start = Knobs::of(&job.base);
    start.collective = Some("direct-all-reduce".into());
    p.rounds(ModeKind::Host, &others, &start, far()).unwrap();
    let best = p
        .best_where(ModeKind::Host, |k| k.collective.is_some())
        .unwrap();
    assert_eq!((best.knobs.chunks, best.knobs.step_lead), (4, Some(0)));
}

/// Each collective's rounds get their share of the time: a ring whose every move gains, and whose
/// rounds would fill the whole budget, leaves the direct all-reduce its half. (Measurements take
/// 20 ms here, so that the deadline bites.)
#[test]
fn each_collective_gets_its_share_of_the_time() {
    let job = all_reduce_job();
    let axes = host_axes(&job, Some(132));
    let base = Knobs::of(&job.base);
    let land = Landscape::new(move |k: &Knobs, _| {
        std::thread::sleep(Duration::from_millis(20));
        // Every knob moved from the configuration as given gains: the ring's rounds never settle.
        Some(10.0 - 0.1 * k.differences(&base) as f64)
    });
    let s = Settings::default();
    let mut p = point(&job, land, &s);
    p.search(
        ModeKind::Host,
        &axes,
        Instant::now() + Duration::from_millis(600),
    )
    .unwrap();
    let (ring, direct) =
        p.m.asked
            .iter()
            .fold((0, 0), |(r, d), (k, _)| match k.collective {
                Some(_) => (r, d + 1),
                None => (r + 1, d),
            });
    assert!(
        direct >= 3,
        "the direct all-reduce measured {direct} times, the ring {ring}"
    );
}

/// A value that cannot run at the best's chunk count is measured at the first count of the chunk
/// axis where it can: the chunk order (two chunks a rank at least) pays here only at 4 chunks, and
/// from one chunk the rounds reach it by moving the order (at 2 chunks), then the chunk count.
#[test]
fn a_move_that_needs_finer_chunks_is_made_at_a_count_that_takes_it() {
    let job = job();
    let axes = axes(&job);
    let mut order_at_one = Knobs::of(&job.base);
    order_at_one.order = Some("chunk".into());
    assert!(
        order_at_one
            .runnable(&job.base, ModeKind::Encoded)
            .is_none(),
        "the chunk order at one chunk a rank runs: nothing to repair"
    );
    let land = Landscape::new(|k: &Knobs, _| {
        Some(match (k.chunks, k.order.is_some()) {
            (4, true) => 8.0,
            (2, true) => 9.0,
            (n, _) => 10.0 + n as f64 * 0.1,
        })
    });
    let s = Settings::default();
    let mut p = point(&job, land, &s);
    p.rounds(ModeKind::Encoded, &axes, &Knobs::of(&job.base), far())
        .unwrap();
    let best = p.best(ModeKind::Encoded).unwrap();
    assert_eq!(
        (best.knobs.chunks, best.knobs.order.as_deref()),
        (4, Some("chunk"))
    );
}
