//! Host mode: the pipelined host-side trigger loop. GEMM work goes out stage by stage with up to
//! [`IN_FLIGHT`] submissions queued (T3_HOST_IN_FLIGHT), so the GPU does not wait for a decision:
//! each submission ends with a copy of the tracker counters that can still make a step ready
//! ([`wanted`]) into a pooled readback buffer that maps when it completes; while the next submission
//! runs the host decides which steps' inputs reached their marks ([`ready`]: T3's threshold, checked
//! by the CPU) and sends them with the next GEMM stage. wgpu cannot map a buffer while GPU work uses
//! it, so the host sees counters at submission grain; the loop records each trigger's latency and
//! its own waits, on the GPU clock by the offset the submissions bound ([`align`]).

use std::collections::{HashMap, VecDeque};
use web_time::Instant;

use super::{Mode, Run, System};
use crate::error::{Error, Result};
use crate::executor::Launched;
use crate::gemm::StoreMode;
use crate::lower::{Command, Lowered};
use crate::plan::{Kind, Loc, Plan};
use crate::settings;
use crate::timeline::{Event, EventKind, Lane};

/// Submissions the loop keeps queued on a device (T3_HOST_IN_FLIGHT overrides): one running while
/// the host decides the next from the counters of the one before. Two is the least that hides a
/// decision; each more hides a slower decision (or a shorter GEMM stage) but delays every step by
/// one more stage, since steps go with the first submission after the counters that made them ready.
pub const IN_FLIGHT: usize = 2;

/// The host trigger loop; `in_flight`: submissions kept queued per device (None: T3_HOST_IN_FLIGHT,
/// else `IN_FLIGHT`, 2).
#[derive(Clone, Copy, Debug, Default)]
pub struct Host {
    pub in_flight: Option<usize>,
}

/// The step ops a trigger loop submits next: those not submitted yet whose every dependency's
/// buffer counter (as last read back) has reached the mark that proves that dependency complete.
pub fn ready(plan: &Plan, counters: &HashMap<Loc, u32>, submitted: &[bool]) -> Vec<usize> {
    (0..plan.ops.len())
        .filter(|&i| plan.ops[i].kind != Kind::Gemm && !submitted[i])
        .filter(|&i| {
            plan.ops[i].deps.iter().all(|&d| {
                let dep = &plan.ops[d];
                counters.get(&dep.dst).copied().unwrap_or(0) >= dep.mark
            })
        })
        .collect()
}

