//! Timing a run's things (GEMM alone, the collective, every mode): warm-up until each settles, reps
//! interleaved across them, the consistency checks on what they gave, and re-measuring when a check
//! fails. Knows nothing of the GPU: each thing is a closure over a shared context.

use serde::Serialize;

use crate::consistency::{Bounds, Check, Checks, Figures, Own};
use crate::error::Result;
use crate::modes::Run;
use crate::stats::{since_start, Sample, Series, Settle, Spread, Warmup};
use crate::timeline::Timeline;
use web_time::Instant;

/// How a run warms up, when it trusts its figures, and how often it measures again.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Stability {
    /// Bound on the warm-up, seconds: past it the reps start whether or not every timed thing
    /// settled (0: `warmup` rounds only, no stability test).
    pub warmup_s: f64,
    /// Least warm-up, seconds, even where everything settles sooner (bounded by `warmup_s`; 0: none):
    /// a process whose pipelines are not in NVIDIA's disk cache runs them 3-4x slow until the driver
    /// swaps in background-optimised builds 0.3-0.6 s in, and a run short enough to settle and
    /// finish before the swap measures every figure a third as fast with every check passing.
    /// [`MIN_WARMUP_S`] for GPUs; the library's default is 0.
    pub min_warmup_s: f64,
    pub settle: Settle,
    pub checks: Checks,
    /// Measurements after the first when a consistency or spread check fails.
    pub retries: usize,
}

impl Default for Stability {
    fn default() -> Self {
        Stability {
            warmup_s: 10.0,
            min_warmup_s: 0.0,
            settle: Settle::default(),
            checks: Checks::default(),
            retries: 2,
        }
    }
}

/// One run of a timed thing.
#[derive(Clone, Debug, Default)]
pub struct Rep {
    /// Its time, µs.
    pub us: f64,
    /// Parts of it timed on their own passes, each a series of its own: the collective's share of
    /// sequential mode ([`COMM`]), fused mode's GEMM and transfers in its own sequential run
    /// ([`FUSED_GEMM`], [`FUSED_COMM`]).
    pub parts: Vec<(&'static str, f64)>,
    pub trigger_latency_us: Vec<f64>,
    pub timeline: Option<Timeline>,
    /// The flag handoff's waiting landings ([`Run::early_landings`]).
    pub early_landings: Option<crate::modes::EarlyLandings>,
}

impl From<Run> for Rep {
    fn from(r: Run) -> Self {
        Rep {
            us: r.total_us,
            parts: r.comm_us.map(|us| (COMM, us)).into_iter().collect(),
            trigger_latency_us: r.trigger_latency_us,
            timeline: Some(r.timeline),
            early_landings: r.early_landings,
        }
    }
}

/// One thing a run times: its name and how to run it once on the context `C` every thing shares
/// (the system, for a real run). The names the checks read are [`GEMM`], [`GEMM_UNTRACKED`], [`SEQ`]
/// (whose [`Rep::parts`] give [`COMM`]), [`FUSED_SEQ`] (giving [`FUSED_GEMM`] and [`FUSED_COMM`]); the
/// rest are modes.
pub struct Timed<'a, C = ()> {
    pub what: String,
    pub run: RunOnce<'a, C>,
}

/// How a [`Timed`] thing runs once.
pub type RunOnce<'a, C> = Box<dyn FnMut(&mut C) -> Result<Rep> + 'a>;

/// The least warm-up `t3 run` and `t3 sweep` ask of a GPU ([`Stability::min_warmup_s`]): past
/// the 0.3-0.6 s in which NVIDIA's driver swaps in optimised pipeline builds.
pub const MIN_WARMUP_S: f64 = 1.0;

pub const GEMM: &str = "gemm_tracked";
pub const GEMM_UNTRACKED: &str = "gemm_untracked";
pub const COMM: &str = "comm";
pub const SEQ: &str = "sequential";
/// Fused mode's own sequential run: its GEMM (every rank's in one pass on the packed buffers, tracked
/// only), then its transfers (the finisher alone), not overlapped: the baseline of its efficiency.
pub const FUSED_SEQ: &str = "fused_sequential";
/// Its two parts, each on its own pass.
pub const FUSED_GEMM: &str = "fused_gemm";
pub const FUSED_COMM: &str = "fused_comm";
/// The mode with an own sequential run.
const FUSED: &str = "fused";

