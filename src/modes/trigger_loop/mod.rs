//! The host trigger loop, on one device or several: per device up to `depth` submissions queued
//! (the next GEMM stage with every step the latest counters allow), counters read back with each,
//! decisions taken while the devices run; steps between devices go as a send half (the sender's
//! step kernel writes the chunk into the link's outbox), a host copy (outbox to the receiver's inbox
//! on the copy threads, once the sender's submission completed) and a receive half (the receiver's
//! next submission puts the inbox into the destination and bumps its tracker). Nothing blocks on one
//! device while another could take work: the loop polls; only when waiting blocks
//! ([`HostWait::Block`]: --host-loop wait=block, the default on CPU adapters), on one device with no
//! transfer in flight, does it block, bounded, on its oldest submission.

use std::collections::{HashMap, VecDeque};
use std::time::Duration;
use web_time::Instant;

use super::host::{feeds, met, ready, wanted};
use super::{Run, System};
use crate::config::host::{HostGrain, HostWait};
use crate::error::{Error, Result};
use crate::executor::Launched;
use crate::gemm::StoreMode;
use crate::lower::Command;
use crate::plan::{Kind, Loc};

mod timeline;
use timeline::timeline;

/// When steps may go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gate {
    /// As soon as their inputs' counters reach their marks (host mode: T3's trigger), GEMM work
    /// going out at the grain given.
    Tracked(HostGrain),
    /// Only once every GEMM on every device completed (sequential mode on several devices).
    AfterGemms,
}

/// One submission in flight on a device.
struct Flight {
    launched: Launched,
    /// The trackers its readback holds, in order.
    reads: Vec<Loc>,
    /// The crossing steps whose send halves it runs: their transfers start once it completes.
    sends: Vec<usize>,
    /// The crossing steps whose receive halves it runs: their link slots are free once it completes.
    receives: Vec<usize>,
    gemm: bool,
}

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

/// A host copy between devices, started when the sender's submission completed; `copying`: when
/// its link's lane took it (both ends mapped).
struct Transfer {
    op: usize,
    started: f64,
    copying: Option<f64>,
}

/// How the loop waits on `sys` by default: as its `Config::host` says, else spin on GPUs and block
/// where any device is a CPU adapter, whose cores the spinning thread would take from the device.
pub fn default_wait(sys: &System) -> HostWait {
    let cpu = sys
        .gpus
        .iter()
        .any(|g| g.info.device_type == wgpu::DeviceType::Cpu);
    sys.config
        .host
        .wait
        .unwrap_or(if cpu { HostWait::Block } else { HostWait::Spin })
}

/// Runs the plan once through the loop with `depth` submissions queued per device, waiting on the
/// devices as `wait` says; `mode` names the timeline.
pub fn run(sys: &mut System, depth: usize, gate: Gate, wait: HostWait, mode: &str) -> Result<Run> {
    let deadline = Instant::now() + sys.timeout();
    for p in &mut sys.parts {
        p.exec.timer.reset();
        p.exec.defer_resolve = true;
    }
    // A run that failed may have left transfers mapped or pending.
    for l in &sys.links {
        l.release();
    }
    let run = submit_all(sys, depth, gate, wait, mode, deadline);
    for p in &mut sys.parts {
        p.exec.defer_resolve = false;
    }
    if run.is_err() {
        // A copy still running writes into a mapping: let it end before anything unmaps it.
        for (lane, link) in sys.lanes.iter_mut().zip(&sys.links) {
            lane.drain();
            link.release();
        }
    }
    run
}

