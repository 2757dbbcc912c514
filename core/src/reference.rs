//! CPU references in f64 and the error measures every check uses.

/// C = A·B in f64 (row-major; A m x k, B k x n).
pub fn gemm(a: &[f32], b: &[f32], m: usize, n: usize, k: usize) -> Vec<f64> {
    let mut c = vec![0f64; m * n];
    for i in 0..m {
        let row = &mut c[i * n..(i + 1) * n];
        for p in 0..k {
            let av = a[i * k + p] as f64;
            let brow = &b[p * n..(p + 1) * n];
            for (cv, &bv) in row.iter_mut().zip(brow) {
                *cv += av * bv as f64;
            }
        }
    }
    c
}

/// ‖got − want‖_F / ‖want‖_F; any NaN or infinity in `got` gives infinity, so unwritten (poisoned)
/// elements always fail.
/// `||got - want|| / ||scale||` (Frobenius): the error relative to the magnitude of what was summed
/// (`scale` = the sums of |products|), so that a sum that cancels to near zero does not read as a
/// large error while a wrong or missing term still does. Infinity for a non-finite `got`.
pub fn rel_to_scale(got: &[f32], want: &[f64], scale: &[f64]) -> f64 {
    rel_to_scale_past(got, want, scale, 0.0)
}

/// [`rel_to_scale`] of each element's error past `floor` (an absolute error the output type allows
/// whatever the value: [`Rounding::floor`]), so that a value too small for the type's relative
/// precision does not read as a large error where its scale is as small.
pub fn rel_to_scale_past(got: &[f32], want: &[f64], scale: &[f64], floor: f64) -> f64 {
    assert_eq!(got.len(), want.len(), "length mismatch");
    assert_eq!(scale.len(), want.len(), "length mismatch");
    let mut num = 0f64;
    let mut den = 0f64;
    for ((&g, &w), &s) in got.iter().zip(want).zip(scale) {
        if !g.is_finite() {
            return f64::INFINITY;
        }
        num += ((g as f64 - w).abs() - floor).max(0.0).powi(2);
        den += s * s;
    }
    if den == 0.0 {
        return if num == 0.0 { 0.0 } else { f64::INFINITY };
    }
    (num / den).sqrt()
}

/// The bound every GEMM check allows on [`rel_to_scale`] with f32 outputs: the f32 accumulation's
/// error, whatever the operands (f16 and bf16 ones are rounded before the reference sees them).
pub const GEMM_BOUND: f64 = 1e-4;

/// How far outputs stored as `out` may lie from the f64 reference: the GEMM's bound plus one
/// rounding per time a value is rounded along the schedule. A 2-byte output is rounded once when its
/// GEMM stores it and once by every reduce that adds into it (widened to f32, added, rounded once);
/// a copy moves the bits. Each rounding is at most `u` (the type's unit roundoff: round to nearest)
/// of the value rounded, and every value along the way (a rank's output, a partial sum) is at most the
/// element's scale (the sum of |products|), so per element
/// `|got - want| <= (GEMM_BOUND + reduces u) scale + u |want|` to first order (the last rounding is of
/// the finished value), and over a row `rel_to_scale <= GEMM_BOUND + (reduces + 1) u`. Below the
/// type's smallest normal a rounding is off by up to an absolute
/// [`crate::shapes::Dtype::underflow_error`] instead ([`Self::floor`]: one per rounding), which the
/// checks allow beside the relative bound (a device that flushes such values to zero shows as
/// elements past it).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Rounding {
    pub out: crate::shapes::Dtype,
    /// Most reduces into one chunk along the schedule.
    pub reduces: usize,
}

impl Rounding {
    /// Unit roundoff of the stored outputs (0 for f32: its roundings are the GEMM bound's).
    fn u(&self) -> f64 {
        match self.out {
            crate::shapes::Dtype::F32 => 0.0,
            half => half.unit_roundoff(),
        }
    }

    /// The bound on [`rel_to_scale_past`] of [`Self::floor`].
    pub fn tolerance(&self) -> f64 {
        GEMM_BOUND + (self.reduces + 1) as f64 * self.u()
    }

