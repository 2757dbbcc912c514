//! The search: per mode, short measurements within a deadline, each read on warm clocks by the
//! sequential timed beside it; the other way to make room for the steps, then one knob at a time
//! from the best so far (chunk counts as the model ranks them), from each collective the space
//! offers in turn, then the rest of the grid nearest that best first (or every point of the grid,
//! `exhaustive`); the three best and the configuration as given measured again with more reps, the
//! best of those the choice where it beats the one as given clearly, each configuration as fast as
//! its slowest figure; a mode still slower than the point's sequential so, or leading it by less
//! than [`LEAST_LEAD`], falls back. What measures a configuration is [`super::rig`]'s;
//! [`tune_point`] tunes a point's modes in turn.

use std::collections::HashMap;
use std::time::Duration;

use web_time::Instant;

use crate::error::Result;
use crate::experiment::Baselines;
use crate::modes::ModeKind;

use super::knobs::Knobs;
use super::model::{self, Costs};
pub use super::rig::{Devices, Job, Settings};
use super::rig::{How, Measure, Warmup};
use super::space;
use super::table::{Choice, Measured};

mod point;
use point::slowest;
pub use point::tune_point;

/// Most configurations of one mode the exhaustive grid measures: the largest space whole (host mode
/// across devices on an all-reduce at two ranks, 17,496 with the GEMM's order), since a cut drops
/// the last values of the first axes (a chunk count, the direct all-reduce) outright.
pub const MAX_GRID: usize = 32768;

/// The fastest configurations of a mode measured again at the end (with the configuration as
/// given), each with [`CONFIRM_REPS`] times the reps: a choice among many short measurements
/// favours the one whose noise ran low, and the confirmation measures it for what it is.
const CONFIRM: usize = 3;
const CONFIRM_REPS: usize = 3;

/// How far apart two figures of one configuration, read on warm clocks, may lie from noise alone:
/// runs of one configuration in one session differ by up to a few percent.
const NOISE: f64 = 0.03;

/// The least lead over sequential a choice must read (by its slowest figure) to run: a run of the
/// same configuration in another process (the table's, by `t3 run`) can read most of a percent
/// slower than the tuner's figures, and of the choices tuned on one GPU and run with their tables,
/// those read under half a percent ahead ran behind sequential one time in six, those read more
/// never.
pub const LEAST_LEAD: f64 = 0.005;

// A point without room asks a lead past its noise, at least the room check's floor: never less.
const _: () = assert!(crate::consistency::FLOOR >= LEAST_LEAD);

/// Whether a choice `speedup` times sequential's speed runs: it leads by at least `least` (the
/// point's [`Point1::least`]).
pub fn pays(speedup: f64, least: f64) -> bool {
    speedup >= 1.0 + least
}

/// How much slower than the point's sequential a layout's first sequential figure may read before
/// its measurement is taken again ([`Point1::cold`]): a layout's sequential can take up to about a
/// fifth longer than the point's in fact (the reduce by landing, a finer chunk count), while a
/// figure read on clocks still down reads 1.4-3x.
const COLD: f64 = 0.25;

/// Most rounds along every axis the search makes from its best so far (it stops sooner where a
/// round finds nothing faster).
const MAX_ROUNDS: usize = 3;

/// What sequential's time depends on among the knobs: the chunk count, the reduce, the link's
/// budget (which throttles sequential's collective as well), the GEMM's grid, the collective and
/// the GEMM's order (the order of its one pass's dispatches, and the collective's steps after it).
type Layout = (
    usize,
    String,
    Option<u32>,
    Option<u32>,
    Option<String>,
    Option<String>,
);

fn layout(k: &Knobs) -> Layout {
    (
        k.chunks,
        k.reduce.clone(),
        k.link_workgroups,
        k.gemm_grid,
        k.collective.clone(),
        k.order.clone(),
    )
}

/// `median_ms` on warm clocks: scaled by the sequential timed beside it (`beside_ms`, the same
/// clocks) against its layout's sequential on warm clocks (`warm_ms`). The GPU's clocks fall
/// whenever it idles while the host lowers and checks, so that one figure can read 2-3x another of
/// the same configuration; a ratio of two figures timed together moves far less. Not the ratio
/// alone: a configuration whose sequential is slow would win by it.
fn on_warm_clocks(median_ms: f64, beside_ms: f64, warm_ms: f64) -> f64 {
    median_ms * warm_ms / beside_ms
}