/// The loop itself ([`run`] sets the executors up around it).
fn submit_all(
    sys: &mut System,
    depth: usize,
    gate: Gate,
    wait: HostWait,
    mode: &str,
    deadline: Instant,
) -> Result<Run> {
    let devices = sys.parts.len();
    let plan = &sys.plan;
    let n = plan.ops.len();
    let device_of = |rank: usize| sys.placement.device(rank);
    let crossing = |i: usize| sys.host_links.of_op[i];
    // Where an op starts (its device, or a crossing step's sender) and where its result lands (its
    // device, or the receiver).
    let starts_on = |i: usize| crossing(i).map_or(device_of(plan.ops[i].dst.rank), |c| c.from);
    let lands_on = |i: usize| crossing(i).map_or(device_of(plan.ops[i].dst.rank), |c| c.to);
    // Where op i waits for dependency `dep`: a step between devices waits for what feeds it on the
    // sender (its send half) and for the rest on the receiver (its receive half).
    let waits_on = |i: usize, dep: usize| match crossing(i) {
        Some(c) if !feeds(plan, i, dep) => c.to,
        _ => starts_on(i),
    };
    // A dependency of op i met by queue order: a step (never a GEMM: what GEMMs produce is
    // tracked) whose last part is already queued where op i waits for it.
    let queued = |i: usize, dep: usize, sent: &[bool], received: &[bool]| {
        plan.ops[dep].kind != Kind::Gemm
            && lands_on(dep) == waits_on(i, dep)
            && if crossing(dep).is_some() {
                received[dep]
            } else {
                sent[dep]
            }
    };
    let stages = sys.parts[0].lowered.stages;
    // GEMM ops by device and stage; tracked at chunk grain, a stage goes a chunk per rank at a time.
    let mut gemm_stages: Vec<VecDeque<Vec<usize>>> = (0..devices)
        .map(|d| {
            (0..=stages)
                .flat_map(|s| {
                    let ops: Vec<usize> = (0..n)
                        .filter(|&i| {
                            let o = &plan.ops[i];
                            o.kind == Kind::Gemm && o.stage == s && device_of(o.dst.rank) == d
                        })
                        .collect();
                    match gate {
                        Gate::Tracked(HostGrain::Chunk) => chunk_waves(plan, ops),
                        _ => vec![ops],
                    }
                })
                .filter(|ops| !ops.is_empty())
                .collect()
        })
        .collect();
    let mut gemm_flights_left: usize = gemm_stages.iter().map(|s| s.len()).sum();
    let mut counters: HashMap<Loc, u32> = HashMap::new();
    // Steps (or their send halves) submitted; crossing steps landed and received.
    let mut sent = vec![false; n];
    let mut landed = vec![false; n];
    let mut received = vec![false; n];
    // Receive halves whose submission completed: a zero-copy slot's bytes are read by then.
    let mut consumed = vec![false; n];
    let zero_copy_links: Vec<bool> = sys.links.iter().map(|l| l.zero_copy()).collect();
    let zero_copy = |i: usize| crossing(i).is_some_and(|c| zero_copy_links[c.link]);
    let mut left = n;
    let mut subs: Vec<Sub> = Vec::new();
    let mut pass_of = vec![usize::MAX; n];
    // Each step the counters triggered: when, and the dependencies its counters proved complete.
    let mut triggers: Vec<Trigger> = Vec::new();
    let mut waits: Vec<(usize, f64, f64)> = Vec::new();
    let mut copies: Vec<(usize, f64, f64, f64)> = Vec::new();
    let mut transfers: Vec<Transfer> = Vec::new();
    let mut in_flight: Vec<VecDeque<(Flight, std::ops::Range<usize>)>> =
        (0..devices).map(|_| VecDeque::new()).collect();
    let mut started = vec![false; devices];
    let t0 = Instant::now();
    let now_us = || t0.elapsed().as_secs_f64() * 1e6;
    loop {
        // Fill: on each device, the next GEMM stage with every step its counters allow, then, in
        // later passes of the same submission, the steps that only wait for steps queued before them.
        for d in 0..devices {
            while in_flight[d].len() < depth {
                let steps_open = matches!(gate, Gate::Tracked(_)) || gemm_flights_left == 0;
                let pick = |sent: &[bool], received: &[bool]| -> Vec<usize> {
                    if !steps_open {
                        return Vec::new();
                    }
                    ready(
                        plan,
                        &counters,
                        sent,
                        |i, dep| crossing(i).is_none() || feeds(plan, i, dep),
                        |i, dep| queued(i, dep, sent, received),
                    )
                    .into_iter()
                    .filter(|&i| starts_on(i) == d)
                    // A crossing step's slot is free once the step before it on that slot was
                    // received: its receive half submitted (a host copy's write map waits for that
                    // submission), or, on a zero-copy link, whose bytes the sender writes in place,
                    // completed.
                    .filter(|&i| {
                        crossing(i).is_none_or(|c| {
                            c.after
                                .is_none_or(|a| received[a] && (consumed[a] || !zero_copy(i)))
                        })
                    })
                    .collect()
                };
                // Receive halves whose chunk landed and whose destination is ready for it: its
                // own GEMM tiles (tracked) and the steps before it there.
                let receives: Vec<usize> = (0..n)
                    .filter(|&i| landed[i] && !received[i])
                    .filter(|&i| crossing(i).is_some_and(|c| c.to == d))
                    .filter(|&i| {
                        plan.ops[i].deps.iter().all(|&dep| {
                            feeds(plan, i, dep)
                                || met(plan, &counters, dep)
                                || queued(i, dep, &sent, &received)
                        })
                    })
                    .collect();
                let gemm = gemm_stages[d].pop_front();
                let is_gemm = gemm.is_some();
                let mut wave = gemm.unwrap_or_default();
                left -= wave.len();
                // Without GEMM work to ride with, a submission carries at most one send half per
                // link: each chunk's host copy then starts once its own send is written, not once
                // every ready send is (sequential's collective, host mode's last steps).
                let mut links_used = std::collections::HashSet::new();
                let mut one_per_link = |steps: Vec<usize>| -> Vec<usize> {
                    if is_gemm {
                        return steps;
                    }
                    steps
                        .into_iter()
                        .filter(|&i| crossing(i).is_none_or(|c| links_used.insert(c.link)))
                        .collect()
                };
                let mut steps = one_per_link(pick(&sent, &received));
                for &i in &receives {
                    received[i] = true;
                    left -= 1;
                }
                wave.extend(receives.iter().copied());
                if wave.is_empty() && steps.is_empty() {
                    break;
                }
                let at = now_us();
                let mut waves: Vec<Vec<usize>> = Vec::new();
                let mut sends: Vec<usize> = Vec::new();
                loop {
                    // What released each step: the dependencies its counters proved complete, and the
                    // ops it waited for otherwise (queue order, its link slot's previous user).
                    for &i in &steps {
                        let (tracked, held): (Vec<usize>, Vec<usize>) = plan.ops[i]
                            .deps
                            .iter()
                            .filter(|&&dep| crossing(i).is_none() || feeds(plan, i, dep))
                            .partition(|&&dep| met(plan, &counters, dep));
                        let held = held
                            .into_iter()
                            .chain(crossing(i).and_then(|c| c.after))
                            .collect();
                        triggers.push(Trigger {
                            op: i,
                            at,
                            tracked,
                            held,
                        });
                    }
                    for &i in &steps {
                        sent[i] = true;
                        match crossing(i) {
                            Some(_) => sends.push(i),
                            None => left -= 1,
                        }
                    }
                    wave.extend(steps);
                    waves.push(wave);
                    steps = one_per_link(pick(&sent, &received));
                    if steps.is_empty() {
                        break;
                    }
                    wave = Vec::new();
                }
                let part = &mut sys.parts[d];
                let l = &part.lowered;
                let mut commands = if started[d] { Vec::new() } else { l.reset() };
                started[d] = true;
                commands.extend(l.land(&receives));
                commands.extend(
                    waves
                        .iter()
                        .map(|ops| Command::Pass(l.pass(ops, StoreMode::Store))),
                );
                commands.extend(l.drain(&sends));
                // Only the trackers this submission's own ops bump. Safe because every writer of a
                // tracker (a GEMM, a step, a crossing step's receive half) runs on the tracker's own
                // device, in queue order, and the submission holding op X (or X's receive half)
                // reads X's counter while every step tracking X is still open (unsent, or its
                // receive half not out): the half that waits for X cannot go before that counter is
                // seen, so it is still `wanted` here if any step will ever want it (that set only
                // shrinks). So a counter changes only with the ops that bump it, the first readback
                // after them sees it, and a tracker left out here has nothing new to show. A tracker per op, not every tracker still wanted: fewer gather dispatches,
                // each behind a barrier.
                let bumped: std::collections::HashSet<Loc> = waves
                    .iter()
                    .flatten()
                    .filter(|&&i| crossing(i).is_none_or(|c| c.to == d))
                    .map(|&i| plan.ops[i].dst)
                    .collect();
                // A step between devices stays open until its receive half is out.
                let open = |i: usize| !sent[i] || (crossing(i).is_some() && !received[i]);
                let reads: Vec<Loc> = wanted(plan, &counters, open, |i, dep| {
                    queued(i, dep, &sent, &received)
                })
                .into_iter()
                .filter(|loc| device_of(loc.rank) == d && bumped.contains(loc))
                .collect();
                if !reads.is_empty() {
                    // Gathered at the end of the last pass (after a barrier wgpu puts before
                    // them), read back with one copy.
                    let (gather, read) = l.counters_of(&reads);
                    if let Some(Command::Pass(p)) = commands
                        .iter_mut()
                        .rev()
                        .find(|c| matches!(c, Command::Pass(_)))
                    {
                        p.dispatches.extend(gather);
                    }
                    commands.push(read);
                }
                let launched = part.exec.launch(
                    &part.ranks,
                    &part.lowered,
                    &format!("host trigger submission on device {d}"),
                    &commands,
                )?;
                let handed = launched.started.saturating_duration_since(t0).as_secs_f64() * 1e6;
                let first = subs.len();
                for ops in waves {
                    for &i in &ops {
                        pass_of[i] = subs.len();
                    }
                    subs.push(Sub {
                        device: d,
                        ops,
                        handed,
                        seen_done: f64::NAN,
                    });
                }
                in_flight[d].push_back((
                    Flight {
                        launched,
                        reads,
                        sends,
                        receives,
                        gemm: is_gemm,
                    },
                    first..subs.len(),
                ));
            }
        }
        let busy = in_flight.iter().any(|q| !q.is_empty()) || !transfers.is_empty();
        if !busy {
            break;
        }
        if Instant::now() > deadline {
            return Err(Error::Timeout {
                pending: format!(
                    "the host trigger loop ({} submissions and {} host copies in flight)",
                    in_flight.iter().map(|q| q.len()).sum::<usize>(),
                    transfers.len()
                ),
                after: t0.elapsed(),
            });
        }
        // One device and no copy in flight: its oldest submission is all there is to wait for (blocked
        // in the driver, or polled back to back below).
        let waited = wait == HostWait::Block && devices == 1 && transfers.is_empty();
        let from = now_us();
        if waited {
            let (f, _) = in_flight[0].front().expect("busy");
            let part = &sys.parts[0];
            part.gpu.wait(
                Some(f.launched.index.clone()),
                "host trigger submission on device 0",
                deadline.saturating_duration_since(Instant::now()),
            )?;
            waits.push((0, from, f64::NAN));
        } else {
            for p in &sys.parts {
                poll(p.gpu, p.device)?;
            }
            if devices == 1 && transfers.is_empty() && waits.last().is_none_or(|w| !w.2.is_nan()) {
                waits.push((0, from, f64::NAN));
            }
        }
        let mut progressed = false;
        // Collect completed submissions (oldest first per device) and their counters.
        for (d, queue) in in_flight.iter_mut().enumerate() {
            while let Some((f, _)) = queue.front() {
                if !(waited || f.launched.is_done()) {
                    break;
                }
                let (mut f, k) = queue.pop_front().expect("front exists");
                let gpu = sys.parts[d].gpu;
                if let Some(p) = f.launched.read.take() {
                    let bytes = gpu.await_read(p, deadline)?;
                    let vals = sys.parts[d].lowered.counter_values(&f.reads, &bytes);
                    counters.extend(std::mem::take(&mut f.reads).into_iter().zip(vals));
                }
                let done = now_us();
                for sub in &mut subs[k] {
                    sub.seen_done = done;
                }
                if let Some(w) = waits.last_mut().filter(|w| w.0 == d && w.2.is_nan()) {
                    w.2 = done;
                }
                if f.gemm {
                    gemm_flights_left -= 1;
                }
                for &i in &f.receives {
                    consumed[i] = true;
                }
                for &i in &f.sends {
                    let c = crossing(i).expect("a send half crosses");
                    if zero_copy_links[c.link] {
                        // In host memory already, where the receiver reads it: nothing to copy.
                        landed[i] = true;
                        continue;
                    }
                    sys.links[c.link].start(c.slot, c.bytes)?;
                    transfers.push(Transfer {
                        op: i,
                        started: done,
                        copying: None,
                    });
                }
                progressed = true;
                if waited {
                    break;
                }
            }
        }
        // Hand the transfers whose both maps are in place to their link's copy lane (one per
        // link: the directions copy side by side while the loop goes on), and land those copied.
        for t in transfers.iter_mut().filter(|t| t.copying.is_none()) {
            let c = crossing(t.op).expect("a transfer crosses");
            if sys.links[c.link].ready(sys.gpus, c.slot)? {
                sys.links[c.link].hand_over(c.slot, &mut sys.lanes[c.link], t.op)?;
                t.copying = Some(now_us());
                progressed = true;
            }
        }
        for lane in sys.lanes.iter_mut() {
            for (i, result) in lane.done() {
                let c = crossing(i).expect("a transfer crosses");
                sys.links[c.link].copied(c.slot, result)?;
                let k = transfers
                    .iter()
                    .position(|t| t.op == i)
                    .expect("a lane returns what it was handed");
                let t = transfers.swap_remove(k);
                copies.push((i, t.started, t.copying.unwrap_or(t.started), now_us()));
                landed[i] = true;
                progressed = true;
            }
        }
        if !progressed {
            match wait {
                HostWait::Spin => std::thread::yield_now(),
                HostWait::Block => std::thread::sleep(Duration::from_micros(20)),
            }
        }
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
    if gate == Gate::AfterGemms {
        // Steps held for every GEMM are scheduled, not triggered: no latency to report.
        triggers.clear();
    }
    let mut run = timeline(sys, mode, &subs, &pass_of, &triggers, &waits, &copies)?;
    if matches!(gate, Gate::Tracked(_)) {
        // GEMM and collective overlap here: no separate times (sequential's define T_comm).
        run.gemm_us = None;
        run.comm_us = None;
    }
    Ok(run)
}

/// A stage's GEMM ops (in plan order) as submissions of at most one chunk per rank: the k-th chunk
/// of every rank together. The host sees counters only when a submission completes, so a stage of
/// several chunks per rank in one submission would hold every chunk's trigger until its last chunk
/// is done, and with a second submission queued behind it the steps would follow the next stage
/// (on two devices at 8 chunks per rank, no send would start before both stages ended).
/// At one chunk per rank a stage stays one submission. The cost: each chunk's GEMM fills the GPU
/// alone, and there are more submissions ([`HostGrain`] says where each grain is the default).
fn chunk_waves(plan: &crate::plan::Plan, ops: Vec<usize>) -> Vec<Vec<usize>> {
    let mut waves: Vec<Vec<usize>> = Vec::new();
    let mut seen: HashMap<usize, usize> = HashMap::new();
    for i in ops {
        let k = seen.entry(plan.ops[i].dst.rank).or_insert(0);
        if waves.len() <= *k {
            waves.push(Vec::new());
        }
        waves[*k].push(i);
        *k += 1;
    }
    waves
}

/// Polls device `d` once without blocking; a lost device is an error naming it.
fn poll(gpu: &crate::gpu::Gpu, d: usize) -> Result<()> {
    let during = || format!("the host trigger loop polling device {d}");
    if let Err(e) = gpu.device.poll(wgpu::PollType::Poll) {
        gpu.check(&during())?;
        return Err(Error::Gpu {
            during: during(),
            message: e.to_string(),
        });
    }
    gpu.check(&during())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{Plan, ReduceVia};
    use crate::schedule::{Collective, Schedule};
    use crate::shapes::Chunking;

    #[test]
    fn a_stage_goes_one_chunk_per_rank_at_a_time() {
        let ch = Chunking::new(96, 2, 4).unwrap();
        let schedule = Schedule::new(Collective::AllReduce, &ch);
        let plan = Plan::new(&schedule, &ch, 8, 128, ReduceVia::Update);
        let stage0: Vec<usize> = (0..plan.ops.len())
            .filter(|&i| plan.ops[i].kind == Kind::Gemm && plan.ops[i].stage == 0)
            .collect();
        assert_eq!(stage0.len(), 2 * 4, "each rank's four chunks for the other");
        let waves = chunk_waves(&plan, stage0.clone());
        assert_eq!(waves.len(), 4);
        for w in &waves {
            let ranks: std::collections::HashSet<usize> =
                w.iter().map(|&i| plan.ops[i].dst.rank).collect();
            assert_eq!((w.len(), ranks.len()), (2, 2), "one chunk of each rank");
        }
        let mut all: Vec<usize> = waves.concat();
        all.sort();
        assert_eq!(all, stage0, "every op once");
        // One chunk per rank: the stage is one wave.
        let one = Chunking::new(96, 8, 1).unwrap();
        let plan = Plan::new(
            &Schedule::new(Collective::ReduceScatter, &one),
            &one,
            8,
            128,
            ReduceVia::Update,
        );
        let stage: Vec<usize> = (0..plan.ops.len())
            .filter(|&i| plan.ops[i].kind == Kind::Gemm && plan.ops[i].stage == 1)
            .collect();
        assert_eq!(chunk_waves(&plan, stage).len(), 1);
    }
}
