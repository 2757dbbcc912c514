//! What configures one system: shape, ranks, chunks, collective, reduce realisation, link,
//! operand type, arbitration, the step lead and fused mode's knobs.

pub mod fused;
pub mod host;
pub mod mode;

pub use mode::ModeKind;

use crate::error::{Error, Result};
use crate::kernels::step::Link;
use crate::plan::ReduceVia;
use crate::schedule::{Collective, Order};
use crate::shapes::{Dtype, Shape};

/// What configures one system.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Config {
    pub shape: Shape,
    pub ranks: usize,
    pub chunks: usize,
    pub collective: Collective,
    /// The order each rank's GEMM makes its chunks in (the ring's reduce-scatter and all-reduce).
    pub order: Order,
    pub via: ReduceVia,
    pub link: Link,
    /// Element type of the GEMM operands.
    pub dtype: Dtype,
    /// Element type of the GEMM outputs and of everything that moves them (steps, links, readback):
    /// f32 or the operands' type. 2-byte outputs are packed two to a word, their rows padded to an
    /// even length (`Padding::ldc`); the GEMM rounds each once, a reduce adds in f32 and rounds once.
    pub out_dtype: Dtype,
    /// Arbitration (software's stand-in for T3's memory-controller arbitration): while a pass holds
    /// GEMM work, the steps in it share at most this many workgroups, so communication yields to
    /// compute; passes without GEMM work, and sequential mode, keep the link budget. Across devices a
    /// pass's send halves share it on their own, and its zero-copy landings theirs, in any pass that
    /// holds GEMM work, whatever their level (None there: `HOST_SEND_BESIDE_GEMM_WORKGROUPS` and
    /// `HOST_LAND_BESIDE_GEMM_WORKGROUPS` where the link is unthrottled): the other steps beside
    /// them share it too, so a pass's steps may take up to three times it.
    pub arbitrate: Option<u32>,
    /// A persistent GEMM grid: while a pass holds steps, its GEMM work runs on at most this many
    /// workgroups in all (split over its GEMM ops, at least one each; where the driver caps loop
    /// iterations, enough to stay inside the cap), each looping over tiles, so the GEMM stays on that
    /// many SMs and the steps, dispatched after it, get the rest. For GEMM workgroups that fill an SM
    /// by themselves (the cooperative-matrix kernel), the steps otherwise run only where GEMM work is
    /// not. The step lead's `auto` is then none (the grid is resident from the start). Fused mode
    /// keeps a workgroup per tile (its spares polling beside a grid slow it).
    pub gemm_grid: Option<u32>,
    /// Where a pass's steps go among the GEMM workgroups sharing it (encoded and host modes).
    pub step_lead: StepLead,
    /// Fused mode's knobs (each default: the device's defaults, resolved in lowering).
    pub fused: fused::FusedOptions,
    /// The host trigger loop's knobs (each default: its default).
    pub host: host::HostOptions,
}

impl Config {
    /// `shape` on `ranks` ranks with the command line's defaults for everything else (`t3 run
    /// --shape MxNxK --ranks R` on one device, no tune table): one chunk, a reduce-scatter, reduces
    /// by update, an unthrottled link, f32 operands and outputs, no arbitration, no GEMM grid, the
    /// step lead `auto`, and fused mode's and the host loop's knobs at their defaults.
    pub fn new(shape: Shape, ranks: usize) -> Config {
        Config {
            shape,
            ranks,
            chunks: 1,
            collective: Collective::ReduceScatter,
            order: Order::Stage,
            via: ReduceVia::Update,
            link: Link::Unthrottled,
            dtype: Dtype::F32,
            out_dtype: Dtype::F32,
            arbitrate: None,
            gemm_grid: None,
            step_lead: StepLead::Auto,
            fused: fused::FusedOptions::default(),
            host: host::HostOptions::default(),
        }
    }

    /// Floating-point operations of all ranks' GEMMs: each rank a full partial sum, or (row-split
    /// GEMM before an all-gather) one shard of a single GEMM each.
    pub fn total_flops(&self) -> f64 {
        if self.collective.row_split() {
            self.shape.flops()
        } else {
            self.shape.flops() * self.ranks as f64
        }
    }
}

/// Where the steps of a pass that also holds GEMM work are dispatched among its GEMM ops. The GPU
/// starts workgroups in dispatch order, so steps dispatched after all of the pass's GEMM work start
/// only when its last wave leaves slots free, and a step that outlasts that wave stretches the pass
/// (the next GEMM stage waits for it). Dispatching the pass's last GEMM ops after the steps starts
/// the steps earlier; those ops then run in the slots the steps leave, beside them. Too many and
/// they wait for the steps instead. Ops move whole: the two halves of a split op would write one
/// buffer, and wgpu puts a barrier between such dispatches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StepLead {
    /// Where the pass holds at most one step per rank (one chunk per rank's shard), at least as
    /// many GEMM workgroups after the steps as the steps have: the steps take the places of the
    /// GEMM's last workgroups in the dispatch order. Where it holds more, the steps fill most
    /// slots by themselves and GEMM work after them would wait: none.
    Auto,
    /// At least this many GEMM workgroups after the steps, in whole ops (0: all GEMM work before).
    Workgroups(u32),
}

impl StepLead {
    /// "auto" or a workgroup count.
    pub fn parse(s: &str) -> Result<Self> {
        match s.trim() {
            "auto" => Ok(StepLead::Auto),
            v => v.parse().map(StepLead::Workgroups).map_err(|_| {
                Error::invalid(
                    "step lead",
                    s,
                    "auto, or a count of GEMM workgroups (0 = steps after all GEMM work)",
                )
            }),
        }
    }

    pub fn describe(self) -> String {
        match self {
            StepLead::Auto => "auto".into(),
            StepLead::Workgroups(w) => w.to_string(),
        }
    }

    /// GEMM workgroups to dispatch after `steps` steps of `ranks` ranks that use `step_wg`
    /// workgroups.
    pub fn workgroups(self, steps: usize, ranks: usize, step_wg: u32) -> u32 {
        match self {
            StepLead::Auto if steps <= ranks => step_wg,
            StepLead::Auto => 0,
            StepLead::Workgroups(w) => w,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_lines_defaults_validate() {
        for ranks in 1..=8 {
            let c = Config::new(Shape::new(64, 32, 16).unwrap(), ranks);
            c.validate().unwrap();
            for mode in ModeKind::ALL {
                c.check_mode(mode).unwrap();
            }
        }
    }
}