/// Where a measurement's time went, seconds (in every JSON report; `t3 tune` says it of each of its
/// measurements, so that a point's tuning time can be broken down: checks and warm-ups grow with
/// the shape as the reps do).
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct Took {
    /// Making the pipelines that the modes' kernels make on first use (fused mode's): a driver's
    /// compile, seconds on a cold shader cache.
    pub pipelines_s: f64,
    /// Each checked run on poisoned outputs, its readback and its reference.
    pub checks_s: f64,
    /// Every attempt's warm-up.
    pub warmup_s: f64,
    /// Every attempt's timed reps.
    pub reps_s: f64,
}

impl std::ops::AddAssign for Took {
    fn add_assign(&mut self, other: Took) {
        self.pipelines_s += other.pipelines_s;
        self.checks_s += other.checks_s;
        self.warmup_s += other.warmup_s;
        self.reps_s += other.reps_s;
    }
}

/// What timing the things of a run gave: every attempt's samples, and the last attempt's warm-ups,
/// checks, latencies and timelines.
pub struct Measured {
    pub samples: Vec<Series>,
    pub warmups: Vec<Warmup>,
    pub attempts: usize,
    /// Seconds of warm-up, every attempt's.
    pub warmup_s: f64,
    /// Seconds of timed reps, every attempt's.
    pub reps_s: f64,
    pub checks: Vec<Check>,
    /// Per timed thing (in order): its reps' trigger latencies and its last rep.
    pub latencies: Vec<Vec<f64>>,
    pub last: Vec<Option<Rep>>,
}

impl Measured {
    /// The last attempt's series of `what`.
    pub fn series(&self, what: &str) -> Option<&Series> {
        self.samples.iter().rev().find(|s| s.what == what)
    }

    /// Spread of `what`'s reps, ms.
    pub fn spread_ms(&self, what: &str) -> Option<Spread> {
        Spread::of(&self.series(what)?.rep_us()).map(|s| s.scaled(1e-3))
    }

    pub fn median_ms(&self, what: &str) -> f64 {
        self.spread_ms(what).map_or(f64::NAN, |s| s.median)
    }

    pub fn consistent(&self) -> bool {
        !self.checks.iter().any(Check::remeasure)
    }

    /// `mode`'s own GEMM and transfers, where they were timed (fused mode's: [`FUSED_SEQ`]'s parts).
    pub fn own(&self, mode: &str) -> Option<Own> {
        (mode == FUSED).then_some(())?;
        Some(Own {
            gemm: self.spread_ms(FUSED_GEMM)?,
            comm: self.spread_ms(FUSED_COMM)?,
        })
    }

    /// What `mode`'s overlap efficiency is computed against (None where a baseline was not timed).
    pub fn bounds(&self, mode: &str) -> Option<Bounds> {
        let own: Vec<(&str, Own)> = self.own(mode).map(|o| (mode, o)).into_iter().collect();
        Some(
            Figures {
                gemm: self.spread_ms(GEMM)?,
                comm: self.spread_ms(COMM)?,
                seq: self.spread_ms(SEQ)?,
                modes: &[],
                others: &[],
                own: &own,
            }
            .bounds(mode),
        )
    }
}

/// Times `things`: warm-up until every one settles (or the bound passes), then `reps` rounds in
/// which each runs once, in order. Rounds interleave the things, so that a drift of the GPU's
/// clocks over the run (seen on an H200 under a long fp32 load) shifts all of them alike. Where a
/// consistency or spread check fails, measures again, at most `stability.retries` times.
pub fn time_things<C>(
    ctx: &mut C,
    things: &mut [Timed<C>],
    warmup: usize,
    reps: usize,
    stability: &Stability,
) -> Result<Measured> {
    let mut samples = Vec::new();
    let (mut warmup_s, mut reps_s) = (0.0, 0.0);
    let mut attempt = 0;
    loop {
        let Attempt {
            series,
            warmups,
            latencies,
            last,
            warm_s,
            timed_s,
        } = attempt_once(ctx, things, warmup, reps, stability, attempt)?;
        samples.extend(series);
        warmup_s += warm_s;
        reps_s += timed_s;
        let mut m = Measured {
            samples,
            warmups,
            attempts: attempt + 1,
            warmup_s,
            reps_s,
            checks: Vec::new(),
            latencies,
            last,
        };
        m.checks = checks_of(&m, things, &stability.checks);
        if m.consistent() || attempt >= stability.retries {
            return Ok(m);
        }
        samples = m.samples;
        attempt += 1;
    }
}