/// The trackers whose counters can still make a step ready: those a step not submitted yet depends
/// on, below the mark it waits for. Counters only grow, so the set only shrinks as the run goes on;
/// each submission reads these alone (none once every step is out).
pub fn wanted(plan: &Plan, counters: &HashMap<Loc, u32>, submitted: &[bool]) -> Vec<Loc> {
    let mut seen = std::collections::HashSet::new();
    (0..plan.ops.len())
        .filter(|&i| plan.ops[i].kind != Kind::Gemm && !submitted[i])
        .flat_map(|i| plan.ops[i].deps.iter().map(|&d| &plan.ops[d]))
        .filter(|dep| counters.get(&dep.dst).copied().unwrap_or(0) < dep.mark)
        .map(|dep| dep.dst)
        .filter(|&l| seen.insert(l))
        .collect()
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

impl Mode for Host {
    fn name(&self) -> &'static str {
        "host"
    }

    fn skip_reason(&self, _sys: &System) -> Option<String> {
        None
    }

    fn run(&self, sys: &mut System) -> Result<Run> {
        let depth = match self.in_flight {
            Some(n) => n.max(1),
            None => settings::host_in_flight(IN_FLIGHT)?,
        };
        sys.exec.timer.reset();
        let deadline = Instant::now() + sys.timeout();
        let plan = &sys.plan;
        // GEMM ops by stage, stages without GEMM work left out.
        let mut gemm_stages: VecDeque<Vec<usize>> = (0..=sys.lowered.stages)
            .map(|s| {
                (0..plan.ops.len())
                    .filter(|&i| plan.ops[i].kind == Kind::Gemm && plan.ops[i].stage == s)
                    .collect::<Vec<usize>>()
            })
            .filter(|ops| !ops.is_empty())
            .collect();
        let mut counters: HashMap<Loc, u32> = HashMap::new();
        let mut submitted = vec![false; plan.ops.len()];
        let mut left = plan.ops.len();
        let mut pass_of = vec![usize::MAX; plan.ops.len()];
        let mut passes: Vec<Vec<usize>> = Vec::new();
        // (op, host µs at submission) for every triggered step.
        let mut triggers: Vec<(usize, f64)> = Vec::new();
        let mut host_ends: Vec<f64> = Vec::new();
        // Host µs just before each submission was handed to the queue.
        let mut subs: Vec<f64> = Vec::new();
        // Host µs the loop spent waiting for each submission and its counters.
        let mut waits: Vec<(f64, f64)> = Vec::new();
        let mut t0: Option<Instant> = None;
        // Each queued submission with the trackers its readback holds.
        let mut in_flight: VecDeque<(Launched, Vec<Loc>)> = VecDeque::new();
        loop {
            // Decide and submit while fewer than `depth` submissions are queued: the next GEMM
            // stage with every step the latest counters allow.
            while in_flight.len() < depth {
                let steps = ready(plan, &counters, &submitted);
                // Steps ready while GEMM work is left go with the next stage: the pass shares the
                // device between them by the link budget.
                let mut ops = gemm_stages.pop_front().unwrap_or_default();
                if ops.is_empty() && steps.is_empty() {
                    break;
                }
                let now_us = t0.map_or(0.0, |t| t.elapsed().as_secs_f64() * 1e6);
                triggers.extend(steps.iter().map(|&i| (i, now_us)));
                ops.extend(steps);
                let mut commands = if passes.is_empty() {
                    sys.lowered.reset()
                } else {
                    Vec::new()
                };
                commands.push(Command::Pass(sys.lowered.pass(&ops, StoreMode::Store)));
                for &i in &ops {
                    submitted[i] = true;
                }
                let read = wanted(plan, &counters, &submitted);
                if !read.is_empty() {
                    commands.push(Lowered::counters_of(&read));
                }
                let l = sys.exec.launch(
                    &sys.ranks,
                    &sys.lowered,
                    "host trigger submission",
                    &commands,
                )?;
                let start = *t0.get_or_insert(l.submitted);
                // Just before the queue took it: a queue may start the work before submit returns.
                let (after, before) = (
                    l.started.saturating_duration_since(start),
                    start.saturating_duration_since(l.started),
                );
                subs.push((after.as_secs_f64() - before.as_secs_f64()) * 1e6);
                in_flight.push_back((l, read));
                for &i in &ops {
                    pass_of[i] = passes.len();
                }
                left -= ops.len();
                passes.push(ops);
            }
            // Collect the oldest submission (the device runs the next one meanwhile); its counters
            // decide the next. One device: a bounded wait on that submission is a wait on nothing
            // else.
            let Some((l, read_locs)) = in_flight.pop_front() else {
                break;
            };
            let start = t0.expect("set at the first submission");
            let waited_from = start.elapsed().as_secs_f64() * 1e6;
            let remaining = deadline.saturating_duration_since(Instant::now());
            sys.gpu
                .wait(Some(l.index), "host trigger submission", remaining)?;
            let read = match l.read {
                Some(p) => sys.gpu.await_read(p, deadline)?,
                None => Vec::new(),
            };
            host_ends.push(start.elapsed().as_secs_f64() * 1e6);
            waits.push((waited_from, *host_ends.last().unwrap()));
            let vals: Vec<u32> = bytemuck::pod_collect_to_vec(&read);
            counters.extend(read_locs.into_iter().zip(vals));
        }
        if left > 0 {
            return Err(Error::Gpu {
                during: "host trigger loop".into(),
                message: format!(
                    "no step became ready but {left} ops remain; trackers {:?}",
                    counters
                ),
            });
        }
        let mut t = sys.exec.timer.spans_us(sys.gpu)?;
        let gpu_clock = t.len() == passes.len();
        if !gpu_clock {
            // No timestamps: a pass spans from the previous completion to its own, on the host clock.
            t = host_ends
                .iter()
                .enumerate()
                .map(|(k, &e)| (if k == 0 { 0.0 } else { host_ends[k - 1] }, e))
                .collect();
        }
        // Host events move onto the GPU clock by the offset the submissions bound (see `align`).
        let (offset, grain) = if gpu_clock {
            let (offset, width) = align(&subs, &host_ends, &t);
            let how = if width >= 0.0 {
                format!("host clock aligned within ±{:.0} µs", width / 2.0)
            } else {
                format!("host clock NOT aligned: bounds cross by {:.0} µs", -width)
            };
            (offset, format!("{}; {how}", sys.grain()))
        } else {
            (0.0, "submission (host clock)".into())
        };
        let mut run = Run::from_passes(sys, self.name(), grain, &passes, &t);
        // A latency is good to the alignment's half-width either way; values below zero are clamped.
        let mut lat = Vec::new();
        for &(i, at) in &triggers {
            let at = at - offset;
            let ready_at = sys.plan.ops[i]
                .deps
                .iter()
                .map(|&d| t[pass_of[d]].1)
                .fold(0.0, f64::max);
            lat.push((at - ready_at).max(0.0));
            let op = &sys.plan.ops[i];
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
        for (k, &(from, to)) in waits.iter().enumerate() {
            run.timeline.events.push(Event {
                lane: Lane::HostWait,
                kind: EventKind::Wait,
                name: format!("wait submission {k}"),
                rank: 0,
                chunk: None,
                stage: None,
                start_us: from - offset,
                end_us: to - offset,
            });
        }
        run.trigger_latency_us = lat;
        Ok(run)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{Buf, ReduceVia};
    use crate::schedule::{Collective, Schedule};
    use crate::shapes::Chunking;

    /// Marks every op's counters as the plan says they end once `done` ops completed.
    fn counters_after(plan: &Plan, done: &[usize]) -> HashMap<Loc, u32> {
        let mut c = HashMap::new();
        for &i in done {
            let o = &plan.ops[i];
            let v = c.entry(o.dst).or_insert(0);
            *v = (*v).max(o.mark);
        }
        c
    }

    /// A ring reduce-scatter's plan over 40 rows.
    fn ring_plan(ranks: usize, chunks: usize) -> Plan {
        let ch = Chunking::new(40, ranks, chunks).unwrap();
        let schedule = Schedule::new(Collective::ReduceScatter, &ch);
        Plan::new(&schedule, &ch, 8, 128, ReduceVia::Update)
    }

    #[test]
    fn steps_become_ready_when_their_inputs_reach_their_marks() {
        let plan = ring_plan(4, 1);
        let none = vec![false; plan.ops.len()];
        assert!(
            ready(&plan, &HashMap::new(), &none).is_empty(),
            "nothing before any GEMM"
        );
        // After GEMM stages 0 and 1, exactly the ring's first steps (stage 0) are ready.
        let gemms: Vec<usize> = (0..plan.ops.len())
            .filter(|&i| plan.ops[i].kind == Kind::Gemm && plan.ops[i].stage < 2)
            .collect();
        let r = ready(&plan, &counters_after(&plan, &gemms), &none);
        assert_eq!(r.len(), 4);
        assert!(r.iter().all(|&i| plan.ops[i].stage == 0));
        // Submitted steps are not offered again; a counter one short of its mark holds a step back.
        let mut submitted = none.clone();
        submitted[r[0]] = true;
        assert_eq!(
            ready(&plan, &counters_after(&plan, &gemms), &submitted).len(),
            3
        );
        let mut short = counters_after(&plan, &gemms);
        let dep = plan.ops[r[1]].deps[0];
        *short.get_mut(&plan.ops[dep].dst).unwrap() -= 1;
        assert!(!ready(&plan, &short, &none).contains(&r[1]));
        assert!(plan.ops[r[1]].dst.buf == Buf::Out);
    }

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

    #[test]
    fn only_counters_that_can_still_make_a_step_ready_are_read() {
        let plan = ring_plan(3, 2);
        let none = vec![false; plan.ops.len()];
        let all = wanted(&plan, &HashMap::new(), &none);
        let unique: std::collections::HashSet<_> = all.iter().collect();
        assert_eq!(unique.len(), all.len(), "each tracker read once");
        // Every dependency of every step is wanted before anything ran.
        for o in plan.ops.iter().filter(|o| o.kind != Kind::Gemm) {
            assert!(o.deps.iter().all(|&d| all.contains(&plan.ops[d].dst)));
        }
        // A tracker at its mark for every step left is no longer read; with every step out, none is.
        let (first, _) = plan
            .ops
            .iter()
            .enumerate()
            .find(|(_, o)| o.kind != Kind::Gemm)
            .unwrap();
        let done: Vec<usize> = (0..plan.ops.len()).collect();
        let full = counters_after(&plan, &done);
        let dep = plan.ops[first].deps[0];
        let mut some = HashMap::new();
        some.insert(plan.ops[dep].dst, full[&plan.ops[dep].dst]);
        let fewer = wanted(&plan, &some, &none);
        assert!(!fewer.contains(&plan.ops[dep].dst));
        assert_eq!(fewer.len() + 1, all.len());
        assert!(wanted(&plan, &HashMap::new(), &vec![true; plan.ops.len()]).is_empty());
    }
}
