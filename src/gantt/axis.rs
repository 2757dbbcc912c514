//! The Gantt chart's time axis: one scale for all panels, round ticks, labels that tell ticks apart.

use super::{MARGIN_LEFT, PLOT_WIDTH};

/// Aim for this many tick intervals; the nice step chosen lands within roughly 5 to 11.
const TARGET_TICK_INTERVALS: f64 = 7.0;

/// The time scale shared by all panels: 0 to a round number at or just past the longest span.
pub(super) struct Axis {
    pub max_us: f64,
    pub step_us: f64,
    pub ticks: Vec<f64>,
}

impl Axis {
    pub fn new(longest_us: f64) -> Self {
        // An empty or instantaneous run still needs a finite, non-zero scale to divide by.
        let longest = if longest_us.is_finite() && longest_us > 0.0 {
            longest_us
        } else {
            1.0
        };
        let step = nice_step(longest);
        let intervals = (longest / step - 1e-9).ceil().max(1.0);
        let ticks = (0..=intervals as usize).map(|i| i as f64 * step).collect();
        Axis {
            max_us: intervals * step,
            step_us: step,
            ticks,
        }
    }

    pub fn x(&self, us: f64) -> f64 {
        MARGIN_LEFT + us / self.max_us * PLOT_WIDTH
    }

    /// Enough decimals to tell adjacent ticks apart, and no more.
    pub fn label(&self, us: f64) -> String {
        let decimals = (-self.step_us.log10()).ceil().clamp(0.0, 9.0) as usize;
        format!("{us:.decimals$}")
    }
}

/// The 1, 2 or 5 × 10^k step giving the tick count closest (by ratio) to the target.
fn nice_step(range: f64) -> f64 {
    let exponent = range.log10().floor() as i32;
    let mut best = range;
    let mut best_error = f64::INFINITY;
    for k in exponent - 2..=exponent + 1 {
        for mantissa in [1.0, 2.0, 5.0] {
            let step = mantissa * 10f64.powi(k);
            let error = (range / step / TARGET_TICK_INTERVALS).ln().abs();
            if error < best_error {
                best = step;
                best_error = error;
            }
        }
    }
    best
}

/// Microseconds for titles and tooltips: sub-microsecond detail matters for triggers,
/// beyond that it is noise.
pub(super) fn format_us(us: f64) -> String {
    if us.abs() >= 100.0 {
        format!("{us:.1}")
    } else {
        format!("{us:.3}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_and_cover_the_span() {
        for span in [
            1e-3, 0.7, 1.0, 3.0, 9.99, 10.0, 47.0, 123.4, 999.0, 1234.5, 8e4, 3.3e6,
        ] {
            let axis = Axis::new(span);
            let n = axis.ticks.len();
            assert!((5..=12).contains(&n), "{span}: {n} ticks");
            assert_eq!(axis.ticks[0], 0.0);
            assert!(axis.max_us >= span && *axis.ticks.last().unwrap() == axis.max_us);
            let mantissa = axis.step_us / 10f64.powf(axis.step_us.log10().floor());
            assert!(
                [1.0, 2.0, 5.0].iter().any(|m| (mantissa - m).abs() < 1e-9),
                "{span}: step {}",
                axis.step_us
            );
            let labels: Vec<String> = axis.ticks.iter().map(|&t| axis.label(t)).collect();
            let mut unique = labels.clone();
            unique.dedup();
            assert_eq!(unique, labels, "{span}: labels collide");
        }
        for degenerate in [0.0, -5.0, f64::NAN, f64::INFINITY] {
            let axis = Axis::new(degenerate);
            assert!(axis.max_us.is_finite() && axis.max_us > 0.0);
            assert!(axis.x(axis.max_us).is_finite());
        }
    }
}