/// One attempt's record: a series per timed thing, then one per part reported (comm's...), its
/// warm-ups, and per thing its reps' trigger latencies and last rep.
struct Attempt {
    series: Vec<Series>,
    warmups: Vec<Warmup>,
    latencies: Vec<Vec<f64>>,
    last: Vec<Option<Rep>>,
    /// Seconds of its warm-up and of its reps.
    warm_s: f64,
    timed_s: f64,
}

/// One measurement: the warm-up, then the reps.
fn attempt_once<C>(
    ctx: &mut C,
    things: &mut [Timed<C>],
    warmup: usize,
    reps: usize,
    stability: &Stability,
    attempt: usize,
) -> Result<Attempt> {
    let n = things.len();
    let mut a = Attempt {
        series: things
            .iter()
            .map(|t| Series::new(&t.what, attempt))
            .collect(),
        warmups: Vec::new(),
        latencies: vec![Vec::new(); n],
        last: vec![None; n],
        warm_s: 0.0,
        timed_s: 0.0,
    };
    let settle = &stability.settle;
    let bound = std::time::Duration::from_secs_f64(stability.warmup_s.max(0.0));
    let least = std::time::Duration::from_secs_f64(
        stability
            .min_warmup_s
            .clamp(0.0, stability.warmup_s.max(0.0)),
    );
    let start = Instant::now();
    let mut rounds = 0;
    // Only the last window of each series decides, so each round looks at that much.
    let settled = |a: &Attempt| {
        a.series.iter().all(|s| {
            let tail = &s.warmup[s.warmup.len().saturating_sub(settle.window)..];
            settle.settled(&tail.iter().map(|x| x.us).collect::<Vec<_>>())
        })
    };
    while rounds < warmup || (start.elapsed() < bound && (start.elapsed() < least || !settled(&a)))
    {
        round(ctx, things, &mut a, true)?;
        rounds += 1;
    }
    let warm_s = start.elapsed().as_secs_f64();
    for _ in 0..reps {
        round(ctx, things, &mut a, false)?;
    }
    a.warm_s = warm_s;
    a.timed_s = start.elapsed().as_secs_f64() - warm_s;
    a.warmups = a
        .series
        .iter()
        .map(|s| {
            let us = s.warmup_us();
            let since = settle.settled_since(&us);
            Warmup {
                what: s.what.clone(),
                runs: us.len(),
                seconds: since.map_or(warm_s, |i| s.warmup[i].at_s - s.warmup[0].at_s),
                settled: since.is_some(),
            }
        })
        .collect();
    Ok(a)
}

/// Each thing runs once; a part's sample comes from the thing that reports it (its series made on
/// the first report).
fn round<C>(ctx: &mut C, things: &mut [Timed<C>], a: &mut Attempt, warm: bool) -> Result<()> {
    let n = things.len();
    for (i, t) in things.iter_mut().enumerate() {
        let at_s = since_start();
        let r = (t.run)(ctx)?;
        a.series[i].push(warm, Sample { at_s, us: r.us });
        for &(part, us) in &r.parts {
            let k = match a.series[n..].iter().position(|s| s.what == part) {
                Some(k) => n + k,
                None => {
                    a.series.push(Series::new(part, a.series[i].attempt));
                    a.series.len() - 1
                }
            };
            a.series[k].push(warm, Sample { at_s, us });
        }
        if !warm {
            a.latencies[i].extend(r.trigger_latency_us.iter().copied());
            a.last[i] = Some(r);
        }
    }
    Ok(())
}

