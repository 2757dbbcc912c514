//! The trigger loop's decisions as a state machine, with no GPU in it.
//!
//! Completed submissions (with the counters they read back) and landed host copies go in;
//! submissions (which GEMM work and steps go on which device, what they land, send and read back)
//! and host copies to start come out. The driver (mod.rs) makes the wgpu calls and waits, so every
//! ordering rule here is tested on the CPU (machine/tests.rs).

use std::collections::{HashMap, HashSet, VecDeque};

use super::rules::{chunk_waves, feeds, met, ready, wanted};
use crate::config::host::HostGrain;
use crate::error::{Error, Result};
use crate::lower::{Crossing, HostLinks};
use crate::placement::Placement;
use crate::plan::{Kind, Loc, Plan};

/// When steps may go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gate {
    /// As soon as their inputs' counters reach their marks (host mode: T3's trigger), GEMM work
    /// going out at the grain given.
    Tracked(HostGrain),
    /// Only once every GEMM on every device completed (sequential mode on several devices).
    AfterGemms,
}

/// A step a submission sends: the dependencies its counters proved complete, and the ops it waited
/// for otherwise (queued before it, or its link slot's previous user).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Release {
    pub op: usize,
    pub tracked: Vec<usize>,
    pub held: Vec<usize>,
}

/// One submission decided for one device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Submission {
    /// The device's first of the run: it resets the device's trackers before anything else.
    pub first: bool,
    /// Receive halves of steps between devices: their chunks land before the passes, and the first
    /// pass runs them.
    pub receives: Vec<usize>,
    /// Those of `receives` whose chunks a waiting landing already brought: no landing of their own.
    pub early: Vec<usize>,
    /// Waiting landings (the flag handoff): chunks of gated links whose send halves are out but not
    /// yet seen complete, landed in the first pass beside its GEMM work (after its sends) once the
    /// host raises their gates.
    pub waits: Vec<usize>,
    /// Landings ahead (with `watch`): chunks already in host memory whose receive halves cannot go
    /// yet, landed in the first pass beside its GEMM work; the receive half only puts.
    pub ahead: Vec<usize>,
    /// Its passes' plan ops in order: the GEMM work, receive halves and tracked steps first, then the
    /// steps that follow others queued before them.
    pub passes: Vec<Vec<usize>>,
    /// The send halves it runs (also in `passes`): their chunks leave once it completes.
    pub sends: Vec<usize>,
    /// Those of `sends` that wait in the kernel for the GEMM work of the first pass making their
    /// chunks (`--host-loop trigger=device`): in the first pass too.
    pub watching: Vec<usize>,
    /// The trackers its readback holds, in order.
    pub reads: Vec<Loc>,
    /// The steps it sends, with what released each.
    pub released: Vec<Release>,
}

/// What the machine keeps of a submission in flight until it completes.
struct Flight {
    sends: Vec<usize>,
    receives: Vec<usize>,
    ahead: Vec<usize>,
    gemm: bool,
}

/// How a chunk's waiting landing (the flag handoff) stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Early {
    None,
    /// Queued (waiting at its gate, or ahead), its submission not yet complete.
    Waiting,
    /// Its submission completed with every workgroup landed: the receive half only puts.
    Landed,
}

/// The loop's state: the counters last read back, every op's progress and each device's queue.
pub struct Machine<'a> {
    plan: &'a Plan,
    placement: &'a Placement,
    links: &'a HostLinks,
    gate: Gate,
    depth: usize,
    /// Whether sends go with the GEMM work making their chunks, waiting in the kernel for its
    /// counters (`HostLinks::watched`).
    watch: bool,
    /// The last GEMM stage.
    last_stage: usize,
    /// GEMM ops by device, as the submissions they go in.
    gemm_stages: Vec<VecDeque<Vec<usize>>>,
    gemm_flights_left: usize,
    counters: HashMap<Loc, u32>,
    /// Steps (or their send halves) submitted; crossing steps landed and received.
    sent: Vec<bool>,
    landed: Vec<bool>,
    received: Vec<bool>,
    /// Receive halves whose submission completed: a zero-copy slot's bytes are read by then.
    consumed: Vec<bool>,
    /// Each crossing step's waiting landing, where the flag handoff queued one.
    early: Vec<Early>,
    /// Ops whose work on their own device is still to be submitted.
    left: usize,
    started: Vec<bool>,
    in_flight: Vec<VecDeque<Flight>>,
}

