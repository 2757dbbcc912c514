//! The host trigger loop, on one device or several: per device up to `depth` submissions queued
//! (the next GEMM stage with every step the latest counters allow; gated on every GEMM, as
//! sequential runs, the device's whole GEMM, then the steps), counters read back with each,
//! decisions taken while the devices run; steps between devices go as a send half (the sender's
//! step kernel writes the chunk into the link's outbox), a host copy (outbox to the receiver's inbox
//! on the copy threads, once the sender's submission completed) and a receive half (the receiver's
//! next submission puts the inbox into the destination and bumps its tracker); with the flag handoff
//! the receiver's landing goes ahead, beside its GEMM work, and the loop raises its gate once the
//! send kernel's flag shows the chunk written (src/hostlink/gates.rs). Nothing blocks on one
//! device while another could take work: the loop polls; only when waiting blocks
//! ([`HostWait::Block`]: --host-loop wait=block, the default on CPU adapters), on one device with no
//! transfer in flight, does it block, bounded, on its oldest submission. What to submit where, and
//! when a chunk has landed, is decided by a state machine without the GPU (machine.rs, with the rules
//! in rules.rs); this file makes its submissions and host copies and waits, every wait bounded.

use std::collections::VecDeque;
use std::time::Duration;
use web_time::Instant;

use super::{EarlyLandings, Part, Run, System};
use crate::config::host::{HostWait, SendTrigger};
use crate::error::{Error, Result};
use crate::executor::Launched;
use crate::gemm::StoreMode;
use crate::gpu::Gpu;
use crate::hostlink::{CopyLane, HostLink};
use crate::lower::{Command, Crossing, HostPass};
use crate::plan::Loc;

mod machine;
mod rules;
mod timeline;
pub use machine::Gate;
use machine::{Machine, Submission};
use timeline::{timeline, Sub, Trigger};

/// One submission in flight on a device, as the driver holds it.
struct Flight {
    launched: Launched,
    /// The trackers its readback holds, in order.
    reads: Vec<Loc>,
    /// Its waiting landings (the flag handoff).
    waits: Vec<usize>,
    /// Its sends that wait for their GEMM's counters (the device's trigger).
    watching: Vec<usize>,
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
    let settle = Instant::now() + crate::hostlink::SETTLE;
    for l in &sys.links {
        l.release(settle);
    }
    let run = submit_all(sys, depth, gate, wait, mode, deadline);
    for p in &mut sys.parts {
        p.exec.defer_resolve = false;
    }
    if run.is_err() {
        // A copy still running writes into a mapping: let it end before anything unmaps it.
        let settle = Instant::now() + crate::hostlink::SETTLE;
        for (lane, link) in sys.lanes.iter_mut().zip(&sys.links) {
            lane.drain();
            link.release(settle);
        }
    }
    run
}