/// The checks on `m`'s figures; where the baselines were not timed, each figure's spread alone.
fn checks_of<C>(m: &Measured, things: &[Timed<C>], checks: &Checks) -> Vec<Check> {
    let (Some(gemm), Some(comm), Some(seq)) =
        (m.spread_ms(GEMM), m.spread_ms(COMM), m.spread_ms(SEQ))
    else {
        // A measurement without the baselines (the tuner's after its first): each timed figure's
        // spread alone.
        return things
            .iter()
            .filter_map(|t| {
                let s = m.spread_ms(&t.what)?;
                Some(checks.spread(&t.what, Some(&t.what), &t.what, &s))
            })
            .collect();
    };
    let spreads = |f: &dyn Fn(&str) -> bool| -> Vec<(&str, Spread)> {
        things
            .iter()
            .filter(|t| f(&t.what))
            .filter_map(|t| Some((t.what.as_str(), m.spread_ms(&t.what)?)))
            .collect()
    };
    let modes = spreads(&|w| ![GEMM, GEMM_UNTRACKED, SEQ, FUSED_SEQ].contains(&w));
    let others = spreads(&|w| w == GEMM_UNTRACKED);
    let own: Vec<(&str, Own)> = m.own(FUSED).map(|o| (FUSED, o)).into_iter().collect();
    checks.run(&Figures {
        gemm,
        comm,
        seq,
        modes: &modes,
        others: &others,
        own: &own,
    })
}