impl<'a> Machine<'a> {
    /// The loop's start for `plan` placed by `placement` over `links`, with `stages` GEMM stages
    /// (`Lowered::stages`) and at most `depth` submissions queued per device; `watch`: sends go
    /// with the GEMM work making their chunks, where they can (the device's trigger).
    pub fn new(
        plan: &'a Plan,
        placement: &'a Placement,
        links: &'a HostLinks,
        stages: usize,
        (gate, depth, watch): (Gate, usize, bool),
    ) -> Self {
        let devices = placement.devices();
        let n = plan.ops.len();
        // Device d's GEMM ops, of stage `s` or (None) of every stage, in plan order.
        let gemm_of = |d: usize, s: Option<usize>| -> Vec<usize> {
            (0..n)
                .filter(|&i| {
                    let o = &plan.ops[i];
                    o.kind == Kind::Gemm
                        && s.is_none_or(|s| o.stage == s)
                        && placement.device(o.dst.rank) == d
                })
                .collect()
        };
        // Tracked, a stage a submission (at chunk grain, a chunk per rank at a time); gated on every
        // GEMM, a device's GEMM whole in one submission (sequential's baseline: no drain per stage).
        let gemm_stages: Vec<VecDeque<Vec<usize>>> = (0..devices)
            .map(|d| {
                let waves: Vec<Vec<usize>> = match gate {
                    Gate::Tracked(g) => (0..=stages)
                        .flat_map(|s| {
                            let ops = gemm_of(d, Some(s));
                            match g.chunks_per_submission() {
                                Some(per) => chunk_waves(plan, ops, per),
                                None => vec![ops],
                            }
                        })
                        .collect(),
                    Gate::AfterGemms => vec![gemm_of(d, None)],
                };
                waves.into_iter().filter(|ops| !ops.is_empty()).collect()
            })
            .collect();
        Machine {
            plan,
            placement,
            links,
            gate,
            depth,
            watch: watch && matches!(gate, Gate::Tracked(_)),
            last_stage: stages.saturating_sub(1),
            gemm_flights_left: gemm_stages.iter().map(|s| s.len()).sum(),
            gemm_stages,
            counters: HashMap::new(),
            sent: vec![false; n],
            landed: vec![false; n],
            received: vec![false; n],
            consumed: vec![false; n],
            early: vec![Early::None; n],
            left: n,
            started: vec![false; devices],
            in_flight: (0..devices).map(|_| VecDeque::new()).collect(),
        }
    }

    fn crossing(&self, i: usize) -> Option<Crossing> {
        self.links.of_op[i]
    }

    fn device_of(&self, rank: usize) -> usize {
        self.placement.device(rank)
    }

    /// Where an op starts: its device, or a crossing step's sender.
    fn starts_on(&self, i: usize) -> usize {
        self.crossing(i)
            .map_or(self.device_of(self.plan.ops[i].dst.rank), |c| c.from)
    }

    /// Where an op's result lands: its device, or the receiver.
    fn lands_on(&self, i: usize) -> usize {
        self.crossing(i)
            .map_or(self.device_of(self.plan.ops[i].dst.rank), |c| c.to)
    }

    /// Where op i waits for dependency `dep`: a step between devices waits for what feeds it on the
    /// sender (its send half) and for the rest on the receiver (its receive half).
    fn waits_on(&self, i: usize, dep: usize) -> usize {
        match self.crossing(i) {
            Some(c) if !feeds(self.plan, i, dep) => c.to,
            _ => self.starts_on(i),
        }
    }

