//! Consistency checks on a report's figures: what must hold between the baselines and every mode's
//! time for an overlap efficiency to mean anything, judged within the noise the reps measured.
//!
//! Noise: comparing `a <= b` allows the half-widths of both spreads (p10..p90 or min..max of the
//! reps, [`Spread`]) plus [`FLOOR`] of the larger median, so one rep (no spread) still gets the
//! timer's and the GPU clock's jitter.

use serde::Serialize;

use crate::stats::Spread;

/// Part of a median allowed on top of the measured spread: clock and timer jitter.
pub const FLOOR: f64 = 0.01;

/// What a failed check means for the report.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// Two figures contradict each other (T_gemm > T_seq, a mode faster than ideal): re-measured,
    /// and flagged if it persists.
    Consistency,
    /// The reps of one figure disagree beyond [`Checks::max_spread`]: re-measured, flagged if it
    /// persists.
    Spread,
    /// T_seq - ideal is within noise: no room to overlap, so an efficiency would divide noise by
    /// noise. Not re-measured (a collective much shorter than its GEMM is a real case).
    Room,
}

/// One check's outcome.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Check {
    /// Short name: "T_gemm <= T_seq", "T_comm <= T_seq", "T_encoded >= ideal", "spread T_seq",
    /// "T_seq - ideal > noise".
    pub name: String,
    pub kind: Kind,
    /// The mode or timed thing it concerns; None: the overlap baselines (T_gemm, T_comm, T_seq),
    /// whose failure leaves every mode's efficiency empty.
    pub subject: Option<String>,
    /// The figure the table prints it beside: T_gemm, T_comm, T_seq, ideal, gemm_untracked, or a
    /// mode's name (its row).
    pub beside: String,
    pub ok: bool,
    /// The figures compared and the noise allowed, ms.
    pub detail: String,
}

impl Check {
    /// Whether a failure is worth measuring again.
    pub fn remeasure(&self) -> bool {
        !self.ok && self.kind != Kind::Room
    }
}

/// Limits of the checks.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Checks {
    /// Widest spread (hi - lo, relative to the median) a figure's reps may have.
    pub max_spread: f64,
}

impl Default for Checks {
    fn default() -> Self {
        Checks { max_spread: 0.2 }
    }
}

/// `a <= b` within noise, and the noise allowed.
fn le(a: &Spread, b: &Spread) -> (bool, f64) {
    let noise = a.noise() + b.noise() + FLOOR * a.median.max(b.median);
    (a.median <= b.median + noise, noise)
}

/// The noise the baselines' room check allows: T_seq against ideal = max(T_gemm, T_comm), ms.
pub fn room_noise(gemm: Spread, comm: Spread, seq: Spread) -> f64 {
    le(&seq, &larger(gemm, comm)).1
}

/// A mode's own GEMM and transfers, where it runs its own rather than T_gemm's dispatches and the
/// steps (fused mode: every rank's GEMM on the packed buffers in one pass; its spares' transfers), each timed
/// alone, ms. Its efficiency is measured against its own GEMM rather than T_gemm, so that what its
/// GEMM gains or loses against T_gemm's (fused mode's packed GEMM fills the tails of T_gemm's one
/// dispatch per rank and chunk, and so runs shorter) is never credited to, or
/// charged against, overlap; and against the faster of its transfers and T_comm, so that a slow
/// transfer engine never makes its baseline longer than what the tool can do without overlap.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Own {
    pub gemm: Spread,
    pub comm: Spread,
}

/// What a mode's overlap efficiency is computed against: (seq - T) / (seq - ideal).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bounds {
    pub seq: Spread,
    pub ideal: Spread,
    /// Its own GEMM ([`Own`]) then the faster transfers, not T_seq and max(T_gemm, T_comm).
    pub own: bool,
    /// Where `own`: the transfers it counts are its own (faster than T_comm), else T_comm's.
    pub own_comm: bool,
}

impl Bounds {
    /// The share of what overlap could hide that a mode taking `ms` hid.
    pub fn efficiency(&self, ms: f64) -> f64 {
        (self.seq.median - ms) / (self.seq.median - self.ideal.median)
    }
}

/// The larger of two figures, with its spread.
fn larger(a: Spread, b: Spread) -> Spread {
    if a.median >= b.median {
        a
    } else {
        b
    }
}

/// The figures checked: the baselines and each mode's time, ms. `others` are timed things whose
/// spread alone is checked (the untracked GEMM).
pub struct Figures<'a> {
    pub gemm: Spread,
    pub comm: Spread,
    pub seq: Spread,
    pub modes: &'a [(&'a str, Spread)],
    pub others: &'a [(&'a str, Spread)],
    /// Modes measured against their own sequential run.
    pub own: &'a [(&'a str, Own)],
}

