//! Fused mode: the device-side trigger, T3's transparency. One dispatch covers every rank's
//! staggered production (all ranks' buffers packed, one binding per role, two windows of one for
//! the output or four of two past one buffer, so the whole plan is one usage scope); the workgroup whose counter increment completes
//! a chunk, a GEMM tile's or an incoming transfer's, publishes that chunk's transfer on a device-side
//! queue, split into the link's pieces, which any workgroup claims and performs with update
//! semantics (shaders/fused/epilogue.wgsl). Nothing waits on another workgroup. The packing and the
//! variants (`--fused`) are lowered in core/src/lower/fused.rs. Its timeline is at chunk grain where the
//! progress log is kept (src/modes/progress.rs), else one bar per rank.

use super::progress::{chunk_grain, ChunkGrain, MAX_GAP};
use super::{run_recording, Mode, OwnSequential, Run, System};
use crate::config::ModeKind;
use crate::error::{Error, Result};
use crate::timeline::{pass_events, Timeline};

pub struct Fused;

impl Mode for Fused {
    fn kind(&self) -> ModeKind {
        ModeKind::Fused
    }

    fn skip_reason(&self, sys: &System) -> Option<String> {
        sys.parts[0].lowered.fused.as_ref().err().cloned()
    }

    /// Its packed GEMM (every rank's in its one dispatch, tracked only), then its transfers alone in a
    /// pass of their own: where the spares share the GEMM's SMs, the shared sequential run would
    /// credit the packing and the device-side transfers to the overlap.
    fn own_sequential(&self) -> Option<OwnSequential> {
        Some(|sys| {
            run_recording(sys, |l| {
                &l.fused
                    .as_ref()
                    .expect("fused mode lowered where it runs")
                    .sequential
            })
        })
    }

    fn run(&self, sys: &mut System) -> Result<Run> {
        if let Err(reason) = &sys.parts[0].lowered.fused {
            return Err(Error::invalid(
                "mode",
                "fused",
                format!("a mode this configuration supports ({reason})"),
            ));
        }
        let t = run_recording(sys, |l| &l.fused.as_ref().expect("checked above").recording)?;
        let (start, end) = t.first().copied().unwrap_or_default();
        let timed = sys.parts[0].exec.timer.covered();
        let (grain, events) = match progress(sys, (start, end))? {
            Some(g) if g.coverage >= 1.0 - MAX_GAP => (
                format!(
                    "chunk, by a progress clock: WGSL has no clock, so time is the pass's own work (tiles stored plus transfer pieces moved, as its first run logged it; later runs skip the log) mapped linearly onto this run's {} span; the chunks' span is {:.1}% of it",
                    if timed { "GPU-timestamped" } else { "host-clock" },
                    g.coverage * 100.0
                ),
                g.events,
            ),
            _ => {
                let all: Vec<usize> = (0..sys.plan.ops.len()).collect();
                let grain = if timed {
                    "dispatch (one fused dispatch holds every tile, trigger and transfer; WGSL has no clock to split it)"
                } else {
                    "submission (host clock)"
                };
                (
                    grain.to_string(),
                    pass_events(&sys.plan, &all, start, end),
                )
            }
        };
        Ok(Run {
            total_us: end - start,
            gemm_us: None,
            comm_us: None,
            timeline: Timeline {
                mode: self.name().into(),
                grain,
                ranks: sys.config.ranks,
                device_of: Vec::new(),
                events,
            },
            trigger_latency_us: vec![],
            op_spans: vec![(start, end); sys.plan.ops.len()],
            early_landings: None,
        })
    }
}

/// The progress log's words placed on [start, end] (µs), where the lowering keeps a log: those of
/// the first run (the check, before any timed run), read back after it, which then turns the log
/// off (the header's `log_at` to 0), so that every later run, the timed ones among them, runs without it.
fn progress(sys: &mut System, span: (f64, f64)) -> Result<Option<ChunkGrain>> {
    let ranks = sys.config.ranks;
    let part = &mut sys.parts[0];
    let Some(f) = part
        .lowered
        .fused
        .as_mut()
        .ok()
        .and_then(|f| f.log.as_mut())
    else {
        return Ok(None);
    };
    if f.first.is_none() {
        let bytes = part.exec.read_pool(
            "fused progress log",
            f.counters,
            (f.log.word * 4) as u64,
            (f.log.words() * 4) as u64,
        )?;
        f.first = Some(bytemuck::cast_slice(&bytes).to_vec());
        part.exec
            .write_pool(f.forward, f.switch_at, &0u32.to_le_bytes())?;
    }
    let words = f.first.as_deref().unwrap_or_default();
    Ok(chunk_grain(&f.log, ranks, words, span))
}