    /// A dependency of op i met by queue order: a step (never a GEMM: what GEMMs produce is
    /// tracked) whose last part is already queued where op i waits for it.
    fn queued(&self, i: usize, dep: usize) -> bool {
        self.plan.ops[dep].kind != Kind::Gemm
            && self.lands_on(dep) == self.waits_on(i, dep)
            && if self.crossing(dep).is_some() {
                self.received[dep]
            } else {
                self.sent[dep]
            }
    }

    /// Whether sends may wait for their GEMM work in the kernel in this run.
    pub fn watches(&self) -> bool {
        self.watch && (0..self.plan.ops.len()).any(|i| self.watched(i).is_some())
    }

    /// The GEMM op whose counter step i's send waits for in the kernel, where it may.
    fn watched(&self, i: usize) -> Option<usize> {
        self.links.watched(i, self.watch)
    }

    fn zero_copy(&self, c: Crossing) -> bool {
        self.links.links[c.link].zero_copy
    }

    /// The steps (or send halves) device `d` may take now.
    fn pick(&self, d: usize, steps_open: bool) -> Vec<usize> {
        if !steps_open {
            return Vec::new();
        }
        ready(
            self.plan,
            &self.counters,
            &self.sent,
            |i, dep| self.crossing(i).is_none() || feeds(self.plan, i, dep),
            |i, dep| self.queued(i, dep),
        )
        .into_iter()
        .filter(|&i| self.starts_on(i) == d)
        .filter(|&i| self.slot_free(i))
        .collect()
    }

    /// Whether op i's link slot (a crossing step's) is free: once the step before it on that slot
    /// was received: its receive half submitted (a host copy's write map waits for that
    /// submission), or, on a zero-copy link, whose bytes the sender writes in place, and on an
    /// engine link, whose inbox a copy outside the receiver's queue writes, completed.
    fn slot_free(&self, i: usize) -> bool {
        self.crossing(i).is_none_or(|c| {
            c.after.is_none_or(|a| {
                let l = &self.links.links[c.link];
                self.received[a] && (self.consumed[a] || !(l.zero_copy || l.engine))
            })
        })
    }

    /// Receive halves device `d` may take now: those whose chunk landed (in host memory and no
    /// waiting landing still out for it, or landed here by one) and whose destination is ready for
    /// it (its own GEMM tiles tracked, the steps before it there met or queued).
    fn receivable(&self, d: usize) -> Vec<usize> {
        (0..self.plan.ops.len())
            .filter(|&i| match self.early[i] {
                Early::None => self.landed[i],
                Early::Waiting => false,
                Early::Landed => true,
            })
            .filter(|&i| !self.received[i])
            .filter(|&i| self.crossing(i).is_some_and(|c| c.to == d))
            .filter(|&i| {
                self.plan.ops[i].deps.iter().all(|&dep| {
                    feeds(self.plan, i, dep)
                        || met(self.plan, &self.counters, dep)
                        || self.queued(i, dep)
                })
            })
            .collect()
    }

    /// Chunks device `d` may land ahead, waiting, beside GEMM work (the flag handoff): those of its
    /// gated links whose send halves are out and not yet seen complete. Their senders' submissions
    /// are all queued before this one, so no landing waits on work queued behind itself, nor on a
    /// slot's flag its previous chunk left (the send's submission clears it); and a landing waiting
    /// for a send not yet out would hold its submission open past its GEMM work until the sender's
    /// earlier work completed (BENCHMARKS.md, "The flag handoff").
    fn waitable(&self, d: usize) -> Vec<usize> {
        (0..self.plan.ops.len())
            .filter(|&i| {
                self.crossing(i)
                    .is_some_and(|c| c.to == d && self.links.links[c.link].gated)
            })
            .filter(|&i| self.sent[i] && !self.landed[i] && self.early[i] == Early::None)
            .collect()
    }

