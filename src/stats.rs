//! Timing statistics: the process clock every sample is stamped with, the raw samples of a timed
//! thing, spreads beside medians, and whether a series of samples has settled.

use std::sync::OnceLock;
use std::time::Instant;

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

    pub fn rep_us(&self) -> Vec<f64> {
        self.reps.iter().map(|s| s.us).collect()
    }
}
