//! The search's choices on a stand-in for the GPU: configurations with known times, so that what it
//! measures and what it chooses can be checked exactly.

use std::collections::HashMap;
use std::time::Duration;

use web_time::Instant;

use super::*;
use crate::config::Config;
use crate::shapes::Shape;
use crate::tune::knobs::Given;

/// Sequential's time beside a configuration, by `(knobs, confirming)`.
type Sequential = Box<dyn Fn(&Knobs, bool) -> f64>;

/// A stand-in that times each configuration by `f(knobs, confirming)` (None: it fails its check)
/// and sequential beside it by `seq` (20 ms unless said), and records what it was asked.
struct Landscape<F: FnMut(&Knobs, bool) -> Option<f64>> {
    f: F,
    seq: Sequential,
    asked: Vec<(Knobs, How)>,
}

impl<F: FnMut(&Knobs, bool) -> Option<f64>> Landscape<F> {
    fn new(f: F) -> Self {
        Landscape {
            f,
            seq: Box::new(|_, _| 20.0),
            asked: Vec::new(),
        }
    }
}

impl<F: FnMut(&Knobs, bool) -> Option<f64>> Measure for Landscape<F> {
    fn measure(&mut self, _mode: ModeKind, knobs: &Knobs, how: How) -> Result<Measured> {
        self.asked.push((knobs.clone(), how));
        let again = how.reps > Settings::default().reps;
        let t = (self.f)(knobs, again);
        Ok(Measured {
            knobs: knobs.clone(),
            median_ms: t,
            sequential_ms: Some((self.seq)(knobs, again)),
            consistent: true,
            error: t.is_none().then(|| "failed its check".into()),
        })
    }
}

fn job() -> Job {
    Job {
        workload: "w".into(),
        base: Config::new(Shape::new(64, 64, 64).unwrap(), 4),
        modes: vec![ModeKind::Encoded],
        given: Given::default(),
        fused: None,
    }
}

fn axes(job: &Job) -> Vec<Vec<space::Value>> {
    let ctx = Context {
        devices: 1,
        sms: Some(132),
    };
    space::axes(ModeKind::Encoded, &job.base, &[1, 2, 4], ctx)
}

const COSTS: Costs = Costs {
    gemm_ms: 1.0,
    comm_ms: 1.0,
    pass_ms: 0.0,
};

/// A tuner of `job` measuring on `m`, the configuration as given measured (its first mode).
fn point<'a, M: Measure>(job: &'a Job, m: M, s: &'a Settings) -> Point1<'a, M> {
    let mut p = Point1 {
        m,
        job,
        s,
        seen: HashMap::new(),
        sequential: HashMap::new(),
        progress: &|_| {},
        longest: HashMap::new(),
    };
    p.measure(job.modes[0], &Knobs::of(&job.base)).unwrap();
    p
}

/// Tunes encoded mode of `job` on `m` until `deadline`, the configuration as given measured first.
fn choose<F: FnMut(&Knobs, bool) -> Option<f64>>(
    job: &Job,
    m: Landscape<F>,
    deadline: Instant,
) -> (Option<Choice>, Vec<(Knobs, How)>) {
    let s = Settings::default();
    let mut p = point(job, m, &s);
    let c = p
        .choose(ModeKind::Encoded, &COSTS, &axes(job), deadline)
        .unwrap();
    (c, p.m.asked)
}

fn far() -> Instant {
    Instant::now() + Duration::from_secs(3600)
}

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
        .all(|(_, h)| h.settle && h.baselines == Baselines::Sequential));
    assert_eq!(c.confirmed.len(), 4);
}

/// `job`'s configuration as given, and the same on a GEMM grid of 128.
fn given_and_grid(job: &Job) -> (Knobs, Knobs) {
    let given = Knobs::of(&job.base);
    let mut grid = given.clone();
    grid.gemm_grid = Some(128);
    (given, grid)
}

/// A configuration whose first figure read low does not replace the configuration as given unless
/// it is faster measured the same way: the one as given is confirmed beside the fastest.
#[test]
fn a_choice_replaces_the_configuration_as_given_only_where_it_is_faster_measured_alike() {
    let job = job();
    let (given, lucky) = given_and_grid(&job);
    for (lucky_again, chosen) in [(10.5, &given), (9.5, &lucky)] {
        let (g, l) = (given.clone(), lucky.clone());
        let land = Landscape::new(move |k: &Knobs, again: bool| {
            Some(match (k == &g, k == &l, again) {
                (true, _, false) => 12.0,
                (true, _, true) => 10.0,
                (_, true, false) => 9.0,
                (_, true, true) => lucky_again,
                _ => 11.0,
            })
        });
        let (c, asked) = choose(&job, land, far());
        let c = c.unwrap();
        assert_eq!(&c.knobs, chosen, "{lucky_again}");
        let again: Vec<&Knobs> = asked
            .iter()
            .filter(|(_, h)| h.reps > Settings::default().reps)
            .map(|a| &a.0)
            .collect();
        assert_eq!(again[..2], [&lucky, &given]);
    }
}