impl Figures<'_> {
    /// ideal = max(T_gemm, T_comm), with the spread of the larger.
    pub fn ideal(&self) -> Spread {
        larger(self.gemm, self.comm)
    }

    /// What `mode`'s efficiency is computed against: where it has its own GEMM, that GEMM then the
    /// faster of its transfers and T_comm, and the larger of the two as ideal; else T_seq and ideal.
    pub fn bounds(&self, mode: &str) -> Bounds {
        match self.own.iter().find(|(m, _)| *m == mode) {
            Some((_, o)) => {
                let own_comm = o.comm.median <= self.comm.median;
                let comm = if own_comm { o.comm } else { self.comm };
                Bounds {
                    seq: o.gemm.then(&comm),
                    ideal: larger(o.gemm, comm),
                    own: true,
                    own_comm,
                }
            }
            None => Bounds {
                seq: self.seq,
                ideal: self.ideal(),
                own: false,
                own_comm: false,
            },
        }
    }
}

impl Checks {
    /// The spread check of one figure `s`, named `spread {what}`.
    pub fn spread(&self, what: &str, subject: Option<&str>, beside: &str, s: &Spread) -> Check {
        Check {
            name: format!("spread {what}"),
            kind: Kind::Spread,
            subject: subject.map(Into::into),
            beside: beside.into(),
            // Reps that all agree pass, zero included (T_comm where one rank has nothing to move:
            // 0 / 0 would fail them and measure again for nothing).
            ok: s.hi == s.lo || s.relative() <= self.max_spread,
            detail: format!(
                "{:.3}..{:.3} ms ({}) around {:.3} ms: {:.0}% (at most {:.0}%)",
                s.lo,
                s.hi,
                s.kind,
                s.median,
                s.relative() * 100.0,
                self.max_spread * 100.0
            ),
        }
    }

    /// Every check on `f`, passed or not, baselines first.
    pub fn run(&self, f: &Figures) -> Vec<Check> {
        let mut out = Vec::new();
        // `a <= b`, written the way round the check's name reads (`b >= a` where `flip`).
        let cmp = |name: String,
                   subject: Option<&str>,
                   beside: &str,
                   a: &Spread,
                   b: &Spread,
                   flip: bool| {
            let (ok, noise) = le(a, b);
            let (x, y, rel) = match (flip, ok) {
                (false, true) => (a, b, "<="),
                (false, false) => (a, b, ">"),
                (true, true) => (b, a, ">="),
                (true, false) => (b, a, "<"),
            };
            Check {
                name,
                kind: Kind::Consistency,
                subject: subject.map(Into::into),
                beside: beside.into(),
                ok,
                detail: format!(
                    "{:.3} {rel} {:.3} ms, noise {:.3} ms",
                    x.median, y.median, noise
                ),
            }
        };
        out.push(cmp(
            "T_gemm <= T_seq".into(),
            None,
            "T_gemm",
            &f.gemm,
            &f.seq,
            false,
        ));
        out.push(cmp(
            "T_comm <= T_seq".into(),
            None,
            "T_comm",
            &f.comm,
            &f.seq,
            false,
        ));
        out.push(self.spread("T_gemm", None, "T_gemm", &f.gemm));
        out.push(self.spread("T_comm", None, "T_comm", &f.comm));
        out.push(self.spread("T_seq", None, "T_seq", &f.seq));
        // Room to overlap: T_seq - ideal beyond noise (for every mode), or a mode's own.
        // Nothing to move (one rank: every rep of T_comm is 0) is no room whatever the noise.
        let room = |name: String,
                    subject: Option<&str>,
                    beside: String,
                    seq: &Spread,
                    ideal: Spread,
                    comm: &Spread| {
            let (_, noise) = le(seq, &ideal);
            Check {
                name,
                kind: Kind::Room,
                subject: subject.map(Into::into),
                beside,
                ok: comm.hi > 0.0 && seq.median - ideal.median > noise,
                detail: format!(
                    "sequential {:.3} - ideal {:.3} = {:.3} ms, noise {:.3} ms",
                    seq.median,
                    ideal.median,
                    seq.median - ideal.median,
                    noise
                ),
            }
        };
        out.push(room(
            "T_seq - ideal > noise".into(),
            None,
            "ideal".into(),
            &f.seq,
            f.ideal(),
            &f.comm,
        ));
        for (what, s) in f.others {
            out.push(self.spread(what, Some(what), what, s));
        }
        // A mode's own GEMM and transfers: their spreads and its room concern that mode only.
        for (mode, o) in f.own {
            for (part, s) in [("gemm", &o.gemm), ("comm", &o.comm)] {
                let figure = format!("{mode}_{part}");
                out.push(self.spread(&format!("T_{figure}"), Some(mode), &figure, s));
            }
            let b = f.bounds(mode);
            out.push(room(
                format!("{mode} seq - {mode} ideal > noise"),
                Some(mode),
                format!("{mode}_ideal"),
                &b.seq,
                b.ideal,
                &o.comm,
            ));
        }
        for (mode, s) in f.modes {
            out.push(cmp(
                format!("T_{mode} >= ideal"),
                Some(mode),
                mode,
                &f.bounds(mode).ideal,
                s,
                true,
            ));
            out.push(self.spread(&format!("T_{mode}"), Some(mode), mode, s));
        }
        out
    }
}

