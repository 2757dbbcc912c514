//! The trigger loop's timeline: each device's passes on one axis by the offset its submissions bound
//! against the host clock, with the host's triggers, waits and copies.

use super::super::{Run, System};
use crate::error::Result;
use crate::plan::Kind;
use crate::timeline::{Event, EventKind, Lane};

/// One pass of the run: its device and plan ops, and the host µs around it.
pub(super) struct Sub {
    pub device: usize,
    pub ops: Vec<usize>,
    /// Host µs just before the queue took it, and when the loop saw it complete.
    pub handed: f64,
    pub seen_done: f64,
}

/// A step the loop sent: when (host µs), the dependencies whose counters it saw complete, and the ops
/// it otherwise waited for (queued before it, or its link slot's previous user).
pub(super) struct Trigger {
    pub op: usize,
    pub at: f64,
    pub tracked: Vec<usize>,
    pub held: Vec<usize>,
}

/// The offset to subtract from host µs to get GPU µs, and how wide the window it was picked from is
/// (negative: the bounds cross, the clocks do not agree). Each submission bounds it from both
/// sides: its pass began after the host handed it over (`subs[k]`, host) and ended before the host
/// saw it complete (`ends[k]`, host); `t[k]` is that pass on the GPU clock. The midpoint is taken.
pub fn align(subs: &[f64], ends: &[f64], t: &[(f64, f64)]) -> (f64, f64) {
    let lo = subs
        .iter()
        .zip(t)
        .map(|(s, p)| s - p.0)
        .fold(f64::NEG_INFINITY, f64::max);
    let hi = ends
        .iter()
        .zip(t)
        .map(|(e, p)| e - p.1)
        .fold(f64::INFINITY, f64::min);
    if !lo.is_finite() || !hi.is_finite() {
        return (0.0, 0.0);
    }
    ((lo + hi) / 2.0, hi - lo)
}

/// The run's timeline on one axis (device 0's GPU clock where there are timestamps, else the host's):
/// each device's passes moved by the offset its submissions bound against the host clock ([`align`]),
/// host triggers, waits and copies with them.
pub(super) fn timeline(
    sys: &System,
    mode: &str,
    subs: &[Sub],
    pass_of: &[usize],
    triggers: &[Trigger],
    waits: &[(usize, f64, f64)],
    copies: &[(usize, f64, f64, f64)],
) -> Result<Run> {
    let Axis {
        spans: t,
        base,
        grain,
    } = axis(sys, subs)?;
    // A step between devices shows twice: its send half on the sender's steps lane (drawn here), its
    // receive half as the step itself on the destination's.
    let sending = |s: &Sub, i: usize| sys.host_links.of_op[i].is_some_and(|c| c.from == s.device);
    let passes: Vec<Vec<usize>> = subs
        .iter()
        .map(|s| s.ops.iter().copied().filter(|&i| !sending(s, i)).collect())
        .collect();
    let mut run = Run::from_passes(sys, mode, grain, &passes, &t);
    for (s, span) in subs.iter().zip(&t) {
        for &i in s.ops.iter().filter(|&&i| sending(s, i)) {
            let op = &sys.plan.ops[i];
            let (Kind::Copy { src } | Kind::Reduce { src }) = op.kind else {
                continue;
            };
            run.timeline.events.push(Event {
                lane: Lane::Step { rank: src.rank },
                kind: EventKind::Copy,
                name: format!("r{} send c{} to r{}", src.rank, op.dst.chunk, op.dst.rank),
                rank: src.rank,
                chunk: Some(op.dst.chunk),
                stage: Some(op.stage),
                start_us: span.0,
                end_us: span.1,
            });
        }
    }
    let first = t.iter().map(|s| s.0).fold(f64::INFINITY, f64::min);
    let last = t.iter().map(|s| s.1).fold(f64::NEG_INFINITY, f64::max);
    run.total_us = if t.is_empty() { 0.0 } else { last - first };
    let gemm_end = subs
        .iter()
        .zip(&t)
        .filter(|(s, _)| s.ops.iter().any(|&i| sys.plan.ops[i].kind == Kind::Gemm))
        .map(|(_, s)| s.1)
        .fold(first, f64::max);
    run.gemm_us = Some(gemm_end - first);
    run.comm_us = Some(last - gemm_end);
    trigger_events(&mut run, sys, subs, pass_of, triggers, &t, base);
    host_events(&mut run, sys, waits, copies, base);
    Ok(run)
}

/// The run's axis: each pass's span on it, its offset from the host clock (host = axis + base) and
/// the timeline's grain.
struct Axis {
    spans: Vec<(f64, f64)>,
    base: f64,
    grain: String,
}