/// The loop itself ([`run`] sets the executors up around it): the [`Machine`] decides, the
/// [`Driver`] makes its submissions and host copies and feeds it what completed.
fn submit_all(
    sys: &mut System,
    depth: usize,
    gate: Gate,
    wait: HostWait,
    mode: &str,
    deadline: Instant,
) -> Result<Run> {
    let devices = sys.parts.len();
    let stages = sys.parts[0].lowered.stages;
    let watch = sys.config.host.trigger == Some(SendTrigger::Device);
    let mut machine = Machine::new(
        &sys.plan,
        &sys.placement,
        &sys.host_links,
        stages,
        (gate, depth, watch),
    );
    let mut io = Io {
        parts: &mut sys.parts,
        gpus: sys.gpus,
        links: &mut sys.links,
        lanes: &mut sys.lanes,
        of_op: &sys.host_links.of_op,
    };
    let t0 = Instant::now();
    let mut dr = Driver {
        in_flight: (0..devices).map(|_| VecDeque::new()).collect(),
        transfers: Vec::new(),
        subs: Vec::new(),
        pass_of: vec![usize::MAX; sys.plan.ops.len()],
        triggers: Vec::new(),
        waits: Vec::new(),
        copies: Vec::new(),
        closed: Vec::new(),
        early: EarlyLandings::default(),
        t0,
    };
    loop {
        for d in 0..devices {
            dr.submit(&mut machine, &mut io, d)?;
        }
        let busy = dr.in_flight.iter().any(|q| !q.is_empty()) || !dr.transfers.is_empty();
        if !busy {
            break;
        }
        if Instant::now() > deadline {
            return Err(Error::Timeout {
                pending: format!(
                    "the host trigger loop ({} submissions and {} host copies in flight)",
                    dr.in_flight.iter().map(|q| q.len()).sum::<usize>(),
                    dr.transfers.len()
                ),
                after: t0.elapsed(),
            });
        }
        // One device and no copy in flight: its oldest submission is all there is to wait for (blocked
        // in the driver, or polled back to back below).
        let waited = wait == HostWait::Block && devices == 1 && dr.transfers.is_empty();
        let from = now_us(t0);
        if waited {
            let (f, _) = dr.in_flight[0].front().expect("busy");
            io.parts[0].gpu.wait(
                Some(f.launched.index.clone()),
                "host trigger submission on device 0",
                deadline.saturating_duration_since(Instant::now()),
            )?;
            dr.waits.push((0, from, f64::NAN));
        } else {
            for p in io.parts.iter() {
                poll(p.gpu, p.device)?;
            }
            let open = dr.waits.last().is_none_or(|w| !w.2.is_nan());
            if devices == 1 && dr.transfers.is_empty() && open {
                dr.waits.push((0, from, f64::NAN));
            }
        }
        let raised = dr.raise(&machine, &io);
        let collected = dr.collect(&mut machine, &mut io, waited, deadline)?;
        let copied = dr.copy(&mut machine, &mut io)?;
        if !(raised || collected || copied) {
            match wait {
                HostWait::Spin => std::thread::yield_now(),
                HostWait::Block => std::thread::sleep(Duration::from_micros(20)),
            }
        }
    }
    machine.finish()?;
    if gate == Gate::AfterGemms {
        // Steps held for every GEMM are scheduled, not triggered: no latency to report.
        dr.triggers.clear();
    }
    let mut run = timeline(
        sys,
        mode,
        &dr.subs,
        &dr.pass_of,
        &dr.triggers,
        &dr.waits,
        &dr.copies,
    )?;
    if matches!(gate, Gate::Tracked(_)) {
        // GEMM and collective overlap here: no separate times (sequential's define T_comm).
        run.gemm_us = None;
        run.comm_us = None;
    }
    if sys.links.iter().any(|l| l.gated()) || machine.watches() {
        run.early_landings = Some(dr.early);
    }
    Ok(run)
}

/// What of the system the driver uses while the machine holds its plan, placement and links.
struct Io<'s, 'a> {
    parts: &'s mut [Part<'a>],
    gpus: &'a [Gpu],
    links: &'s mut [HostLink],
    lanes: &'s mut [CopyLane],
    of_op: &'s [Option<Crossing>],
}

/// Host µs since `t0`.
fn now_us(t0: Instant) -> f64 {
    t0.elapsed().as_secs_f64() * 1e6
}

/// The driver's state: each device's submissions in flight, the host copies under way, and what the
/// run leaves for its timeline (passes, triggers, waits and copies, in host µs since `t0`).
struct Driver {
    in_flight: Vec<VecDeque<(Flight, std::ops::Range<usize>)>>,
    transfers: Vec<Transfer>,
    subs: Vec<Sub>,
    pass_of: Vec<usize>,
    /// Each step the counters triggered: when, and the dependencies its counters proved complete.
    triggers: Vec<Trigger>,
    waits: Vec<(usize, f64, f64)>,
    copies: Vec<(usize, f64, f64, f64)>,
    /// Waiting landings whose gates the host has not raised yet.
    closed: Vec<usize>,
    /// What the waiting landings did.
    early: EarlyLandings,
    t0: Instant,
}

