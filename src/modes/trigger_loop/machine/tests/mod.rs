//! The state machine's tests: driven by a simulated GPU in every completion order a seeded
//! generator picks (`simulated`), and step by step through scenarios whose every decision is named
//! (`scenarios`).

use super::*;
use crate::plan::ReduceVia;
use crate::schedule::{Collective, Schedule};
use crate::shapes::Chunking;

mod scenarios;
mod simulated;

/// The counter value a loc holds once its GEMM alone completed.
fn gemm_mark(plan: &Plan, l: Loc) -> u32 {
    plan.ops
        .iter()
        .filter(|o| o.dst == l && o.kind == Kind::Gemm)
        .map(|o| o.mark)
        .max()
        .unwrap_or(0)
}

/// Every tracker's value once the whole plan ran.
fn final_marks(plan: &Plan) -> HashMap<Loc, u32> {
    let mut marks = HashMap::new();
    for o in &plan.ops {
        let v = marks.entry(o.dst).or_insert(0);
        *v = o.mark.max(*v);
    }
    marks
}

/// What a submission's readback holds once it completed with its GEMM work alone: each tracker it
/// reads at its GEMM's mark.
fn gemm_reads(plan: &Plan, s: &Submission) -> Vec<(Loc, u32)> {
    s.reads.iter().map(|&l| (l, gemm_mark(plan, l))).collect()
}
