//! The check of a run: every finished output (or a sample of rows) against the f64 reference within
//! the bound its rounding derives, and every tracker against its threshold, on outputs poisoned
//! before the run.

use std::sync::Arc;

use serde::Serialize;

use crate::error::Result;
use crate::modes::System;
use crate::plan::key;
use crate::ranks::{finished, Inputs, ReferenceRow};
use crate::reference::{rel_to_scale_past, Rng, Rounding};

/// How results are checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verify {
    /// Every finished row against the reference, plus every tracker counter.
    Full,
    /// A random sample of finished rows (for shapes whose reference would take long), plus every counter.
    Sample(usize),
    /// No check.
    Off,
}

/// What a check found.
#[derive(Clone, Copy, Debug)]
pub struct Verdict {
    pub max_rel_error: f64,
    pub trackers_ok: bool,
    /// The rounding the outputs went through, and the elements past its bound.
    pub rounding: Rounding,
    pub excess: usize,
}

impl Verdict {
    /// Every tracker at its threshold, the error within its derived bound, no element past its own.
    pub fn ok(&self) -> bool {
        self.trackers_ok && self.max_rel_error <= self.rounding.tolerance() && self.excess == 0
    }
}

/// The rounding `sys`'s outputs go through.
pub fn rounding(sys: &System) -> Rounding {
    Rounding {
        out: sys.config.out_dtype,
        reduces: sys.plan.reduces_per_chunk(),
    }
}

/// Checks every finished output against the reference (all rows or a sample) and every tracker
/// against its threshold. Returns (max relative error, trackers ok).
pub fn check(sys: &System, inputs: &Inputs, verify: Verify) -> Result<(f64, bool)> {
    let v = verdict(sys, inputs, verify)?;
    Ok((v.max_rel_error, v.trackers_ok))
}

/// [`check`], with each element against its own rounding bound.
pub fn verdict(sys: &System, inputs: &Inputs, verify: Verify) -> Result<Verdict> {
    let rounding = rounding(sys);
    let mut excess = 0;
    let counters = sys.read_counters()?;
    let trackers_ok = counters
        .iter()
        .all(|(l, v)| sys.plan.thresholds.get(&key(*l)) == Some(v));
    let (shape, coll, ch) = (sys.config.shape, sys.config.collective, &sys.chunking);
    let done = finished(coll, ch);
    let mut worst = 0f64;
    // Each output span's rows against their reference (each row's exact sum and the magnitude of
    // what it sums, the error's scale: see rel_to_scale), computed once for every check of these
    // inputs.
    let mut judge = |got: &[f32], refs: &[Arc<ReferenceRow>]| {
        let want: Vec<f64> = refs.iter().flat_map(|r| r.want.iter().copied()).collect();
        let scale: Vec<f64> = refs.iter().flat_map(|r| r.scale.iter().copied()).collect();
        worst = worst.max(rel_to_scale_past(got, &want, &scale, rounding.floor()));
        excess += rounding.excess(got, &want, &scale);
    };
    match verify {
        Verify::Off => {}
        Verify::Full => {
            for &(p, x) in &done {
                let rows = ch.rows(x);
                let got = sys.read_rows(p, x, 0..rows.len())?;
                let rows: Vec<usize> = rows.collect();
                judge(&got, &inputs.reference_rows(shape, coll, ch, &rows));
            }
        }
        Verify::Sample(count) => {
            let sampled = sample(&done, ch, inputs.seed, count);
            // Every sampled row's reference at once, on the host's cores; every sampled row of a
            // device in one readback (a round trip per row would cost more than the check).
            let spans: Vec<std::ops::Range<usize>> = sampled
                .iter()
                .map(|(_, x, r)| (ch.rows(*x).start + r.start)..(ch.rows(*x).start + r.end))
                .collect();
            let rows: Vec<usize> = spans.iter().cloned().flatten().collect();
            let refs = inputs.reference_rows(shape, coll, ch, &rows);
            let got = sys.read_rows_of(&sampled)?;
            let mut at = 0;
            for (span, got) in spans.into_iter().zip(got) {
                judge(&got, &refs[at..at + span.len()]);
                at += span.len();
            }
        }
    }
    Ok(Verdict {
        max_rel_error: worst,
        trackers_ok,
        rounding,
        excess,
    })
}

/// Each of `order`'s modes that `checked` names run once on poisoned outputs and checked, in order:
/// its verdict, None where it was not checked.
pub fn check_all(
    sys: &mut System,
    inputs: &Inputs,
    (order, checked): (&[Box<dyn crate::modes::Mode>], &[bool]),
    verify: Verify,
) -> Result<Vec<Option<Verdict>>> {
    let mut checks: Vec<Option<Verdict>> = vec![None; order.len()];
    if verify == Verify::Off {
        return Ok(checks);
    }
    for (i, m) in order.iter().enumerate().filter(|&(i, _)| checked[i]) {
        sys.poison();
        m.run(sys)?;
        checks[i] = Some(verdict(sys, inputs, verify)?);
    }
    Ok(checks)
}

/// The rows `Verify::Sample(count)` checks: `count` (rank, chunk, one row relative to the chunk)
/// drawn from the finished outputs `done` by a generator seeded from the inputs' seed, so that a run
/// checks the same rows whichever way they are read.
pub fn sample(
    done: &[(usize, usize)],
    ch: &crate::shapes::Chunking,
    seed: u64,
    count: usize,
) -> Vec<(usize, usize, std::ops::Range<usize>)> {
    if done.is_empty() {
        return Vec::new();
    }
    let mut rng = Rng::new(seed ^ 0x5A5A);
    (0..count)
        .map(|_| {
            let (p, x) = done[rng.below(done.len())];
            let r = rng.below(ch.rows(x).len());
            (p, x, r..r + 1)
        })
        .collect()
}

/// Every rank's whole output as the last run left it (`--dump`): NaN rows in chunks the plan never
/// writes on that rank.
pub fn outputs(sys: &System) -> Result<Vec<Vec<f32>>> {
    let (s, ch) = (sys.config.shape, &sys.chunking);
    (0..sys.config.ranks)
        .map(|p| {
            let mut out = Vec::with_capacity(s.m * s.n);
            for x in 0..ch.count() {
                let rows = ch.rows(x);
                if sys.writes(p, x) {
                    out.extend(sys.read_rows(p, x, 0..rows.len())?);
                } else {
                    out.extend(std::iter::repeat_n(f32::NAN, rows.len() * s.n));
                }
            }
            Ok(out)
        })
        .collect()
}