impl Driver {
    fn now_us(&self) -> f64 {
        now_us(self.t0)
    }

    /// Makes every submission the machine decides for device `d` now.
    fn submit(&mut self, machine: &mut Machine, io: &mut Io, d: usize) -> Result<()> {
        while let Some(s) = machine.next(d) {
            let at = self.now_us();
            self.triggers.extend(s.released.iter().map(|r| Trigger {
                op: r.op,
                at,
                tracked: r.tracked.clone(),
                held: r.held.clone(),
            }));
            // The gates this submission binds start closed: their last users' submissions are done
            // (a slot is reused only once its last chunk was read). So every gate a run reads was
            // cleared in the run: a waiting landing's send went out, its flag cleared, before it.
            for &i in s.sends.iter().chain(&s.waits) {
                let c = io.of_op[i].expect("a crossing step");
                if let Some(g) = io.links[c.link].gates(c.slot) {
                    if c.from == d {
                        g.send.clear();
                    } else {
                        g.land.clear();
                    }
                }
            }
            self.closed.extend(s.waits.iter().copied());
            self.early.watched += s.watching.len();
            self.early.ahead += s.ahead.len();
            for &i in &s.watching {
                let c = io.of_op[i].expect("a crossing step");
                io.links[c.link].clear_gave_up(c.slot);
            }
            let launched = launch(&mut io.parts[d], d, &s)?;
            let handed = launched
                .started
                .saturating_duration_since(self.t0)
                .as_secs_f64()
                * 1e6;
            let first = self.subs.len();
            for ops in s.passes {
                for &i in &ops {
                    self.pass_of[i] = self.subs.len();
                }
                self.subs.push(Sub {
                    device: d,
                    ops,
                    handed,
                    seen_done: f64::NAN,
                });
            }
            let flight = Flight {
                launched,
                reads: s.reads,
                waits: s.waits,
                watching: s.watching,
            };
            self.in_flight[d].push_back((flight, first..self.subs.len()));
        }
        Ok(())
    }

