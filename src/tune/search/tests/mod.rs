//! The search's tests on a stand-in for the GPU: configurations with known times, so that what it
//! measures (`moves`: the grid, the rounds, the collectives' shares) and what it chooses (`choice`:
//! the configuration as given, the confirmation, figures read on warm clocks) can be checked
//! exactly, and what a point does after its first experiment (`after_first`: fused mode's own
//! configuration first, no search without room to overlap).

use std::collections::HashMap;
use std::time::Duration;

use web_time::Instant;

use super::point::judge;
use super::*;
use crate::config::Config;
use crate::shapes::Shape;
use crate::tune::knobs::Given;
use crate::tune::space::Context;

mod after_first;
mod choice;
mod moves;

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
        least: LEAST_LEAD,
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