    /// Chunks device `d` may land ahead beside GEMM work (with `watch`): on zero-copy links to `d`,
    /// in host memory, not yet received (nor now, by `receives` of the same submission): their
    /// destinations wait for GEMM work, which the chunk need not wait for.
    fn landable(&self, d: usize) -> Vec<usize> {
        if !self.watch {
            return Vec::new();
        }
        (0..self.plan.ops.len())
            .filter(|&i| {
                self.crossing(i)
                    .is_some_and(|c| c.to == d && self.zero_copy(c))
            })
            .filter(|&i| self.landed[i] && !self.received[i] && self.early[i] == Early::None)
            .collect()
    }

    /// Whether step `op`'s chunk is in its link's host memory, its sender's submission completed.
    pub fn landed(&self, op: usize) -> bool {
        self.landed[op]
    }

    /// The waiting landing of `op` completed: with every workgroup `landed`, or not (it gave up: the
    /// chunk lands as without the handoff). Before [`Machine::completed`] of its submission.
    pub fn waited(&mut self, op: usize, landed: bool) {
        debug_assert_eq!(self.early[op], Early::Waiting);
        if landed {
            self.early[op] = Early::Landed;
            self.consumed[op] = true;
        } else {
            self.early[op] = Early::None;
        }
    }

    /// Without GEMM work to ride with, a submission carries at most one of `ops` (send halves, or
    /// receive halves) per link: each chunk's host copy then starts once its own send is written,
    /// not once every ready send is (sequential's collective, host mode's last steps). A receive
    /// half whose chunk a landing ahead brought reads no host memory: it is not counted.
    fn one_per_link(&self, gemm: bool, used: &mut HashSet<usize>, steps: Vec<usize>) -> Vec<usize> {
        if gemm {
            return steps;
        }
        steps
            .into_iter()
            .filter(|&i| {
                self.early[i] == Early::Landed
                    || self.crossing(i).is_none_or(|c| used.insert(c.link))
            })
            .collect()
    }

    /// What released step i: the dependencies its counters proved complete, and the ops it waited
    /// for otherwise (queue order, its link slot's previous user).
    fn release(&self, i: usize) -> Release {
        let (tracked, held): (Vec<usize>, Vec<usize>) = self.plan.ops[i]
            .deps
            .iter()
            .filter(|&&dep| self.crossing(i).is_none() || feeds(self.plan, i, dep))
            .partition(|&&dep| met(self.plan, &self.counters, dep));
        let held = held
            .into_iter()
            .chain(self.crossing(i).and_then(|c| c.after))
            .collect();
        Release {
            op: i,
            tracked,
            held,
        }
    }

    /// Whether device `d` keeps its last GEMM work back until the GEMM work it has in flight
    /// completes: where that work feeds sends from `d` not yet out (their slots free), they could
    /// go beside no GEMM work once the last is queued, only alone after it, and a send's time is
    /// the bus's (it hides under GEMM work in its pass, not beside it in the queue). Holding costs
    /// the device one host round trip idle, and whatever else was ready for it then (receive
    /// halves, other sends) waits with it, to go beside the last stage's GEMM work; on one device
    /// (no crossing steps) nothing is held.
    /// Likewise it waits for a chunk another device sends beside the GEMM work of a stage before
    /// its last that makes it (queued, not yet landed) on an ungated link, to land it beside its
    /// own last GEMM work rather than after (a gated link's waiting landing goes beside it anyway);
    /// the chunk's submission is already queued, so the wait ends. A chunk made in the sender's
    /// last stage could not be in host memory before this device's last stage without it idling.
    fn holds_last_gemm(&self, d: usize) -> bool {
        if !matches!(self.gate, Gate::Tracked(_)) || self.gemm_stages[d].len() != 1 {
            return false;
        }
        let landing_soon = (0..self.plan.ops.len()).any(|i| {
            self.watched(i)
                .is_some_and(|g| self.plan.ops[g].stage < self.last_stage)
                && self
                    .crossing(i)
                    .is_some_and(|c| c.to == d && !self.links.links[c.link].gated)
                && self.sent[i]
                && !self.landed[i]
        });
        if landing_soon {
            return true;
        }
        if !self.in_flight[d].iter().any(|f| f.gemm) {
            return false;
        }
        let queued = |g: usize| !self.gemm_stages[d].iter().flatten().any(|&p| p == g);
        // A send that only GEMM work already queued feeds, some of it not yet seen complete.
        (0..self.plan.ops.len()).any(|i| {
            let mut fed = self.plan.ops[i]
                .deps
                .iter()
                .filter(|&&dep| feeds(self.plan, i, dep));
            !self.sent[i]
                && self.crossing(i).is_some_and(|c| c.from == d)
                && self.slot_free(i)
                && fed
                    .clone()
                    .all(|&dep| self.plan.ops[dep].kind == Kind::Gemm && queued(dep))
                && fed.any(|&dep| !met(self.plan, &self.counters, dep))
        })
    }

