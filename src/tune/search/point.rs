//! One point tuned: every mode as given in one experiment (its GEMM and collective alone the
//! model's costs), the model fitted to it and each mode's space pruned by it, then each mode's
//! search ([`super::Point1::choose`]) in its share of the budget, the choices made again and judged
//! on the final figures; no search where the first experiment leaves no room to overlap
//! ([`no_room`]): each mode stands as given.

use std::collections::HashMap;
use std::time::Duration;

use web_time::Instant;

use crate::consistency::{room_noise, Kind};
use crate::error::{Error, Result};
use crate::experiment::{Baselines, Report};
use crate::modes::ModeKind;

use crate::tune::knobs::Knobs;
use crate::tune::model::{self, Costs};
use crate::tune::rig::{measured, How, Measure, OnGpu, Rig, Warmup};
use crate::tune::space::{self, Context};
use crate::tune::table::{Choice, Key, Measured, NotRun, Point};

use super::{layout, on_warm_clocks, pays, Devices, Job, Point1, Settings, LEAST_LEAD};

/// Tunes `job` on `d` until `deadline` (at least one measurement of each mode whatever the
/// deadline), each mode's search over the space `ctx` gives; `progress` hears of each measurement.
pub fn tune_point(
    d: &Devices,
    job: &Job,
    s: &Settings,
    ctx: Context,
    deadline: Instant,
    progress: &dyn Fn(&str),
) -> Result<Point> {
    let mut p = Point1 {
        m: OnGpu {
            rig: Rig {
                d,
                settle_s: s.warmup_s,
                inputs: None,
                sys: None,
                took: None,
            },
            job,
            s,
        },
        job,
        s,
        seen: HashMap::new(),
        sequential: HashMap::new(),
        progress,
        longest: HashMap::new(),
        least: LEAST_LEAD,
    };
    // Every mode at the point's configuration as given, in one experiment: its GEMM and collective
    // alone are the model's costs. A mode whose own configuration as given differs (fused's,
    // [`Job::config`]) is measured at that one too, before any search.
    let base_knobs = Knobs::of(&job.base).canonical();
    progress(&format!("{}: every mode as given", job.workload));
    let started = Instant::now();
    let first = How {
        warmup: Warmup::Long,
        baselines: Baselines::Costs,
        reps: s.reps,
    };
    let base = p.m.rig.experiment(&job.base, &job.modes, s, first)?;
    if let Some(t) = p.m.took() {
        progress(&format!("{}: every mode as given {t}", job.workload));
    }
    // Each mode's share of that experiment, until one of its own measurements says better.
    let share = started.elapsed() / job.modes.len().max(1) as u32;
    let given: Vec<Measured> = job
        .modes
        .iter()
        .map(|&m| measured(&base_knobs, &base, m))
        .collect();
    let costs = match &base {
        Ok(r) => Costs {
            gemm_ms: r.t_gemm_ms,
            comm_ms: r.t_comm_ms,
            pass_ms: 0.0,
        },
        Err(e) => {
            return Err(Error::invalid(
                "tune point",
                format!("{} as given", job.workload),
                format!("a configuration that runs ({e})"),
            ))
        }
    };
    let no_room = base.as_ref().ok().and_then(no_room);
    let got = search_point(&mut p, (&given, costs, share, no_room), ctx, deadline)?;
    Ok(Point {
        workload: job.workload.clone(),
        key: Key::of(&job.base, d.gpus.len()),
        sequential_ms: got.sequential_ms,
        modes: got.modes,
        not_run: got.not_run,
        no_room: got.no_room,
    })
}

/// What [`search_point`] gives: the point's sequential time, each mode's choice, the modes not
/// tuned and why, and where the point leaves no room to overlap ([`no_room`]), why no mode was
/// searched.
pub(super) struct Searched {
    pub sequential_ms: f64,
    pub modes: Vec<Choice>,
    pub not_run: Vec<NotRun>,
    pub no_room: Option<String>,
}