/// Names of the failed checks that concern `mode`: its own, and the baselines'.
pub fn failed_for<'a>(checks: &'a [Check], mode: &str) -> Vec<&'a Check> {
    checks
        .iter()
        .filter(|c| !c.ok && c.subject.as_deref().is_none_or(|s| s == mode))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(median: f64, lo: f64, hi: f64) -> Spread {
        Spread {
            median,
            lo,
            hi,
            kind: "min/max",
            n: 3,
        }
    }

    fn run(gemm: Spread, comm: Spread, seq: Spread, modes: &[(&str, Spread)]) -> Vec<Check> {
        Checks::default().run(&Figures {
            gemm,
            comm,
            seq,
            modes,
            others: &[],
            own: &[],
        })
    }

    fn failed(c: &[Check]) -> Vec<&str> {
        c.iter()
            .filter(|c| !c.ok)
            .map(|c| c.name.as_str())
            .collect()
    }

    #[test]
    fn consistent_figures_pass_every_check() {
        let c = run(
            s(10.0, 9.9, 10.1),
            s(4.0, 3.9, 4.1),
            s(14.0, 13.9, 14.1),
            &[("encoded", s(11.0, 10.9, 11.1))],
        );
        assert!(failed(&c).is_empty(), "{c:?}");
        assert_eq!(c.len(), 8);
    }

    #[test]
    fn gemm_slower_than_sequential_fails_beyond_noise_only() {
        // Issue 14's report: T_gemm 11.279 ms, T_seq 4.760 ms.
        let c = run(
            s(11.279, 11.2, 11.3),
            s(1.0, 1.0, 1.0),
            s(4.76, 4.7, 4.8),
            &[],
        );
        assert_eq!(
            failed(&c),
            ["T_gemm <= T_seq", "T_seq - ideal > noise"],
            "{c:?}"
        );
        assert!(c[0].detail.contains("11.279 > 4.760"), "{}", c[0].detail);
        // Within the reps' noise it holds.
        let c = run(
            s(10.1, 9.8, 10.4),
            s(1.0, 1.0, 1.0),
            s(10.0, 9.8, 10.2),
            &[],
        );
        assert!(c[0].ok, "{c:?}");
    }

    #[test]
    fn comm_slower_than_sequential_fails() {
        let c = run(s(2.0, 2.0, 2.0), s(6.0, 6.0, 6.0), s(5.0, 5.0, 5.0), &[]);
        assert!(failed(&c).contains(&"T_comm <= T_seq"), "{c:?}");
    }

    #[test]
    fn a_mode_faster_than_ideal_fails_for_that_mode_only() {
        let c = run(
            s(10.0, 10.0, 10.0),
            s(4.0, 4.0, 4.0),
            s(14.0, 14.0, 14.0),
            &[("host", s(12.0, 12.0, 12.0)), ("fused", s(8.0, 8.0, 8.0))],
        );
        assert_eq!(failed(&c), ["T_fused >= ideal"], "{c:?}");
        assert!(failed_for(&c, "host").is_empty());
        assert_eq!(failed_for(&c, "fused").len(), 1);
        assert!(failed_for(&c, "fused")[0].detail.contains("8.000 < 10.000"));
        // 1% below ideal is within the floor.
        let c = run(
            s(10.0, 10.0, 10.0),
            s(4.0, 4.0, 4.0),
            s(14.0, 14.0, 14.0),
            &[("fused", s(9.95, 9.95, 9.95))],
        );
        assert!(failed(&c).is_empty(), "{c:?}");
    }

    #[test]
    fn a_wide_spread_fails_and_baseline_failures_concern_every_mode() {
        let c = run(
            s(10.0, 10.0, 10.0),
            s(4.0, 4.0, 4.0),
            s(14.0, 13.0, 16.5),
            &[("encoded", s(12.0, 12.0, 12.0))],
        );
        assert_eq!(failed(&c), ["spread T_seq"], "{c:?}");
        assert!(c.iter().find(|c| !c.ok).unwrap().remeasure());
        assert_eq!(failed_for(&c, "encoded").len(), 1);
    }

    #[test]
    fn nothing_to_move_is_no_spread_and_no_room() {
        // One rank: T_comm 0 in every rep.
        let c = run(
            s(10.0, 9.9, 10.1),
            s(0.0, 0.0, 0.0),
            s(10.0, 9.9, 10.1),
            &[],
        );
        assert_eq!(failed(&c), ["T_seq - ideal > noise"], "{c:?}");
        assert!(!c.iter().any(Check::remeasure));
        // Even where the GEMM's noise puts T_seq past it by more than the noise allows.
        let c = run(
            s(10.0, 10.0, 10.0),
            s(0.0, 0.0, 0.0),
            s(10.5, 10.5, 10.5),
            &[],
        );
        assert_eq!(failed(&c), ["T_seq - ideal > noise"], "{c:?}");
    }

    #[test]
    fn no_room_to_overlap_is_flagged_but_not_remeasured() {
        let c = run(
            s(10.0, 10.0, 10.0),
            s(0.1, 0.1, 0.1),
            s(10.05, 10.05, 10.05),
            &[],
        );
        assert_eq!(failed(&c), ["T_seq - ideal > noise"], "{c:?}");
        assert!(!c.iter().any(Check::remeasure));
    }

    #[test]
    fn a_mode_with_its_own_gemm_is_judged_against_it_and_the_faster_transfers() {
        // Fused mode: its packed GEMM 8 ms against T_gemm's 10, its transfers 5 against T_comm's 4.
        let own = Own {
            gemm: s(8.0, 7.9, 8.1),
            comm: s(5.0, 4.9, 5.1),
        };
        fn fig<'a>(own: &'a [(&'a str, Own)], modes: &'a [(&'a str, Spread)]) -> Figures<'a> {
            Figures {
                gemm: s(10.0, 9.9, 10.1),
                comm: s(4.0, 3.9, 4.1),
                seq: s(14.0, 13.9, 14.1),
                modes,
                others: &[],
                own,
            }
        }
        let f = |fused: Spread, own: Own| {
            Checks::default().run(&fig(
                &[("fused", own)],
                &[("encoded", s(11.0, 10.9, 11.1)), ("fused", fused)],
            ))
        };
        // Its GEMM, then T_comm (faster than its own transfers): 12 ms, ideal 8. At 9 ms it is below
        // T_gemm's ideal (10) and above its own: consistent, 3 of 4 ms hidden (against T_seq it
        // would read 5 of 4).
        let c = f(s(9.0, 8.9, 9.1), own);
        assert!(failed(&c).is_empty(), "{c:?}");
        let b = fig(&[("fused", own)], &[]).bounds("fused");
        assert!(b.own && !b.own_comm && b.ideal == own.gemm, "{b:?}");
        assert_eq!((b.seq.median, b.seq.lo, b.seq.hi), (12.0, 11.8, 12.2));
        assert!((b.efficiency(9.0) - 0.75).abs() < 1e-12);
        // Its own transfers where they are the faster: 8 + 3.
        let quick = Own {
            comm: s(3.0, 2.9, 3.1),
            ..own
        };
        let b = fig(&[("fused", quick)], &[]).bounds("fused");
        assert!(b.own_comm && b.seq.median == 11.0, "{b:?}");
        assert!((b.efficiency(9.0) - 2.0 / 3.0).abs() < 1e-12);
        let e = fig(&[("fused", own)], &[]).bounds("encoded");
        assert!(!e.own && e.seq.median == 14.0 && e.ideal.median == 10.0);
        assert!((e.efficiency(11.0) - 0.75).abs() < 1e-12);
        // Below its own ideal: a consistency failure of fused mode's alone, re-measured.
        let c = f(s(7.0, 6.9, 7.1), own);
        assert_eq!(failed(&c), ["T_fused >= ideal"], "{c:?}");
        let bad = c.iter().find(|c| !c.ok).unwrap();
        assert!(
            bad.remeasure() && bad.detail.contains("7.000 < 8.000"),
            "{bad:?}"
        );
        assert!(failed_for(&c, "encoded").is_empty());
        // Its own figures' spread and room concern it alone.
        let wide = Own {
            comm: s(5.0, 3.0, 7.0),
            ..own
        };
        let c = f(s(9.0, 8.9, 9.1), wide);
        assert_eq!(failed(&c), ["spread T_fused_comm"], "{c:?}");
        assert_eq!(failed_for(&c, "fused").len(), 1);
        assert!(failed_for(&c, "encoded").is_empty());
        let none = Own {
            comm: s(0.05, 0.05, 0.05),
            ..own
        };
        let c = f(s(8.1, 8.0, 8.2), none);
        assert_eq!(failed(&c), ["fused seq - fused ideal > noise"], "{c:?}");
        assert!(!c.iter().any(Check::remeasure));
    }
}