/// `f` as a timed thing whose every run `adjust` sees (an error from it ends the timing).
pub fn adjusted<'a, C>(
    what: &'static str,
    adjust: &'a dyn Fn(&str, &mut Rep) -> Result<()>,
    mut f: impl FnMut(&mut C) -> Result<Rep> + 'a,
) -> Timed<'a, C> {
    Timed {
        what: what.into(),
        run: Box::new(move |ctx| {
            let mut r = f(ctx)?;
            adjust(what, &mut r)?;
            Ok(r)
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::consistency::failed_for;
    use std::cell::Cell;

    /// A timed thing whose n-th run (from 0) takes `us(n)` µs, with `comm` µs of collective.
    fn thing<'a>(what: &str, comm: Option<f64>, us: impl Fn(usize) -> f64 + 'a) -> Timed<'a> {
        let n = Cell::new(0);
        Timed {
            what: what.into(),
            run: Box::new(move |_: &mut ()| {
                let k = n.replace(n.get() + 1);
                Ok(Rep {
                    us: us(k),
                    parts: comm.map(|c| (COMM, c)).into_iter().collect(),
                    ..Default::default()
                })
            }),
        }
    }

    fn stability(warmup_s: f64) -> Stability {
        Stability {
            warmup_s,
            ..Default::default()
        }
    }

    fn failed(m: &Measured) -> Vec<&str> {
        m.checks
            .iter()
            .filter(|c| !c.ok)
            .map(|c| c.name.as_str())
            .collect()
    }

    #[test]
    fn consistent_timings_are_measured_once() {
        let mut things = [
            thing(GEMM, None, |_| 10_000.0),
            thing(GEMM_UNTRACKED, None, |_| 9_900.0),
            thing(SEQ, Some(4_000.0), |_| 14_000.0),
            thing("encoded", None, |_| 11_000.0),
        ];
        let m = time_things(&mut (), &mut things, 1, 3, &stability(1.0)).unwrap();
        assert_eq!(m.attempts, 1);
        assert!(m.consistent() && failed(&m).is_empty(), "{:?}", m.checks);
        assert_eq!(m.median_ms(COMM), 4.0);
        // Settled after its first window: 5 warm-up runs, all recorded with their host times.
        let w = &m.warmups[0];
        assert_eq!((w.what.as_str(), w.runs, w.settled), (GEMM, 5, true));
        let s = m.series(GEMM).unwrap();
        assert_eq!((s.warmup.len(), s.reps.len()), (5, 3));
        assert!(s.warmup.iter().chain(&s.reps).all(|x| x.at_s > 0.0));
        assert!(s.reps.windows(2).all(|p| p[0].at_s <= p[1].at_s));
        assert_eq!(m.samples.len(), 5, "four things and comm");
    }

    #[test]
    fn warmup_lasts_its_least_time_even_where_everything_settles_at_once() {
        // Steady from the first run, as the slow builds are before the driver's swap.
        let mut things = [
            thing(GEMM, None, |_| 30_000.0),
            thing(SEQ, Some(4_000.0), |_| 34_000.0),
        ];
        let st = Stability {
            min_warmup_s: 0.05,
            ..stability(5.0)
        };
        let t = Instant::now();
        let m = time_things(&mut (), &mut things, 0, 3, &st).unwrap();
        assert!(t.elapsed().as_secs_f64() >= 0.05);
        let s = m.series(GEMM).unwrap();
        let span = s.warmup.last().unwrap().at_s - s.warmup[0].at_s;
        assert!(
            s.warmup.len() > 5 && span > 0.04,
            "{} runs over {span} s",
            s.warmup.len()
        );
        // Never past the bound, and none where the warm-up is a count only.
        let st0 = Stability {
            min_warmup_s: 0.05,
            ..stability(0.0)
        };
        let m = time_things(&mut (), &mut things, 2, 3, &st0).unwrap();
        assert_eq!(m.series(GEMM).unwrap().warmup.len(), 2);
    }

    #[test]
    fn warmup_goes_on_until_a_faster_build_settles() {
        // The GEMM's pipeline is swapped for a 3x faster build after 3 runs. (A swap after a
        // settled window cannot be foreseen: the checks catch it, see the next tests.)
        let mut things = [
            thing(GEMM, None, |n| if n < 3 { 30_000.0 } else { 10_000.0 }),
            thing(SEQ, Some(4_000.0), |_| 14_000.0),
        ];
        let m = time_things(&mut (), &mut things, 0, 3, &stability(5.0)).unwrap();
        let w = &m.warmups[0];
        assert!(w.settled && w.runs == 8, "{w:?}");
        assert_eq!(m.attempts, 1);
        assert_eq!(m.median_ms(GEMM), 10.0);
        assert!(m.consistent(), "{:?}", m.checks);
    }

    #[test]
    fn without_a_collective_the_warmup_settles_on_the_things_alone() {
        let mut things = [thing(GEMM, None, |_| 10_000.0)];
        let m = time_things(&mut (), &mut things, 0, 1, &stability(5.0)).unwrap();
        assert_eq!(m.warmups.len(), 1);
        assert!(
            m.warmups[0].settled && m.warmups[0].runs == 5,
            "{:?}",
            m.warmups
        );
    }

    #[test]
    fn warmup_is_bounded_in_time_and_count_only_without_a_bound() {
        let noisy = |n: usize| {
            if n.is_multiple_of(2) {
                10_000.0
            } else {
                14_000.0
            }
        };
        let mut things = [thing(GEMM, None, noisy)];
        let t0 = Instant::now();
        let m = time_things(&mut (), &mut things, 2, 1, &stability(0.05)).unwrap();
        assert!(t0.elapsed().as_secs_f64() < 1.0);
        assert!(!m.warmups[0].settled && m.warmups[0].runs >= 2);
        let mut things = [thing(GEMM, None, noisy)];
        let m = time_things(&mut (), &mut things, 2, 1, &stability(0.0)).unwrap();
        assert_eq!(m.warmups[0].runs, 2);
    }

    #[test]
    fn an_inconsistent_baseline_is_remeasured_then_flagged() {
        // Issue 14: T_gemm 11.279 ms against T_seq 4.760 ms, in every measurement.
        let mut things = [
            thing(GEMM, None, |_| 11_279.0),
            thing(SEQ, Some(1_000.0), |_| 4_760.0),
            thing("encoded", None, |_| 4_700.0),
        ];
        let m = time_things(&mut (), &mut things, 1, 3, &stability(0.0)).unwrap();
        assert_eq!(m.attempts, 3, "first measurement and two retries");
        assert!(!m.consistent());
        assert!(failed(&m).contains(&"T_gemm <= T_seq"), "{:?}", m.checks);
        assert!(failed_for(&m.checks, "encoded").len() >= 2);
        // Every attempt's samples are kept.
        assert_eq!(m.samples.iter().filter(|s| s.what == GEMM).count(), 3);
    }

    #[test]
    fn a_swap_during_the_reps_is_remeasured_and_then_passes() {
        // Slow for the first 6 reps (the swap inside the first attempt's reps), fast after: the
        // first attempt's spread fails, the second is clean.
        let mut things = [
            thing(GEMM, None, |n| if n < 6 { 30_000.0 } else { 10_000.0 }),
            thing(SEQ, Some(4_000.0), |_| 14_000.0),
        ];
        let m = time_things(&mut (), &mut things, 2, 5, &stability(0.0)).unwrap();
        assert_eq!(m.attempts, 2, "{:?}", m.checks);
        assert!(m.consistent());
        assert_eq!(m.median_ms(GEMM), 10.0);
    }
}
