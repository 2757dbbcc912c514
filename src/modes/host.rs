//! Host mode: the host-side trigger loop. GEMM work goes out stage by stage; after each submission
//! completes the host reads every tracker counter back and submits, with the next stage's GEMM, each
//! step whose inputs' counters have reached their marks: T3's threshold (local tiles and the incoming
//! update) checked by the CPU. wgpu cannot map a buffer while GPU work uses it, so the host sees the
//! counters only at submission grain; the loop records each trigger's latency.

use std::collections::HashMap;
use web_time::Instant;

use super::{Mode, Run, System};
use crate::error::{Error, Result};
use crate::gemm::StoreMode;
use crate::lower::Command;
use crate::plan::{Kind, Loc, Plan};
use crate::timeline::{Event, EventKind, Lane};

pub struct Host;

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

impl Mode for Host {
    fn name(&self) -> &'static str {
        "host"
    }

    fn skip_reason(&self, _sys: &System) -> Option<String> {
        None
    }

    fn run(&self, sys: &mut System) -> Result<Run> {
        sys.exec.timer.reset();
        let plan = &sys.plan;
        let stages = sys.lowered.stages;
        let mut counters: HashMap<Loc, u32> = HashMap::new();
        let mut submitted = vec![false; plan.ops.len()];
        let mut pass_of = vec![usize::MAX; plan.ops.len()];
        let mut passes: Vec<Vec<usize>> = Vec::new();
        // (op, host µs at submission) for every triggered step.
        let mut triggers: Vec<(usize, f64)> = Vec::new();
        let mut host_ends: Vec<f64> = Vec::new();
        let mut t0: Option<Instant> = None;
        let mut stage = 0;
        while submitted.iter().any(|s| !s) {
            let mut ops: Vec<usize> = (0..plan.ops.len())
                .filter(|&i| plan.ops[i].kind == Kind::Gemm && plan.ops[i].stage == stage)
                .collect();
            stage += 1;
            let now_us = t0.map_or(0.0, |t| t.elapsed().as_secs_f64() * 1e6);
            for i in ready(plan, &counters, &submitted) {
                ops.push(i);
                triggers.push((i, now_us));
            }
            if ops.is_empty() {
                if stage <= stages {
                    continue;
                }
                return Err(Error::Gpu {
                    during: "host trigger loop".into(),
                    message: format!(
                        "no step became ready but {} ops remain; trackers {:?}",
                        submitted.iter().filter(|s| !**s).count(),
                        counters
                    ),
                });
            }
            let mut commands = if passes.is_empty() {
                sys.lowered.reset()
            } else {
                Vec::new()
            };
            commands.push(Command::Pass(sys.lowered.pass(&ops, StoreMode::Store)));
            commands.push(sys.lowered.counters());
            let done = sys.exec.submit(
                &sys.ranks,
                &sys.lowered,
                "host trigger submission",
                &commands,
                sys.gpu.timeout,
            )?;
            let t0 = *t0.get_or_insert(done.submitted);
            host_ends.push((done.done - t0).as_secs_f64() * 1e6);
            let vals: Vec<u32> = bytemuck::pod_collect_to_vec(&done.read);
            counters.extend(sys.lowered.locs.iter().copied().zip(vals));
            for &i in &ops {
                submitted[i] = true;
                pass_of[i] = passes.len();
            }
            passes.push(ops);
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
        let grain = if gpu_clock {
            sys.grain()
        } else {
            "submission (host clock)".into()
        };
        let mut run = Run::from_passes(sys, self.name(), grain, &passes, &t);
        // The host clock is aligned to the GPU clock once per run, at the first submission: host time 0
        // is taken when that submission returns and GPU time 0 is its pass's first timestamp. The
        // offset between the two (launch delay) is not measured, so a latency is good to about one
        // submission's launch time, either way; values below zero are clamped.
        let mut lat = Vec::new();
        for &(i, at) in &triggers {
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

    #[test]
    fn steps_become_ready_when_their_inputs_reach_their_marks() {
        let ch = Chunking::new(40, 4, 1).unwrap();
        let plan = Plan::new(
            &Schedule::new(Collective::ReduceScatter, &ch),
            &ch,
            8,
            128,
            ReduceVia::Update,
        );
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
}