/// What [`tune_point`] does after its first experiment (`given`: each mode's figure as given, in
/// the job's order; `costs`: the model's, from it; `share`: each mode's part of its time), over
/// any [`Measure`] (the search's tests run it on a stand-in).
pub(super) fn search_point<M: Measure>(
    p: &mut Point1<'_, M>,
    (given, costs, share, no_room): (&[Measured], Costs, Duration, Option<NoRoom>),
    ctx: Context,
    deadline: Instant,
) -> Result<Searched> {
    let job = p.job;
    let s = p.s;
    let base_knobs = Knobs::of(&job.base).canonical();
    for &m in &job.modes {
        p.longest.insert(m, share);
    }
    for (&m, got) in job.modes.iter().zip(given) {
        if let Some(t) = got.sequential_ms {
            p.sequential
                .entry(layout(&base_knobs))
                .or_insert_with(|| vec![t]);
        }
        p.seen.insert((m, base_knobs.clone()), got.clone());
    }
    // Each mode that ran as given, with the model fitted to it and the space it searches: the
    // model prunes the chunk axis to its best few (with a mode's own count as given and the next
    // finer one), and the grid and the search share the space.
    let mut spaces: Vec<(ModeKind, Costs, Vec<Vec<space::Value>>)> = Vec::new();
    let mut not_run = Vec::new();
    for &mode in job.modes.iter().filter(|&&m| m != ModeKind::Sequential) {
        // Skipped or failed as given (a mode that cannot run here): nothing to tune, said.
        let given = &p.seen[&(mode, base_knobs.clone())];
        let Some(t) = given.median_ms else {
            not_run.push(NotRun {
                mode,
                why: match given
                    .error
                    .as_deref()
                    .map(|e| (e, e.strip_prefix("skipped: ")))
                {
                    Some((_, Some(why))) => format!("it cannot run here as given ({why})"),
                    Some((e, None)) => format!("as given, {e}"),
                    None => "as given, it gave no time".into(),
                },
            });
            continue;
        };
        let fitted = model::fit_pass(mode, &costs, job.base.ranks, job.base.chunks, t);
        let own = job.own(mode).map(|c| c.chunks);
        let chunks = space::chunk_axis(mode, &fitted, &job.base, own, s.chunk_tries);
        let axes = space::not_given(space::axes(mode, &job.base, &chunks, ctx), &job.given);
        spaces.push((mode, fitted, axes));
    }
    // `exhaustive` (the grid the search is judged by) and `search_no_room` search whatever the
    // room.
    let no_room = no_room.filter(|_| !s.exhaustive && !s.search_no_room);
    if let Some(n) = &no_room {
        // Without room to overlap a lead within the point's noise is an unconfirmed figure's
        // noise: a mode runs there only by a lead no such noise gives (as fused mode's own GEMM,
        // faster than T_gemm's, can give).
        p.least = n.lead;
        (p.progress)(&format!("{}: {}", job.workload, n.why));
    }
    // What is measured whatever the deadline first (each mode's configuration as given where the
    // first experiment did not measure it: fused mode's own), so that the searches share what it
    // leaves: at the start of a mode's share, a share already spent would end past the budget.
    // Without room too: the table's choice replaces what a run without a table runs (fused mode's
    // own configuration), so it must rest on a figure of that configuration.
    for (mode, _, _) in &spaces {
        p.measure_given(*mode)?;
    }
    // The smallest spaces first: what a mode leaves of its share goes to the modes after it.
    spaces.sort_by_key(|(_, _, axes)| axes.iter().map(Vec::len).product::<usize>());
    let n_modes = spaces.len().max(1) as u32;
    let mut choices = Vec::new();
    for (i, (mode, fitted, axes)) in spaces.into_iter().enumerate() {
        // This mode's share of what is left.
        let left = deadline.saturating_duration_since(Instant::now());
        let mode_deadline = Instant::now() + left / (n_modes - i as u32);
        let chosen = if no_room.is_some() {
            p.as_given(mode, &fitted)
        } else {
            p.choose(mode, &fitted, &axes, mode_deadline)?
        };
        match chosen {
            Some(c) => choices.push((c, fitted)),
            None => not_run.push(NotRun {
                mode,
                why: if no_room.is_some() {
                    "as given, it gave no time beside sequential".into()
                } else {
                    "no configuration it measured gave a time that held when measured again".into()
                },
            }),
        }
    }
    choices.sort_by_key(|(c, _)| job.modes.iter().position(|&m| m == c.mode));
    let sequential_ms = p.sequential_ms();
    for (c, fitted) in &mut choices {
        p.pick(c, fitted);
        let warm = p.warm_ms(&layout(&c.knobs));
        judge(c, sequential_ms, warm, p.least);
    }
    Ok(Searched {
        sequential_ms,
        modes: choices.into_iter().map(|(c, _)| c).collect(),
        not_run,
        no_room: no_room.map(|n| n.why),
    })
}

