//! The experiment's own rules: a result wrong past its own bound.

use super::*;

#[test]
fn a_result_is_wrong_past_its_own_bound_not_a_fixed_one() {
    // 2-byte outputs across devices: a bound of about 1e-3, not f32's 1e-4.
    let row = |e: f64, past: usize, trackers: bool| ModeResult {
        max_rel_error: Some(e),
        elements_past_rounding: Some(past),
        trackers_ok: Some(trackers),
        ..ModeResult::blank(ModeKind::Host, crate::shapes::Dtype::F16, 1.08e-3)
    };
    assert!(!row(5e-4, 0, true).wrong(), "within the f16 bound");
    assert!(row(2e-3, 0, true).wrong(), "past the bound");
    assert!(row(f64::NAN, 0, true).wrong(), "an unwritten element");
    assert!(row(1e-6, 1, true).wrong(), "an element past its own bound");
    assert!(row(1e-6, 0, false).wrong(), "a tracker off its threshold");
    assert!(!ModeResult::blank(ModeKind::Host, crate::shapes::Dtype::F32, 1e-4).wrong());
}
