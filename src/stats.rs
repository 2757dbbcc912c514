//! Timing statistics: the process clock every sample is stamped with, the raw samples of a timed
//! thing, spreads beside medians, and whether a series of samples has settled.

use std::sync::OnceLock;
use web_time::Instant;

use serde::Serialize;

static START: OnceLock<Instant> = OnceLock::new();

/// Seconds since the process clock was first read. The binary reads it first thing in `main`, so
/// samples line up with pipeline builds and with the driver's background work in the same process.
pub fn since_start() -> f64 {
    START.get_or_init(Instant::now).elapsed().as_secs_f64()
}

/// One run of one timed thing.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Sample {
    /// Host seconds since process start when the run was launched.
    pub at_s: f64,
    /// Its time, microseconds (GPU timestamps where the adapter has them).
    pub us: f64,
}

/// Every run of one timed thing in one measurement attempt, warm-up included.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Series {
    /// gemm_tracked, gemm_untracked, comm (the step passes of each sequential run), or a mode name.
    pub what: String,
    /// Which measurement attempt (0 first; a failed consistency check re-measures).
    pub attempt: usize,
    pub warmup: Vec<Sample>,
    pub reps: Vec<Sample>,
}

impl Series {
    pub fn new(what: &str, attempt: usize) -> Self {
        Series {
            what: what.into(),
            attempt,
            ..Default::default()
        }
    }

    pub fn push(&mut self, warmup: bool, s: Sample) {
        if warmup {
            self.warmup.push(s)
        } else {
            self.reps.push(s)
        }
    }

    pub fn warmup_us(&self) -> Vec<f64> {
        self.warmup.iter().map(|s| s.us).collect()
    }

    pub fn rep_us(&self) -> Vec<f64> {
        self.reps.iter().map(|s| s.us).collect()
    }
}

/// A median and the spread around it: p10..p90 from 10 samples on, min..max below that (where a
/// tenth of the samples is less than one).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Spread {
    pub median: f64,
    pub lo: f64,
    pub hi: f64,
    /// "p10/p90" or "min/max".
    pub kind: &'static str,
    pub n: usize,
}

/// Samples from which the spread is p10..p90 instead of min..max.
pub const PERCENTILE_FROM: usize = 10;

impl Spread {
    /// None for no samples or any NaN among them.
    pub fn of(samples: &[f64]) -> Option<Spread> {
        if samples.is_empty() || samples.iter().any(|x| x.is_nan()) {
            return None;
        }
        let v = sorted(samples);
        let n = v.len();
        let median = median_of_sorted(&v);
        let (lo, hi, kind) = if n >= PERCENTILE_FROM {
            (quantile(&v, 0.1), quantile(&v, 0.9), "p10/p90")
        } else {
            (v[0], v[n - 1], "min/max")
        };
        Some(Spread {
            median,
            lo,
            hi,
            kind,
            n,
        })
    }

    /// The same spread in other units (µs -> ms: 1e-3).
    pub fn scaled(self, f: f64) -> Spread {
        Spread {
            median: self.median * f,
            lo: self.lo * f,
            hi: self.hi * f,
            ..self
        }
    }

    /// Half the width of the spread: this figure's noise.
    /// Two figures run one after the other: medians and ends added (a wider spread than the sum's
    /// own would have: the conservative side for the checks).
    pub fn then(&self, next: &Spread) -> Spread {
        Spread {
            median: self.median + next.median,
            lo: self.lo + next.lo,
            hi: self.hi + next.hi,
            kind: self.kind,
            n: self.n.min(next.n),
        }
    }

    pub fn noise(&self) -> f64 {
        (self.hi - self.lo) / 2.0
    }

    /// Width of the spread relative to the median.
    pub fn relative(&self) -> f64 {
        (self.hi - self.lo) / self.median
    }
}

fn sorted(v: &[f64]) -> Vec<f64> {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    v
}