    /// The absolute error the roundings may add below the type's smallest normal, one
    /// [`crate::shapes::Dtype::underflow_error`] each (0 for f32: its roundings are the GEMM
    /// bound's).
    pub fn floor(&self) -> f64 {
        match self.out {
            crate::shapes::Dtype::F32 => 0.0,
            half => (self.reduces + 1) as f64 * half.underflow_error(),
        }
    }

    /// Elements of `got` past their own bound (above): a wrong rounding (truncation, a step that
    /// reads one type as another) shows here long before it moves the row's norm. A non-finite
    /// element is past any bound.
    pub fn excess(&self, got: &[f32], want: &[f64], scale: &[f64]) -> usize {
        let u = self.u();
        // Second-order terms (a rounding of a value already off by earlier ones): u^2 per rounding.
        let slack = 1.0 + (self.reduces + 2) as f64 * u;
        let floor = self.floor();
        got.iter()
            .zip(want)
            .zip(scale)
            .filter(|((&g, &w), &s)| {
                let bound =
                    ((GEMM_BOUND + self.reduces as f64 * u) * s + u * w.abs()) * slack + floor;
                !g.is_finite() || (g as f64 - w).abs() > bound
            })
            .count()
    }
}

pub fn rel_frobenius(got: &[f32], want: &[f64]) -> f64 {
    assert_eq!(got.len(), want.len(), "length mismatch");
    let mut num = 0f64;
    let mut den = 0f64;
    for (&g, &w) in got.iter().zip(want) {
        if !g.is_finite() {
            return f64::INFINITY;
        }
        num += (g as f64 - w).powi(2);
        den += w * w;
    }
    if den == 0.0 {
        return if num == 0.0 { 0.0 } else { f64::INFINITY };
    }
    (num / den).sqrt()
}

/// A small deterministic generator (SplitMix64) so runs are reproducible from `--seed` with no extra crate.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed ^ 0x9E37_79B9_7F4A_7C15)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [-1, 1), never exactly representable zero patterns across a whole buffer.
    pub fn next_f32(&mut self) -> f32 {
        ((self.next_u64() >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
    }

    pub fn fill(&mut self, len: usize) -> Vec<f32> {
        (0..len).map(|_| self.next_f32()).collect()
    }

    /// Moves past `n` values at once: the next value is the one `n` calls from now would give.
    pub fn skip(&mut self, n: u64) {
        self.0 = self.0.wrapping_add(n.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

/// A fresh seed from the clock, for tests that must see new inputs each run (printed so a failure replays).
pub fn fresh_seed() -> u64 {
    web_time::SystemTime::now()
        .duration_since(web_time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_is_scaled_by_what_was_summed() {
        // (1.0 + 1e-6) - 1.0: the exact sum is 1e-6; f32 keeps it only to ~5% (1e-6 is a few
        // ulps of 1.0), a tiny error against the terms (magnitude 2), a large one against the sum.
        let got = [std::hint::black_box(1.0f32 + 1e-6f32) - 1.0f32];
        let (want, scale) = ([1e-6f64], [2.000001f64]);
        assert!(rel_frobenius(&got, &want) > 1e-3);
        assert!(rel_to_scale(&got, &want, &scale) < 1e-6);
        // A term left out is a large error either way.
        assert!(rel_to_scale(&[1.0], &[2.0], &[2.0]) >= 0.5);
        assert_eq!(rel_to_scale(&[f32::NAN], &[1.0], &[1.0]), f64::INFINITY);
    }

    #[test]
    fn skipping_n_values_lands_where_n_calls_would() {
        for n in [0u64, 1, 7, 1 << 20] {
            let mut walked = Rng::new(42);
            for _ in 0..n {
                walked.next_u64();
            }
            let mut skipped = Rng::new(42);
            skipped.skip(n);
            assert_eq!(skipped.fill(4), walked.fill(4), "n = {n}");
        }
    }

    #[test]
    fn gemm_matches_hand_computed() {
        let a = [1.0, 2.0, 3.0, 4.0];
        let b = [5.0, 6.0, 7.0, 8.0];
        assert_eq!(gemm(&a, &b, 2, 2, 2), vec![19.0, 22.0, 43.0, 50.0]);
    }

    #[test]
    fn nan_fails_error() {
        assert!(rel_frobenius(&[1.0, f32::NAN], &[1.0, 1.0]).is_infinite());
        assert!(rel_frobenius(&[1.0, 1.0], &[1.0, 1.0]) == 0.0);
    }
}