    /// The next submission for device `d`, taken as made (None: its queue is full or nothing can go):
    /// the next GEMM work with every step the latest counters allow, then, in later passes, the steps
    /// that only wait for steps queued before them.
    pub fn next(&mut self, d: usize) -> Option<Submission> {
        if self.in_flight[d].len() >= self.depth || self.holds_last_gemm(d) {
            return None;
        }
        let steps_open = matches!(self.gate, Gate::Tracked(_)) || self.gemm_flights_left == 0;
        let gemm = self.gemm_stages[d].pop_front();
        let is_gemm = gemm.is_some();
        // Without GEMM work a submission also lands at most one chunk per link: the rest land in the
        // next submissions, each beside the send that waited for the one before (one landing and
        // one send a pass, reading and writing host memory at once), not all before any send.
        let receives = self.one_per_link(is_gemm, &mut HashSet::new(), self.receivable(d));
        let mut wave = gemm.unwrap_or_default();
        self.left -= wave.len();
        // The sends that wait in the kernel for this GEMM work go with it, in its pass.
        let watching: Vec<usize> = (0..self.plan.ops.len())
            .filter(|&i| !self.sent[i] && self.watched(i).is_some_and(|g| wave.contains(&g)))
            .collect();
        for &i in &watching {
            self.sent[i] = true;
        }
        wave.extend(&watching);
        let mut links_used = HashSet::new();
        let mut steps = self.one_per_link(is_gemm, &mut links_used, self.pick(d, steps_open));
        for &i in &receives {
            self.received[i] = true;
            self.left -= 1;
        }
        wave.extend(receives.iter().copied());
        if wave.is_empty() && steps.is_empty() {
            return None;
        }
        let (waits, ahead) = if is_gemm {
            (self.waitable(d), self.landable(d))
        } else {
            (Vec::new(), Vec::new())
        };
        for &i in waits.iter().chain(&ahead) {
            self.early[i] = Early::Waiting;
        }
        let early = receives
            .iter()
            .copied()
            .filter(|&i| self.early[i] == Early::Landed)
            .collect();
        let mut passes: Vec<Vec<usize>> = Vec::new();
        let mut sends: Vec<usize> = watching.clone();
        let mut released: Vec<Release> = Vec::new();
        loop {
            released.extend(steps.iter().map(|&i| self.release(i)));
            for &i in &steps {
                self.sent[i] = true;
                match self.crossing(i) {
                    Some(_) => sends.push(i),
                    None => self.left -= 1,
                }
            }
            wave.extend(steps);
            passes.push(wave);
            steps = self.one_per_link(is_gemm, &mut links_used, self.pick(d, steps_open));
            if !is_gemm {
                // A send between devices that waits on this submission's own work goes first in the
                // next one, beside whatever lands there (one landing per link, above), rather than
                // after a barrier here: a pass that reads host memory and writes it moves both
                // directions of the device's bus at once.
                steps.retain(|&i| self.crossing(i).is_none());
            }
            if steps.is_empty() {
                break;
            }
            wave = Vec::new();
        }
        let first = !self.started[d];
        self.started[d] = true;
        let reads = self.reads(d, &passes);
        self.in_flight[d].push_back(Flight {
            sends: sends.clone(),
            receives: receives.clone(),
            ahead: ahead.clone(),
            gemm: is_gemm,
        });
        Some(Submission {
            first,
            receives,
            early,
            waits,
            ahead,
            passes,
            sends,
            watching,
            reads,
            released,
        })
    }