fn median_of_sorted(v: &[f64]) -> f64 {
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// The median of `v` (NaN when empty).
pub fn median(v: &[f64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    median_of_sorted(&sorted(v))
}

/// The `q` quantile of `v` (0..=1), interpolated between the closest ranks (NaN when empty).
pub fn percentile(v: &[f64], q: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    quantile(&sorted(v), q)
}

/// Linear interpolation between the closest ranks of sorted `v`.
fn quantile(v: &[f64], q: f64) -> f64 {
    let x = (v.len() - 1) as f64 * q;
    let (i, f) = (x.floor() as usize, x.fract());
    if i + 1 < v.len() {
        v[i] + (v[i + 1] - v[i]) * f
    } else {
        v[i]
    }
}

/// When a series of warm-up samples has settled: its last `window` samples all lie within
/// `tolerance` (relative) of their median. A pipeline still being optimised, clocks still ramping or
/// caches still filling move the level; a settled series has stopped moving, apart from noise
/// inside the tolerance.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Settle {
    pub window: usize,
    pub tolerance: f64,
}

impl Default for Settle {
    fn default() -> Self {
        Settle {
            window: 5,
            tolerance: 0.1,
        }
    }
}

impl Settle {
    /// Index of the run from which every prefix of `us` is settled (the run that completed the
    /// window the warm-up ended on), or None where the whole series is not settled.
    pub fn settled_since(&self, us: &[f64]) -> Option<usize> {
        let mut since = None;
        for end in (1..=us.len()).rev() {
            if !self.settled(&us[..end]) {
                break;
            }
            since = Some(end - 1);
        }
        since
    }

    pub fn settled(&self, us: &[f64]) -> bool {
        let k = self.window.max(1);
        if us.len() < k {
            return false;
        }
        let last = &us[us.len() - k..];
        match Spread::of(last) {
            Some(s) if s.median > 0.0 => last
                .iter()
                .all(|x| (x - s.median).abs() <= self.tolerance * s.median),
            // All zero (nothing to time) is settled; NaN never is.
            Some(s) => s.median == 0.0 && last.iter().all(|&x| x == 0.0),
            None => false,
        }
    }
}

/// How the warm-up of one timed thing went.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Warmup {
    pub what: String,
    /// Warm-up runs of this thing.
    pub runs: usize,
    /// Seconds from the start of the warm-up to the run at which it settled (or to the end of the
    /// warm-up, where it never did).
    pub seconds: f64,
    pub settled: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_is_min_max_below_ten_samples_and_p10_p90_from_ten() {
        let s = Spread::of(&[3.0, 1.0, 2.0]).unwrap();
        assert_eq!(
            (s.median, s.lo, s.hi, s.kind, s.n),
            (2.0, 1.0, 3.0, "min/max", 3)
        );
        let v: Vec<f64> = (0..=10).map(f64::from).collect();
        let s = Spread::of(&v).unwrap();
        assert_eq!((s.median, s.lo, s.hi, s.kind), (5.0, 1.0, 9.0, "p10/p90"));
        assert_eq!(Spread::of(&[1.0, 4.0]).unwrap().median, 2.5);
        assert_eq!(Spread::of(&[1.0, 4.0]).unwrap().noise(), 1.5);
        assert!(Spread::of(&[]).is_none());
        assert!(Spread::of(&[1.0, f64::NAN]).is_none());
    }

    #[test]
    fn settles_only_when_the_last_window_is_within_tolerance() {
        let s = Settle {
            window: 3,
            tolerance: 0.05,
        };
        assert!(!s.settled(&[10.0, 10.0]), "fewer samples than the window");
        assert!(s.settled(&[10.0, 10.2, 9.9]));
        // A step down (a pipeline swapped for a faster build) unsettles until a window passes.
        assert!(!s.settled(&[30.0, 30.0, 30.0, 10.0]));
        assert!(!s.settled(&[30.0, 30.0, 30.0, 10.0, 10.0]));
        assert!(s.settled(&[30.0, 30.0, 30.0, 10.0, 10.0, 10.0]));
        // Noise beyond the tolerance never settles.
        assert!(!s.settled(&[10.0, 11.0, 10.0, 11.0, 10.0, 11.0]));
        assert!(s.settled(&[0.0, 0.0, 0.0]));
        assert_eq!(
            s.settled_since(&[30.0, 30.0, 30.0, 10.0, 10.0, 10.0, 10.1]),
            Some(5)
        );
        assert_eq!(s.settled_since(&[10.0, 10.0, 10.0, 10.0]), Some(2));
        assert_eq!(s.settled_since(&[10.0, 10.0, 10.0, 30.0]), None);
        assert!(!s.settled(&[f64::NAN, 1.0, 1.0]));
        assert!(!s.settled(&[1.0, f64::NAN, 1.0]));
    }
}