/// What [`Point1::ask`] did: nothing (measured already, or it cannot run), nothing for want of time,
/// or measured.
#[derive(Debug, PartialEq)]
enum Asked {
    Known,
    NoTime,
    Measured,
}

/// The tuner of one point: what it measured so far, and its bounds.
struct Point1<'a, M: Measure> {
    m: M,
    job: &'a Job,
    s: &'a Settings,
    seen: HashMap<(ModeKind, Knobs), Measured>,
    /// Sequential's times per [`Layout`], as timed beside every measurement.
    sequential: HashMap<Layout, Vec<f64>>,
    progress: &'a dyn Fn(&str),
    /// The longest one measurement of each mode took so far: a measurement is started only where
    /// one that long still ends before the deadline, so that the budget bounds the end of the
    /// tuning, not the start of its last measurement.
    longest: HashMap<ModeKind, Duration>,
    /// The least lead over sequential a choice must read to run here: [`LEAST_LEAD`], or where the
    /// point leaves no room to overlap, its noise ([`point::NoRoom`]).
    least: f64,
}

impl<M: Measure> Point1<'_, M> {
    /// `mode` at `knobs`, measured once (a second ask returns the figure kept), again after a long
    /// warm-up where its first figure read on cold clocks ([`Self::cold`]).
    fn measure(&mut self, mode: ModeKind, knobs: &Knobs) -> Result<Measured> {
        let key = (mode, knobs.clone());
        if let Some(m) = self.seen.get(&key) {
            return Ok(m.clone());
        }
        self.say(mode, knobs, "");
        // Sequential beside every measurement, its rounds interleaved with the mode's: each figure
        // is read on warm clocks by it ([`on_warm_clocks`]).
        let how = How {
            warmup: Warmup::Rounds,
            baselines: Baselines::Sequential,
            reps: self.s.reps,
        };
        let mut m = self.run(mode, knobs, how)?;
        if self.cold(&m) {
            // Nothing of its layout reads it on warm clocks, and a figure 1.4-3x its own would rank
            // it: worth one more measurement, straight after the first (the GPU busy since) and
            // after a long warm-up. A second chance, not a proof: the clocks can be down still.
            self.say(mode, knobs, " again, its first figure read on cold clocks");
            let again = How {
                warmup: Warmup::Long,
                ..how
            };
            m = self.run(mode, knobs, again)?;
        }
        self.seen.insert(key, m.clone());
        Ok(m)
    }

    /// Tells the progress of a measurement of `mode` at `knobs`, `what` after its configuration.
    fn say(&self, mode: ModeKind, knobs: &Knobs, what: &str) {
        let workload = &self.job.workload;
        (self.progress)(&format!(
            "{workload} {mode}: {}{what}",
            knobs.describe(mode)
        ));
    }

    /// Whether `m` timed the mode and gave its layout's only sequential figure, one more than
    /// [`COLD`] slower than the point's sequential ([`Self::sequential_ms`]): read on warm clocks
    /// ([`on_warm_clocks`]), it would be scaled by that slow figure itself, that is, not at all.
    /// Only on the point's collective: another's sequential differs in fact (the direct all-reduce
    /// moves more bytes), so a slow figure there says nothing of the clocks.
    fn cold(&self, m: &Measured) -> bool {
        let l = layout(&m.knobs);
        match (m.ratio_beside(), m.sequential_ms, self.sequential.get(&l)) {
            (Some(_), Some(t), Some(v)) if l.4 == self.own_collective() && v.len() == 1 => {
                t > self.sequential_ms() * (1.0 + COLD)
            }
            _ => false,
        }
    }

    /// The point's own collective, as the knobs name it.
    fn own_collective(&self) -> Option<String> {
        Knobs::of(&self.job.base).collective
    }

    /// One experiment of `mode` at `knobs`, measured `how`; its sequential time kept by layout.
    fn run(&mut self, mode: ModeKind, knobs: &Knobs, how: How) -> Result<Measured> {
        let started = Instant::now();
        let m = self.m.measure(mode, knobs, how)?;
        if let Some(t) = self.m.took() {
            (self.progress)(&format!("{} {mode}: {t}", self.job.workload));
        }
        let took = started.elapsed();
        let longest = self.longest.entry(mode).or_default();
        *longest = (*longest).max(took);
        if let Some(t) = m.sequential_ms {
            self.sequential.entry(layout(knobs)).or_default().push(t);
        }
        Ok(m)
    }

    /// `mode`'s configuration as given (what a run without a table runs it at: [`Job::config`]), as
    /// the search keys it.
    fn given(&self, mode: ModeKind) -> Knobs {
        Knobs::of(self.job.config(mode)).canonical()
    }

    /// `mode` at `k` measured, where it is not yet and can run, if a measurement ends before
    /// `deadline`.
    fn ask(&mut self, mode: ModeKind, k: &Knobs, deadline: Instant) -> Result<Asked> {
        if self.seen.contains_key(&(mode, k.clone())) || k.runnable(&self.job.base, mode).is_none()
        {
            return Ok(Asked::Known);
        }
        if !self.fits(mode, deadline) {
            return Ok(Asked::NoTime);
        }
        self.measure(mode, k)?;
        Ok(Asked::Measured)
    }

    /// Whether one more measurement of `mode` ends before `deadline`, as long as its longest so far.
    fn fits(&self, mode: ModeKind, deadline: Instant) -> bool {
        Instant::now() + self.longest.get(&mode).copied().unwrap_or_default() <= deadline
    }

    /// Sequential's time on `l` on warm clocks: the fastest of its figures (the clocks only ever
    /// slow it).
    fn warm_ms(&self, l: &Layout) -> Option<f64> {
        let v = self.sequential.get(l)?;
        Some(v.iter().copied().fold(f64::INFINITY, f64::min)).filter(|t| t.is_finite())
    }

    /// `m`'s time on warm clocks ([`on_warm_clocks`]); None where it lacks either figure.
    fn warm_time(&self, m: &Measured) -> Option<f64> {
        m.ratio_beside()?;
        let w = self.warm_ms(&layout(&m.knobs))?;
        Some(on_warm_clocks(m.median_ms?, m.sequential_ms?, w))
    }

    /// The slowest on warm clocks of the figures of `m`'s configuration among `c`'s ([`slowest`]),
    /// as a configuration is ranked and judged; None where `m` has no time on warm clocks.
    fn slowest_of(&self, m: &Measured, c: &Choice) -> Option<f64> {
        let first = self.warm_time(m)?;
        let w = self.warm_ms(&layout(&m.knobs))?;
        Some(slowest(
            &m.knobs,
            c.alternatives.iter().chain(&c.confirmed),
            w,
            first,
        ))
    }

    /// Sorts `v` by time on warm clocks, the fastest first; what has none (a failure) last.
    fn sort(&self, v: &mut [Measured]) {
        let t = |m: &Measured| self.warm_time(m).unwrap_or(f64::INFINITY);
        v.sort_by(|a, b| t(a).total_cmp(&t(b)));
    }

    /// `mode`'s measurements, the fastest on warm clocks first.
    fn ranked(&self, mode: ModeKind) -> Vec<Measured> {
        let mut v: Vec<Measured> = self
            .seen
            .iter()
            .filter(|((m, _), _)| *m == mode)
            .map(|(_, v)| v.clone())
            .collect();
        self.sort(&mut v);
        v
    }

    /// The fastest of `mode`'s measurements on warm clocks.
    fn best(&self, mode: ModeKind) -> Option<Measured> {
        self.best_where(mode, |_| true)
    }

    /// The fastest of `mode`'s measurements on warm clocks whose knobs `keep` keeps.
    fn best_where(&self, mode: ModeKind, keep: impl Fn(&Knobs) -> bool) -> Option<Measured> {
        self.ranked(mode)
            .into_iter()
            .find(|m| m.ratio_beside().is_some() && keep(&m.knobs))
    }

    /// The search proper: the other way to make room for the steps ([`space::other_room`]), then
    /// one knob at a time from the best so far, every axis once per round (chunk
    /// counts as the model ranks them), rounds again from the new best while one finds a faster
    /// configuration, from each collective in turn in its share of the time; then, as the budget
    /// allows, the rest of the grid nearest the best first (two knobs changed, then three...),
    /// which ends as the grid where the budget covers it. Or every point of the grid in order
    /// (`exhaustive`). A configuration already measured costs nothing.
    fn search(
        &mut self,
        mode: ModeKind,
        axes: &[Vec<space::Value>],
        deadline: Instant,
    ) -> Result<()> {
        let base_knobs = self.given(mode);
        let mut grid = space::grid(&space::start(&self.job.base, axes), axes, MAX_GRID);
        if !self.s.exhaustive {
            // The collective is no knob among the others: their best values differ with it (a GEMM
            // grid that pays beside the ring's steps can double the direct all-reduce's time, which
            // reduces by update only), so that one knob moved from the other's best says little of
            // it. The rounds run from each collective the space offers, moving the other knobs.
            let (collectives, others): (Vec<_>, Vec<_>) = axes
                .iter()
                .cloned()
                .partition(|a| matches!(a.first(), Some(space::Value::Collective(_))));
            let starts: Vec<Knobs> = match collectives.first() {
                Some(values) => values
                    .iter()
                    .map(|v| {
                        let mut k = base_knobs.clone();
                        v.set(&mut k);
                        k.canonical()
                    })
                    .filter(|k| k.runnable(&self.job.base, mode).is_some())
                    .collect(),
                None => vec![base_knobs.clone()],
            };
            // The other way to make room for the steps first: the rounds from the configuration's
            // own collective then move from the faster.
            if let Some(k) = space::other_room(&base_knobs, &others) {
                self.ask(mode, &k.canonical(), deadline)?;
            }
            for (i, start) in starts.iter().enumerate() {
                let left = deadline.saturating_duration_since(Instant::now());
                let share = Instant::now() + left / (starts.len() - i) as u32;
                self.rounds(mode, &others, start, share)?;
            }
            let best = self.best(mode).map_or(base_knobs, |b| b.knobs);
            grid.sort_by_key(|k| k.differences(&best));
        }
        // Room for the confirmation: [`CONFIRM`] measurements and the one as given, some times the
        // reps each; at most half of what is left, so that a share too short for both still
        // measures the grid (the confirmation then confirms fewer). Until a mode has measured
        // once, its longest is its share of the first experiment, settling and baselines included.
        let room = (self.longest.get(&mode).copied().unwrap_or_default()
            * ((CONFIRM + 1) * (CONFIRM_REPS + 1) / 2) as u32)
            .min(deadline.saturating_duration_since(Instant::now()) / 2);
        let grid_deadline = deadline.checked_sub(room).unwrap_or(deadline);
        for k in grid.iter().map(Knobs::canonical) {
            if self.ask(mode, &k, grid_deadline)? == Asked::NoTime {
                break;
            }
        }
        Ok(())
    }

    /// Rounds of one-knob moves along `axes` from the fastest measured configuration of `start`'s
    /// collective (`start` until one is), while a round finds a faster one, until `deadline`.
    fn rounds(
        &mut self,
        mode: ModeKind,
        axes: &[Vec<space::Value>],
        start: &Knobs,
        deadline: Instant,
    ) -> Result<()> {
        let limits: Vec<usize> = axes.iter().map(Vec::len).collect();
        let best = |p: &Self| p.best_where(mode, |k| k.collective == start.collective);
        for _ in 0..MAX_ROUNDS {
            let before = best(self).and_then(|b| self.warm_time(&b));
            let mut measured = 0;
            for (a, v) in space::rounds(&limits) {
                let mut k = best(self).map_or(start.clone(), |b| b.knobs);
                axes[a][v].set(&mut k);
                // A chunk count that cannot run stays a move not made: repaired, it would be
                // another count's.
                if !matches!(axes[a][v], space::Value::Chunks(_)) {
                    k = self.at_chunks_that_run(mode, k, axes);
                }
                match self.ask(mode, &k.canonical(), deadline)? {
                    Asked::Known => {}
                    Asked::NoTime => return Ok(()),
                    Asked::Measured => measured += 1,
                }
            }
            let after = best(self).and_then(|b| self.warm_time(&b));
            // From a start not yet measured (`before` None) a round that timed one is a gain.
            if measured == 0 || (before.is_some() && after >= before) {
                break;
            }
        }
        Ok(())
    }

    /// `k`, or where it cannot run at its chunk count (the GEMM's chunk order at one chunk a rank),
    /// `k` at the first count of the chunk axis where it can. A value that needs finer chunks is
    /// then measured as a move of its own, from the best so far, rather than only as two knobs
    /// changed in the grid after the rounds, which a budget may never reach.
    fn at_chunks_that_run(&self, mode: ModeKind, k: Knobs, axes: &[Vec<space::Value>]) -> Knobs {
        let runs = |k: &Knobs| k.canonical().runnable(&self.job.base, mode).is_some();
        if runs(&k) {
            return k;
        }
        axes.iter()
            .filter(|a| matches!(a.first(), Some(space::Value::Chunks(_))))
            .flatten()
            .map(|v| {
                let mut moved = k.clone();
                v.set(&mut moved);
                moved
            })
            .find(runs)
            .unwrap_or(k)
    }

    /// The [`CONFIRM`] fastest of `mode`'s configurations measured again, and the configuration as
    /// given second where it is not among them, each with sequential beside it, a settling warm-up
    /// and [`CONFIRM_REPS`] times the reps, as the deadline allows (the first whatever it says, at
    /// the reps where it is past, unless the mode falls back whatever that says, [`Self::behind`];
    /// the search left room for all of them). A confirmation that failed is kept, without a time;
    /// [`Self::pick`] orders them.
    fn confirm(&mut self, mode: ModeKind, deadline: Instant) -> Result<Vec<Measured>> {
        let mut confirmed: Vec<Measured> = Vec::new();
        let mut top: Vec<Measured> = self
            .ranked(mode)
            .into_iter()
            .filter(|m| m.ratio_beside().is_some())
            .take(CONFIRM)
            .collect();
        // Among many short measurements the fastest is often one whose noise ran low: a choice
        // replaces the configuration as given (the defaults a run without a table gets) only where
        // it is clearly faster measured the same way ([`Self::given_stands`]).
        let given = self.given(mode);
        if !top.iter().any(|m| m.knobs == given) {
            if let Some(m) = self
                .seen
                .get(&(mode, given))
                .filter(|m| m.ratio_beside().is_some())
            {
                top.insert(top.len().min(1), m.clone());
            }
        }
        let behind = self.behind(mode);
        for m in &top {
            let fits = self.fits(mode, deadline);
            if !fits && (!confirmed.is_empty() || behind) {
                break;
            }
            // The first is measured whatever the deadline says (but where the mode falls back
            // whatever one more figure says, [`Self::behind`]): past it, at the search's reps, so
            // that a point whose runs take most of a second passes its budget by one measurement,
            // not by three times one.
            let how = How {
                warmup: Warmup::Settle,
                baselines: Baselines::Sequential,
                reps: self.s.reps * if fits { CONFIRM_REPS } else { 1 },
            };
            confirmed.push(self.run(mode, &m.knobs, how)?);
        }
        Ok(confirmed)
    }

    /// Whether `mode` falls back whatever one more figure says: every figure of it so far, each on
    /// the point's own collective, reads slower than the sequential timed beside it, or leads it by
    /// less than the point's least lead ([`Point1::least`]). A configuration's speedup is the
    /// point's sequential (its fastest own-collective layout on warm clocks, never slower than a
    /// figure's own layout's) over the slowest of its figures on warm clocks, so it is at most any
    /// one figure's ratio to the sequential beside it, and one more figure only adds to those (the
    /// configuration as given, fused mode's own, the choice made again on the final figures: each
    /// is one of them).
    fn behind(&self, mode: ModeKind) -> bool {
        let own = self.own_collective();
        let mut figures = self
            .seen
            .iter()
            .filter(|((m, _), f)| *m == mode && f.ratio_beside().is_some())
            .map(|(_, f)| f)
            .peekable();
        // A hair below the least lead: the warm-clock arithmetic's rounding cannot lift such a
        // figure to it.
        figures.peek().is_some()
            && figures.all(|f| {
                f.knobs.collective == own
                    && f.ratio_beside()
                        .is_some_and(|r| !pays(r + 1e-9, self.least))
            })
    }

    /// `mode`'s configuration as given, where the point's first experiment did not measure it
    /// (fused mode's own, [`Job::config`]), measured whatever the deadline (sequential beside it,
    /// as every measurement of the search): the choice must beat it clearly to replace it.
    fn measure_given(&mut self, mode: ModeKind) -> Result<()> {
        let given = self.given(mode);
        if !self.seen.contains_key(&(mode, given.clone()))
            && given.runnable(&self.job.base, mode).is_some()
        {
            self.measure(mode, &given)?;
        }
        Ok(())
    }

    /// `mode`'s choice: its configuration as given ([`Self::measure_given`]; the point measured
    /// each mode's before any search), its search over `axes` until `deadline`, then the
    /// confirmation, then [`Self::pick`]. None where nothing ran.
    fn choose(
        &mut self,
        mode: ModeKind,
        fitted: &Costs,
        axes: &[Vec<space::Value>],
        deadline: Instant,
    ) -> Result<Option<Choice>> {
        self.measure_given(mode)?;
        self.search(mode, axes, deadline)?;
        let alternatives = self.ranked(mode);
        let confirmed = self.confirm(mode, deadline)?;
        let mut c = self.choice(mode, alternatives, confirmed);
        Ok(self.pick(&mut c, fitted).then_some(c))
    }

    /// `mode`'s choice before [`Self::pick`] makes it: its measurements and confirmations, its
    /// figure as given.
    fn choice(
        &self,
        mode: ModeKind,
        alternatives: Vec<Measured>,
        confirmed: Vec<Measured>,
    ) -> Choice {
        let given = self.given(mode);
        Choice {
            mode,
            model_ms: None,
            given_ms: self
                .seen
                .get(&(mode, given.clone()))
                .and_then(|m| m.median_ms),
            median_ms: f64::NAN,
            sequential_ms: None,
            knobs: given,
            speedup: f64::NAN,
            fallback: false,
            alternatives,
            confirmed,
        }
    }

    /// `mode`'s choice where no mode is searched ([`point::no_room`]): [`Self::pick`] among what was
    /// measured of it as given (the point's first experiment, and fused mode's own configuration).
    /// None where none gave a time.
    fn as_given(&self, mode: ModeKind, fitted: &Costs) -> Option<Choice> {
        let mut c = self.choice(mode, self.ranked(mode), Vec::new());
        self.pick(&mut c, fitted).then_some(c)
    }

    /// Sorts `c`'s confirmations by the slowest of each configuration's figures on warm clocks as
    /// read now ([`slowest`]; failures last) and makes `c` the first, or where none was confirmed
    /// (its fallback certain past the budget, [`Self::behind`]) the fastest measured so whose
    /// confirmation did not fail, unless the configuration as given stands
    /// ([`Self::given_stands`]); false where none ran. Again once
    /// every mode is measured: a later mode's sequential figures can lower a layout's warm time,
    /// and the choice must be made on the figures it is judged by.
    fn pick(&self, c: &mut Choice, fitted: &Costs) -> bool {
        let keys: Vec<f64> = c
            .confirmed
            .iter()
            .map(|m| self.slowest_of(m, c).unwrap_or(f64::INFINITY))
            .collect();
        let mut keyed: Vec<(f64, Measured)> = keys
            .into_iter()
            .zip(std::mem::take(&mut c.confirmed))
            .collect();
        keyed.sort_by(|a, b| a.0.total_cmp(&b.0));
        c.confirmed = keyed.into_iter().map(|(_, m)| m).collect();
        let failed = |k: &Knobs| {
            c.confirmed
                .iter()
                .any(|m| m.knobs == *k && m.median_ms.is_none())
        };
        let best = c
            .confirmed
            .iter()
            .find(|m| self.warm_time(m).is_some())
            .or_else(|| {
                // None confirmed with a time: each has only this figure.
                let t = |m: &Measured| self.warm_time(m).unwrap_or(f64::INFINITY);
                c.alternatives
                    .iter()
                    .filter(|m| self.warm_time(m).is_some() && !failed(&m.knobs))
                    .min_by(|a, b| t(a).total_cmp(&t(b)))
            })
            .cloned();
        let Some(mut best) = best else {
            return false;
        };
        if let Some(given) = self.given_stands(c, &best) {
            best = given;
        }
        // The pass cost fitted again to the mode's configuration as given where it is its own
        // (fused mode's, [`Job::own`]): fitted at the point's chunk count, the transfer a single
        // chunk leaves unhidden would count as the cost of each pass at another.
        let given = self.given(c.mode);
        let ranks = self.job.base.ranks;
        let fitted = match (self.job.own(c.mode), c.given_ms) {
            (Some(_), Some(t)) => model::fit_pass(c.mode, fitted, ranks, given.chunks, t),
            _ => *fitted,
        };
        c.model_ms = Some(model::predict_ms(c.mode, &fitted, ranks, best.knobs.chunks));
        c.median_ms = best.median_ms.unwrap_or(f64::NAN);
        c.sequential_ms = best.sequential_ms;
        c.knobs = best.knobs;
        true
    }

    /// The configuration as given, where `best` does not beat it clearly: by more than [`NOISE`]
    /// both on warm clocks (each by the slowest of its figures, as it is judged) and by the ratio
    /// to the sequential timed beside each. Each reading has its own error, so a lead in one alone
    /// may be that error: on warm clocks a layout whose sequential once read low is flattered (its
    /// fastest figure is the reference; the more often a layout is measured, the lower that
    /// figure), by the ratio a layout whose sequential is slow. A table replaces the defaults a run
    /// without one gets only on such evidence. The ratios are compared on like figures: their
    /// confirmations, or where the given's was not timed, their first figures. None (`best` stands)
    /// where `best` is the configuration as given, beats it so, the given's confirmation failed, or
    /// the given's slowest figure leads the point's sequential by less than the point's least lead
    /// ([`Point1::least`]), so that it would fall back (the mode then runs by its best, or falls
    /// back by it).
    fn given_stands(&self, c: &Choice, best: &Measured) -> Option<Measured> {
        let given = self.given(c.mode);
        let is = |m: &Measured, k: &Knobs| m.knobs.canonical() == k.canonical();
        if is(best, &given)
            || c.confirmed
                .iter()
                .any(|m| is(m, &given) && m.median_ms.is_none())
        {
            return None;
        }
        let timed = |v: &[Measured], k: &Knobs| {
            v.iter()
                .find(|m| is(m, k) && self.warm_time(m).is_some())
                .cloned()
        };
        let (b, g) = match timed(&c.confirmed, &given) {
            Some(g) => (best.clone(), g),
            None => (
                timed(&c.alternatives, &best.knobs)?,
                timed(&c.alternatives, &given)?,
            ),
        };
        let (tb, tg) = (self.slowest_of(&b, c)?, self.slowest_of(&g, c)?);
        if !pays(self.sequential_ms() / tg, self.least) {
            return None;
        }
        // A speed lead of more than NOISE on each reading; without both ratios, no lead by one.
        let beats = tb * (1.0 + NOISE) < tg
            && matches!(
                (b.ratio_beside(), g.ratio_beside()),
                (Some(rb), Some(rg)) if rb > rg * (1.0 + NOISE)
            );
        (!beats).then_some(g)
    }

    /// Sequential's time at this point: its fastest layout's on warm clocks (read as every mode's
    /// time on warm clocks is, so that a fastest figure's low noise cancels in a speedup), among
    /// the layouts of the point's own collective: `t3 run` times its baselines there, also for a
    /// mode the table runs as another.
    fn sequential_ms(&self) -> f64 {
        let own = self.own_collective();
        self.sequential
            .keys()
            .filter(|l| l.4 == own)
            .filter_map(|l| self.warm_ms(l))
            .filter(|t| *t > 0.0)
            .fold(f64::INFINITY, f64::min)
    }
}

#[cfg(test)]
mod tests;