    /// The trackers a submission of `passes` on device `d` reads back: only those its own ops bump.
    /// Safe because every writer of a tracker (a GEMM, a step, a crossing step's receive half) runs
    /// on the tracker's own device, in queue order, and the submission holding op X (or X's receive
    /// half) reads X's counter while every step tracking X is still open (unsent, or its receive
    /// half not out): the half that waits for X cannot go before that counter is seen, so it is
    /// still `wanted` here if any step will ever want it (that set only shrinks). So a counter
    /// changes only with the ops that bump it, the first readback after them sees it, and a tracker
    /// left out here has nothing new to show. A tracker per op, not every tracker still wanted:
    /// fewer gather dispatches, each behind a barrier.
    fn reads(&self, d: usize, passes: &[Vec<usize>]) -> Vec<Loc> {
        let bumped: HashSet<Loc> = passes
            .iter()
            .flatten()
            .filter(|&&i| self.crossing(i).is_none_or(|c| c.to == d))
            .map(|&i| self.plan.ops[i].dst)
            .collect();
        // A step between devices stays open until its receive half is out.
        let open = |i: usize| !self.sent[i] || (self.crossing(i).is_some() && !self.received[i]);
        wanted(self.plan, &self.counters, open, |i, dep| {
            self.queued(i, dep)
        })
        .into_iter()
        .filter(|loc| self.device_of(loc.rank) == d && bumped.contains(loc))
        .collect()
    }

    /// Device `d`'s oldest submission completed, its readback holding `counters`. Returns the send
    /// halves whose host copies start now; a zero-copy link's chunk is in host memory already, where
    /// the receiver reads it: it lands here, and only here, once its sender's submission completed.
    pub fn completed(
        &mut self,
        d: usize,
        counters: impl IntoIterator<Item = (Loc, u32)>,
    ) -> Vec<usize> {
        let f = self.in_flight[d]
            .pop_front()
            .expect("a completed submission was queued");
        self.counters.extend(counters);
        if f.gemm {
            self.gemm_flights_left -= 1;
        }
        for &i in &f.receives {
            self.consumed[i] = true;
        }
        for &i in &f.ahead {
            self.early[i] = Early::Landed;
            self.consumed[i] = true;
        }
        let mut copies = Vec::new();
        for &i in &f.sends {
            let c = self.crossing(i).expect("a send half crosses");
            if self.zero_copy(c) {
                self.landed[i] = true;
            } else {
                copies.push(i);
            }
        }
        copies
    }

    /// The send of `op` waited for its GEMM's counter on device `d` and gave up, writing nothing:
    /// it goes again as the host triggers it. Before [`Machine::completed`] of its submission.
    pub fn resend(&mut self, d: usize, op: usize) {
        let f = self.in_flight[d]
            .front_mut()
            .expect("a completed submission was queued");
        debug_assert!(f.sends.contains(&op));
        f.sends.retain(|&i| i != op);
        self.sent[op] = false;
    }

    /// The host copy of step `op` (one [`Machine::completed`] started) wrote the receiver's inbox.
    pub fn copied(&mut self, op: usize) {
        self.landed[op] = true;
    }

    /// Once nothing is in flight: an error if any op never went (no step became ready).
    pub fn finish(&self) -> Result<()> {
        if self.left > 0 {
            return Err(Error::Gpu {
                during: "host trigger loop".into(),
                message: format!(
                    "no step became ready but {} ops remain; trackers {:?}",
                    self.left, self.counters
                ),
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