    /// Takes the completed submissions (oldest first per device; only the oldest one where `waited`
    /// blocked on it) with their counters to the machine, and starts the host copies it asks for.
    /// Whether anything completed.
    fn collect(
        &mut self,
        machine: &mut Machine,
        io: &mut Io,
        waited: bool,
        deadline: Instant,
    ) -> Result<bool> {
        let mut progressed = false;
        for (d, part) in io.parts.iter().enumerate() {
            while let Some((f, _)) = self.in_flight[d].front() {
                if !(waited || f.launched.is_done()) {
                    break;
                }
                let (mut f, k) = self.in_flight[d].pop_front().expect("front exists");
                let mut counters = Vec::new();
                if let Some(p) = f.launched.read.take() {
                    let bytes = part.gpu.await_read(p, deadline)?;
                    let vals = part.lowered.counter_values(&f.reads, &bytes);
                    counters = std::mem::take(&mut f.reads).into_iter().zip(vals).collect();
                }
                let done = self.now_us();
                for sub in &mut self.subs[k] {
                    sub.seen_done = done;
                }
                for &i in &f.waits {
                    let c = io.of_op[i].expect("a crossing step");
                    let g = io.links[c.link].gates(c.slot).expect("a gated link");
                    let landed = g.land.landed();
                    machine.waited(i, landed);
                    self.closed.retain(|&j| j != i);
                    if landed {
                        self.early.landed += 1;
                    } else {
                        self.early.gave_up += 1;
                    }
                }
                // A send whose wait ran out wrote nothing: it goes again as the host triggers it.
                for &i in &f.watching {
                    let c = io.of_op[i].expect("a crossing step");
                    if io.links[c.link].gave_up(c.slot) {
                        machine.resend(d, i);
                        self.early.watch_gave_up += 1;
                    }
                }
                if let Some(w) = self.waits.last_mut().filter(|w| w.0 == d && w.2.is_nan()) {
                    w.2 = done;
                }
                for i in machine.completed(d, counters) {
                    let c = io.of_op[i].expect("a send half crosses");
                    io.links[c.link].start(c.slot, c.bytes)?;
                    self.transfers.push(Transfer {
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
        Ok(progressed)
    }

    /// Raises the gates of the waiting landings whose chunks are written: their send kernels flagged
    /// them, or their senders' submissions completed. Whether any went up.
    fn raise(&mut self, machine: &Machine, io: &Io) -> bool {
        let before = self.closed.len();
        self.closed.retain(|&i| {
            let c = io.of_op[i].expect("a crossing step");
            let g = io.links[c.link].gates(c.slot).expect("a gated link");
            let written = g.send.flagged() || machine.landed(i);
            if written {
                g.land.raise();
            }
            !written
        });
        self.closed.len() < before
    }

    /// Hands the transfers whose both maps are in place to their link's copy lane (one per link: the
    /// directions copy side by side while the loop goes on), and lands those copied. Whether
    /// anything moved.
    fn copy(&mut self, machine: &mut Machine, io: &mut Io) -> Result<bool> {
        let mut progressed = false;
        // An engine link's transfer is the receiver's copy, ready once in the inbox: done there.
        let mut landed = Vec::new();
        for t in self.transfers.iter_mut().filter(|t| t.copying.is_none()) {
            let c = io.of_op[t.op].expect("a transfer crosses");
            if io.links[c.link].ready(io.gpus, c.slot)? {
                t.copying = Some(now_us(self.t0));
                if io.links[c.link].engine() {
                    landed.push((t.op, Ok(())));
                } else {
                    io.links[c.link].hand_over(c.slot, &mut io.lanes[c.link], t.op)?;
                }
                progressed = true;
            }
        }
        for lane in io.lanes.iter_mut() {
            landed.extend(lane.done());
        }
        for (i, result) in landed {
            let c = io.of_op[i].expect("a transfer crosses");
            io.links[c.link].copied(c.slot, result)?;
            let k = self
                .transfers
                .iter()
                .position(|t| t.op == i)
                .expect("a lane returns what it was handed");
            let t = self.transfers.swap_remove(k);
            let done = self.now_us();
            self.copies
                .push((i, t.started, t.copying.unwrap_or(t.started), done));
            machine.copied(i);
            progressed = true;
        }
        Ok(progressed)
    }
}

/// Records and launches submission `s` on device `d`: the device's reset before its first, the
/// chunks it receives landed, its passes, its sends drained, and its trackers gathered at the end of
/// the last pass (after a barrier wgpu puts before them) and read back with one copy.
fn launch(part: &mut Part, d: usize, s: &Submission) -> Result<Launched> {
    let l = &part.lowered;
    let mut commands = if s.first { l.reset() } else { Vec::new() };
    commands.extend(l.land(&s.receives));
    // The landings ahead and waiting go in the first pass, beside its GEMM work.
    commands.extend(s.passes.iter().enumerate().map(|(k, ops)| {
        let (waits, ahead): (&[usize], &[usize]) = if k == 0 {
            (&s.waits, &s.ahead)
        } else {
            (&[], &[])
        };
        let host = HostPass {
            waits,
            ahead,
            early: &s.early,
            watching: &s.watching,
        };
        Command::Pass(l.pass_handing(ops, StoreMode::Store, host))
    }));
    commands.extend(l.drain(&s.sends));
    if !s.reads.is_empty() {
        let (gather, read) = l.counters_of(&s.reads);
        if let Some(Command::Pass(p)) = commands
            .iter_mut()
            .rev()
            .find(|c| matches!(c, Command::Pass(_)))
        {
            p.dispatches.extend(gather);
        }
        commands.push(read);
    }
    part.exec.launch(
        &part.ranks,
        &part.lowered,
        &format!("host trigger submission on device {d}"),
        &commands,
    )
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