/// A configuration whose layout's sequential once read low (here in the search) reads fast on warm
/// clocks, its figures scaled by that low reading. It replaces the configuration as given only where
/// it leads by more than the noise both so and by the ratio to the sequential timed beside each:
/// not within the noise (19.6 ms against 20: 10.15 ms beside 20 reads 9.95 on warm clocks against
/// the given's 10, and 9.95 beside 20 reads 9.75), not on warm clocks alone (16 ms against 20: 10.2
/// reads 8.16, its ratio 1.96 against 2; 18 against 20: 9.8 reads 8.82, its ratio 2.04 against the
/// 2.06 a lead past the noise needs), not by the ratio alone (a layout whose sequential reads 21: 9.8
/// beside it, a ratio of 2.14, reads 9.8 on its own clocks), and where both lead past it (9.6 reads
/// 9.41, a ratio of 2.08). A given slower than the point's sequential (21 ms against 19.6) never
/// stands: the mode falls back by its best.
#[test]
fn the_configuration_as_given_stands_unless_beaten_clearly() {
    let job = job();
    let (given, low) = given_and_grid(&job);
    for (seq_low, seq_low_again, given_ms, low_again, chosen) in [
        (19.6, 20.0, 10.0, 10.15, &given),
        (19.6, 20.0, 10.0, 9.95, &given),
        (16.0, 20.0, 10.0, 10.2, &given),
        (18.0, 20.0, 10.0, 9.8, &given),
        (21.0, 21.0, 10.0, 9.8, &given),
        (19.6, 20.0, 10.0, 9.6, &low),
        (19.6, 20.0, 21.0, 21.1, &low),
    ] {
        let (g, l, l2) = (given.clone(), low.clone(), low.clone());
        let mut land = Landscape::new(move |k: &Knobs, again: bool| {
            Some(match (k == &g, k == &l, again) {
                (true, _, _) => given_ms,
                (_, true, false) => 10.2,
                (_, true, true) => low_again,
                _ => given_ms + 1.0,
            })
        });
        land.seq =
            Box::new(
                move |k: &Knobs, again: bool| match (layout(k) == layout(&l2), again) {
                    (true, false) => seq_low,
                    (true, true) => seq_low_again,
                    _ => 20.0,
                },
            );
        let (c, asked) = choose(&job, land, far());
        let c = c.unwrap();
        assert!(
            asked
                .iter()
                .any(|(k, h)| k == &low && h.reps > Settings::default().reps),
            "confirmed"
        );
        assert_eq!(
            &c.knobs, chosen,
            "{seq_low} {seq_low_again} {given_ms} {low_again}"
        );
        let t = if chosen == &given {
            given_ms
        } else {
            low_again
        };
        assert_eq!(c.median_ms, t);
    }
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

/// The confirmation decides among the three fastest: a first figure that read low loses to the
/// configuration that measures faster with more reps.
#[test]
fn the_confirmation_decides_among_the_three_fastest() {
    let job = job();
    let k = |g, l| {
        let mut k = Knobs::of(&job.base);
        k.gemm_grid = g;
        k.step_lead = l;
        k
    };
    let (a, b, c) = (
        k(Some(128), Some(0)),
        k(Some(132), Some(0)),
        k(None, Some(0)),
    );
    let land = Landscape::new(|x: &Knobs, again: bool| {
        Some(match (x == &a, x == &b, x == &c, again) {
            (true, _, _, false) => 1.0,
            (true, _, _, true) => 1.3,
            (_, true, _, false) => 1.1,
            (_, true, _, true) => 1.05,
            (_, _, true, _) => 1.2,
            _ => 2.0,
        })
    });
    let (choice, _) = choose(&job, land, far());
    let choice = choice.unwrap();
    assert_eq!(choice.knobs, b);
    assert_eq!(choice.median_ms, 1.05);
    assert_eq!(
        choice.alternatives[0].knobs, a,
        "the first figures stay as measured"
    );
}

/// The GPU's clocks drift between measurements (a confirmation after an idle GPU ran 12% slower,
/// sequential beside it as slow): each figure is read on warm clocks by the sequential timed
/// beside it, the choice is the fastest so read, and whether it falls back is decided so, not by
/// its raw figure against a sequential measured on other clocks.
#[test]
fn figures_are_read_on_warm_clocks_by_the_sequential_beside_them() {
    let job = job();
    let k = |g| {
        let mut k = Knobs::of(&job.base);
        k.gemm_grid = g;
        k
    };
    let (a, b) = (k(Some(128)), k(Some(132)));
    let (a1, b1, a2, b2) = (a.clone(), b.clone(), a.clone(), b.clone());
    let mut land = Landscape::new(move |x: &Knobs, again: bool| {
        Some(match (x == &a1, x == &b1, again) {
            (true, _, false) => 1.0,
            (true, _, true) => 2.1,
            (_, true, false) => 1.01,
            (_, true, true) => 2.0,
            _ => 3.0,
        })
    });
    land.seq = Box::new(
        move |x: &Knobs, again: bool| match (x == &a2, x == &b2, again) {
            (true, _, true) => 2.4,
            (_, true, true) => 2.02,
            _ => 2.0,
        },
    );
    let (choice, _) = choose(&job, land, far());
    let mut choice = choice.unwrap();
    assert_eq!(
        choice.knobs, a,
        "2.1 ms beside 2.4 is 1.75 on warm clocks; 2.0 beside 2.02, 1.98"
    );
    assert_eq!(choice.sequential_ms, Some(2.4));
    judge(&mut choice, 2.0, Some(2.0));
    assert!(!choice.fallback);
    assert!((choice.speedup - 2.4 / 2.1).abs() < 1e-12);
    // Slower than the sequential beside it, its layout's fastest: it falls back.
    choice.sequential_ms = Some(2.0);
    judge(&mut choice, 2.0, Some(2.0));
    assert!(choice.fallback && choice.speedup < 1.0);
    // Without sequential beside it, its figure is taken as it is.
    choice.sequential_ms = None;
    judge(&mut choice, 2.2, None);
    assert!(!choice.fallback);
}

/// A configuration that gains over its own sequential but whose sequential is slower than another
/// layout's is judged against the fastest sequential: the ratio beside it alone would choose it
/// (and call it a gain) over a configuration that is faster in fact.
#[test]
fn a_gain_over_a_slow_sequential_is_not_a_gain() {
    let job = job();
    let mut two = Knobs::of(&job.base);
    two.chunks = 2;
    let (t1, t2) = (two.clone(), two.clone());
    let mut land = Landscape::new(move |x: &Knobs, _| {
        Some(if x == &t1 {
            2.1
        } else if x.chunks == 1 {
            1.98
        } else {
            3.0
        })
    });
    land.seq = Box::new(move |x: &Knobs, _| {
        if x == &t2 {
            2.4
        } else if x.chunks == 1 {
            2.0
        } else {
            3.0
        }
    });
    let (choice, _) = choose(&job, land, far());
    let mut choice = choice.unwrap();
    // Every configuration of one chunk ties at 1.98 ms beside 2.0: any of them.
    assert_eq!(choice.knobs.chunks, 1, "{choice:?}");
    judge(&mut choice, 2.0, Some(2.0));
    assert!((choice.speedup - 2.0 / 1.98).abs() < 1e-12);
    // The other, judged against the fastest sequential: 2.1 ms where sequential takes 2.0 falls
    // back, though it ran 1.14x its own.
    let mut other = choice.clone();
    other.knobs = two;
    (other.median_ms, other.sequential_ms) = (2.1, Some(2.4));
    judge(&mut other, 2.0, Some(2.4));
    assert!(other.fallback, "{}", other.speedup);
}

/// A configuration whose confirmation fails its check is never the choice, and the table keeps
/// the failure.
#[test]
fn a_configuration_whose_confirmation_fails_is_not_chosen() {
    let job = job();
    let mut bad = Knobs::of(&job.base);
    bad.gemm_grid = Some(128);
    let land = Landscape::new(|x: &Knobs, again: bool| match (x == &bad, again) {
        (true, true) => None,
        (true, false) => Some(1.0),
        _ => Some(2.0 + x.chunks as f64),
    });
    let (choice, _) = choose(&job, land, far());
    let choice = choice.unwrap();
    assert_ne!(choice.knobs, bad);
    let failed = choice.confirmed.last().unwrap();
    assert_eq!((&failed.knobs, failed.median_ms), (&bad, None));
    assert!(failed.error.is_some());
}

/// With no time left the search measures nothing more, and still confirms its one figure, at the
/// search's reps (with time for it, three times them).
#[test]
fn past_its_deadline_the_search_confirms_what_it_has() {
    let job = job();
    let reps = Settings::default().reps;
    let land = Landscape::new(|_: &Knobs, _| Some(5.0));
    let (choice, asked) = choose(&job, land, Instant::now());
    let choice = choice.unwrap();
    assert_eq!(choice.knobs, Knobs::of(&job.base));
    assert_eq!(asked.len(), 2, "as given, then its confirmation: {asked:?}");
    assert_eq!(asked[1].1.reps, reps, "past the deadline");
    let (_, asked) = choose(&job, Landscape::new(|_: &Knobs, _| Some(5.0)), far());
    let confirmations: Vec<usize> = asked
        .iter()
        .map(|a| a.1.reps)
        .filter(|&r| r > reps)
        .collect();
    assert!(!confirmations.is_empty() && confirmations.iter().all(|&r| r == reps * CONFIRM_REPS));
}

/// Once every mode is measured, a later mode's sequential figures can lower a layout's time on warm
/// clocks: the choice is made again on the figures it is then judged by.
#[test]
fn the_choice_is_made_again_on_the_final_figures() {
    let job = job();
    let s = Settings::default();
    let k = |g| {
        let mut k = Knobs::of(&job.base);
        k.gemm_grid = g;
        k
    };
    let (a, b) = (k(Some(128)), k(Some(132)));
    let (a1, b1) = (a.clone(), b.clone());
    let mut land = Landscape::new(move |x: &Knobs, _| {
        Some(if x == &a1 {
            2.0
        } else if x == &b1 {
            2.1
        } else {
            3.0
        })
    });
    land.seq = Box::new(|x: &Knobs, _| if x.gemm_grid == Some(132) { 2.2 } else { 2.0 });
    let mut p = point(&job, land, &s);
    let mut c = p
        .choose(ModeKind::Encoded, &COSTS, &axes(&job), far())
        .unwrap()
        .unwrap();
    assert_eq!(
        c.knobs, a,
        "2.0 ms against 2.1 beside a sequential as slow as 2.2"
    );
    // Another mode's measurement of b's layout on warm clocks: sequential there takes 1.9 ms, so
    // b's 2.1 beside 2.2 is 1.81 ms on warm clocks.
    p.sequential.entry(layout(&b)).or_default().push(1.9);
    assert!(p.pick(&mut c, &COSTS));
    assert_eq!(c.knobs, b);
    assert_eq!((c.median_ms, c.sequential_ms), (2.1, Some(2.2)));
    assert_eq!(c.confirmed[0].knobs, b, "its confirmations sorted again");
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
        judge(&mut c, seq, warm);
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

/// Fused mode whose own configuration as given (the model's, [`Job::config`]) is not the point's:
/// it is measured before the search whatever the deadline, its figure is the one as given, and it
/// stands unless beaten clearly.
#[test]
fn fused_modes_own_configuration_is_the_one_as_given() {
    let base = Config::new(Shape::new(64, 64, 64).unwrap(), 4);
    let own = Config {
        chunks: 4,
        order: crate::schedule::Order::Chunk,
        ..base.clone()
    };
    let job = Job {
        workload: "w".into(),
        base: base.clone(),
        modes: vec![ModeKind::Fused],
        given: Given::default(),
        fused: Some(own.clone()),
    };
    assert_eq!(job.config(ModeKind::Fused).chunks, 4);
    assert_eq!(job.config(ModeKind::Encoded).chunks, 1);
    let (at_base, at_own) = (Knobs::of(&base), Knobs::of(&own).canonical());
    let s = Settings::default();
    let ctx = Context {
        devices: 1,
        sms: Some(132),
    };
    let axes = space::axes(ModeKind::Fused, &base, &[1, 2, 4], ctx);
    // The point's configuration a little faster, within noise: the one as given stands.
    let land = Landscape::new(|k: &Knobs, _| Some(if k.order.is_some() { 10.1 } else { 10.0 }));
    let mut p = point(&job, land, &s);
    let c = p
        .choose(ModeKind::Fused, &COSTS, &axes, Instant::now())
        .unwrap()
        .unwrap();
    assert_eq!(p.m.asked[0].0, at_base, "the point's first experiment");
    assert_eq!(
        p.m.asked[1].0, at_own,
        "then fused's own, past the deadline"
    );
    assert_eq!((c.knobs, c.given_ms), (at_own.clone(), Some(10.1)));
    // The point's configuration clearly faster: it replaces the one as given.
    let land = Landscape::new(|k: &Knobs, _| Some(if k.order.is_some() { 12.0 } else { 10.0 }));
    let mut p = point(&job, land, &s);
    let c = p
        .choose(ModeKind::Fused, &COSTS, &axes, Instant::now())
        .unwrap()
        .unwrap();
    assert_eq!((c.knobs, c.given_ms), (at_base, Some(12.0)));
}
