//! The search's choices on a stand-in for the GPU: configurations with known times, so that what it
//! measures and what it chooses can be checked exactly.

use std::collections::HashMap;
use std::time::Duration;

use web_time::Instant;

use super::*;
use crate::shapes::Shape;

/// A stand-in that times each configuration by `f(knobs, confirming)` (None: it fails its check),
/// and records what it was asked.
struct Landscape<F: FnMut(&Knobs, bool) -> Option<f64>> {
    f: F,
    asked: Vec<(Knobs, How)>,
}

impl<F: FnMut(&Knobs, bool) -> Option<f64>> Measure for Landscape<F> {
    fn measure(&mut self, _mode: ModeKind, knobs: &Knobs, how: How) -> Result<Measured> {
        self.asked.push((knobs.clone(), how));
        let t = (self.f)(knobs, how.reps > Settings::default().reps);
        Ok(Measured {
            knobs: knobs.clone(),
            median_ms: t,
            sequential_ms: (how.baselines != Baselines::None).then_some(20.0),
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

/// Tunes encoded mode of `job` on `m` until `deadline`, the configuration as given measured first.
fn choose<F: FnMut(&Knobs, bool) -> Option<f64>>(
    job: &Job,
    m: Landscape<F>,
    deadline: Instant,
) -> (Option<Choice>, Vec<(Knobs, How)>) {
    let s = Settings::default();
    let mut p = Point1 {
        m,
        job,
        s: &s,
        seen: HashMap::new(),
        sequential: HashMap::new(),
        progress: &|_| {},
        longest: HashMap::new(),
    };
    p.measure(ModeKind::Encoded, &Knobs::of(&job.base)).unwrap();
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
    let land = Landscape {
        f: |k: &Knobs, _| Some(time(k)),
        asked: Vec::new(),
    };
    let (c, asked) = choose(&job, land, far());
    let c = c.unwrap();
    assert_eq!(&c.knobs, truth, "{c:?}");
    assert_eq!(c.median_ms, time(truth));
    // Every point of the grid once, then the confirmations: the three fastest again.
    let first_pass: Vec<&Knobs> = asked
        .iter()
        .filter(|(_, h)| h.reps == 3)
        .map(|a| &a.0)
        .collect();
    assert_eq!(first_pass.len(), grid.len());
    assert!(grid.iter().all(|k| first_pass.contains(&k)));
    let again: Vec<&(Knobs, How)> = asked.iter().filter(|(_, h)| h.reps == 9).collect();
    assert_eq!(again.len(), 3);
    assert!(again
        .iter()
        .all(|(_, h)| h.settle && h.baselines == Baselines::Sequential));
    assert_eq!(c.confirmed.len(), 3);
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
    let land = Landscape {
        f: |x: &Knobs, again: bool| {
            Some(match (x == &a, x == &b, x == &c, again) {
                (true, _, _, false) => 1.0,
                (true, _, _, true) => 1.3,
                (_, true, _, false) => 1.1,
                (_, true, _, true) => 1.05,
                (_, _, true, _) => 1.2,
                _ => 2.0,
            })
        },
        asked: Vec::new(),
    };
    let (choice, _) = choose(&job, land, far());
    let choice = choice.unwrap();
    assert_eq!(choice.knobs, b);
    assert_eq!(choice.median_ms, 1.05);
    assert_eq!(
        choice.alternatives[0].knobs, a,
        "the first figures stay as measured"
    );
}

/// A configuration whose confirmation fails its check is never the choice, and the table keeps
/// the failure.
#[test]
fn a_configuration_whose_confirmation_fails_is_not_chosen() {
    let job = job();
    let mut bad = Knobs::of(&job.base);
    bad.gemm_grid = Some(128);
    let land = Landscape {
        f: |x: &Knobs, again: bool| match (x == &bad, again) {
            (true, true) => None,
            (true, false) => Some(1.0),
            _ => Some(2.0 + x.chunks as f64),
        },
        asked: Vec::new(),
    };
    let (choice, _) = choose(&job, land, far());
    let choice = choice.unwrap();
    assert_ne!(choice.knobs, bad);
    let failed = choice.confirmed.last().unwrap();
    assert_eq!((&failed.knobs, failed.median_ms), (&bad, None));
    assert!(failed.error.is_some());
}

/// With no time left the search measures nothing more, and still confirms its one figure.
#[test]
fn past_its_deadline_the_search_confirms_what_it_has() {
    let job = job();
    let land = Landscape {
        f: |_: &Knobs, _| Some(5.0),
        asked: Vec::new(),
    };
    let (choice, asked) = choose(&job, land, Instant::now());
    let choice = choice.unwrap();
    assert_eq!(choice.knobs, Knobs::of(&job.base));
    assert_eq!(asked.len(), 2, "as given, then its confirmation: {asked:?}");
}