/// Each pass's span on the run's axis, the axis's offset from the host clock (host = axis + base) and
/// the timeline's grain: each device's passes aligned by the offset its submissions bound, or, with
/// no timestamps, spanning from the device's previous completion to its own on the host clock.
fn axis(sys: &System, subs: &[Sub]) -> Result<Axis> {
    let devices = sys.parts.len();
    // Each pass's span on the axis, and each device's host offset and alignment window.
    let mut t = vec![(0.0, 0.0); subs.len()];
    let mut offsets = Vec::with_capacity(devices);
    let mut notes = Vec::new();
    let mut gpu_clock = true;
    for (d, part) in sys.parts.iter().enumerate() {
        let mine: Vec<usize> = (0..subs.len()).filter(|&k| subs[k].device == d).collect();
        let spans = part.exec.timer.spans_us(part.gpu)?;
        if spans.len() == mine.len() && part.exec.timer.covered() {
            let handed: Vec<f64> = mine.iter().map(|&k| subs[k].handed).collect();
            let seen: Vec<f64> = mine.iter().map(|&k| subs[k].seen_done).collect();
            let (offset, width) = align(&handed, &seen, &spans);
            notes.push(if width >= 0.0 {
                format!(
                    "device {d} host clock aligned within ±{:.0} µs",
                    width / 2.0
                )
            } else {
                format!(
                    "device {d} host clock NOT aligned: bounds cross by {:.0} µs",
                    -width
                )
            });
            offsets.push(offset);
            for (&k, s) in mine.iter().zip(&spans) {
                t[k] = (s.0 + offset, s.1 + offset);
            }
        } else {
            // No timestamps: a pass spans from the device's previous completion to its own.
            gpu_clock = false;
            offsets.push(0.0);
            let mut prev = 0.0;
            for &k in &mine {
                t[k] = (prev, subs[k].seen_done);
                prev = subs[k].seen_done;
            }
        }
    }
    // The axis: device 0's GPU clock (host = axis + base), else the host clock.
    let base = if gpu_clock { offsets[0] } else { 0.0 };
    for s in &mut t {
        *s = (s.0 - base, s.1 - base);
    }
    let grain = if gpu_clock {
        format!("{}; {}", sys.grain(), notes.join(", "))
    } else {
        "submission (host clock)".to_string()
    };
    Ok(Axis {
        spans: t,
        base,
        grain,
    })
}

/// The host's triggers on the axis, and their latencies.
fn trigger_events(
    run: &mut Run,
    sys: &System,
    subs: &[Sub],
    pass_of: &[usize],
    triggers: &[Trigger],
    t: &[(f64, f64)],
    base: f64,
) {
    // A latency is good to the alignment's half-width either way; values below zero are clamped.
    // A trigger is a step its counters released: the last pass they proved complete ended after
    // everything else it waited for was handed to a queue. Others followed queue order or a link
    // slot: no trigger latency.
    for tr in triggers {
        let (i, at) = (tr.op, tr.at - base);
        let op = &sys.plan.ops[i];
        let ready_at = tr
            .tracked
            .iter()
            .map(|&d| t[pass_of[d]].1)
            .fold(f64::NEG_INFINITY, f64::max);
        let held_until = tr
            .held
            .iter()
            .map(|&d| subs[pass_of[d]].handed - base)
            .fold(f64::NEG_INFINITY, f64::max);
        if tr.tracked.is_empty() || held_until > ready_at {
            continue;
        }
        run.trigger_latency_us.push((at - ready_at).max(0.0));
        let src = match op.kind {
            Kind::Copy { src } | Kind::Reduce { src } => src.rank,
            Kind::Gemm => op.dst.rank,
        };
        run.timeline.events.push(Event {
            lane: Lane::Host,
            kind: EventKind::Trigger,
            name: format!("trigger r{src}->r{} c{}", op.dst.rank, op.dst.chunk),
            rank: op.dst.rank,
            chunk: Some(op.dst.chunk),
            stage: Some(op.stage),
            start_us: ready_at,
            end_us: at.max(ready_at),
        });
    }
}

/// The host's waits and its copies between devices (each a map wait, then the copy) on the axis.
fn host_events(
    run: &mut Run,
    sys: &System,
    waits: &[(usize, f64, f64)],
    copies: &[(usize, f64, f64, f64)],
    base: f64,
) {
    for (k, &(d, from, to)) in waits.iter().enumerate() {
        run.timeline.events.push(Event {
            lane: Lane::HostWait,
            kind: EventKind::Wait,
            name: format!("wait device {d} submission {k}"),
            rank: 0,
            chunk: None,
            stage: None,
            start_us: from - base,
            end_us: to - base,
        });
    }
    for &(i, started, copy_from, done) in copies {
        let op = &sys.plan.ops[i];
        let c = sys.host_links.of_op[i].expect("copies cross");
        let src = match op.kind {
            Kind::Copy { src } | Kind::Reduce { src } => src.rank,
            Kind::Gemm => op.dst.rank,
        };
        let name = format!(
            "d{}->d{} r{src}->r{} c{}",
            c.from, c.to, op.dst.rank, op.dst.chunk
        );
        for (kind, from, to, what) in [
            (EventKind::Wait, started, copy_from, "map"),
            (EventKind::Copy, copy_from, done, "copy"),
        ] {
            run.timeline.events.push(Event {
                lane: Lane::HostLink {
                    from: c.from,
                    to: c.to,
                },
                kind,
                name: format!("{what} {name}"),
                rank: op.dst.rank,
                chunk: Some(op.dst.chunk),
                stage: Some(op.stage),
                start_us: from - base,
                end_us: to - base,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clock_offset_lies_between_what_submissions_bound() {
        // GPU passes at 0..10 and 10..20; host handed them over at 1 and 2, saw them done at 14 and 25
        // (so host = GPU + [1 .. 4]): the midpoint 2.5, window 3.
        let (offset, width) = align(&[1.0, 2.0], &[14.0, 25.0], &[(0.0, 10.0), (10.0, 20.0)]);
        assert_eq!((offset, width), (2.5, 3.0));
        // A host that saw a pass done before it began on the GPU clock: the bounds cross.
        let (_, width) = align(&[5.0], &[6.0], &[(0.0, 10.0)]);
        assert!(width < 0.0);
        assert_eq!(align(&[], &[], &[]), (0.0, 0.0));
    }
}