/// A point without room to overlap: why, and the lead over sequential a mode must show there to
/// run: the room check's noise over T_seq (at least [`crate::consistency::FLOOR`], which that noise
/// includes).
pub(super) struct NoRoom {
    pub why: String,
    pub lead: f64,
}

/// Why `first`, a point's first experiment, leaves no room to overlap: T_seq - max(T_gemm,
/// T_comm), all that overlap could hide, within the noise its reps measured and the jitter of a
/// run's figures (the report's own check, [`Kind::Room`]). No configuration could be shown to pay
/// by overlap there, and each measurement of the largest points takes seconds: each mode then
/// stands as given, unsearched, and runs only where it leads sequential by more than that noise.
/// None where it leaves room.
fn no_room(first: &Report) -> Option<NoRoom> {
    let c = first
        .checks
        .iter()
        .find(|c| c.kind == Kind::Room && c.subject.is_none() && !c.ok)?;
    let (gemm, comm, seq) = (
        first.t_gemm_spread?,
        first.t_comm_spread?,
        first.t_seq_spread?,
    );
    let lead = room_noise(gemm, comm, seq) / seq.median;
    Some(NoRoom {
        why: format!(
            "no room to overlap ({}): each mode as given, not searched, and run only where it \
             leads sequential by more than that noise ({:.1}%)",
            c.detail,
            lead * 100.0
        ),
        lead,
    })
}

/// The slowest on warm clocks of the figures in `figures` of `knobs`' configuration (`warm_ms`: its
/// layout's sequential on warm clocks), or `first` where it is slower or none has both times. Two
/// readings of one configuration differ by about a percent from noise alone, and a run after tuning
/// reads the lower as often as the higher: a configuration is as fast as its slowest reading says.
pub(super) fn slowest<'a>(
    knobs: &Knobs,
    figures: impl Iterator<Item = &'a Measured>,
    warm_ms: f64,
    first: f64,
) -> f64 {
    let k = knobs.canonical();
    figures
        .filter(|m| m.knobs.canonical() == k && m.ratio_beside().is_some())
        .filter_map(|m| Some(on_warm_clocks(m.median_ms?, m.sequential_ms?, warm_ms)))
        .fold(first, f64::max)
}

/// `c`'s speedup over the point's sequential (`sequential_ms`, its fastest layout on warm clocks),
/// and whether it falls back: even its best ran slower, or led by less than `least` (the point's
/// [`Point1::least`]). Where it has sequential beside it, read on warm clocks (`warm_ms`: its
/// layout's sequential on warm clocks) by the slowest of its configuration's figures (its first and
/// its confirmation's, [`slowest`]): a choice pays only where every reading says it does.
pub(super) fn judge(c: &mut Choice, sequential_ms: f64, warm_ms: Option<f64>, least: f64) {
    let t = match (c.sequential_ms, warm_ms) {
        (Some(beside), Some(w)) => slowest(
            &c.knobs,
            c.alternatives.iter().chain(&c.confirmed),
            w,
            on_warm_clocks(c.median_ms, beside, w),
        ),
        _ => c.median_ms,
    };
    c.speedup = sequential_ms / t;
    c.fallback = !pays(c.speedup, least);
}
