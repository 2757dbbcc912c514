//! The links streamed as the host trigger loop drives them: slots per direction and submissions
//! queued per device (by default [`STREAM_SLOTS`] and [`crate::modes::IN_FLIGHT`]), each poll's
//! submission on a device holding a write and a landing (zero-copy) of each of its directions in one
//! pass, the sender's kernel writing one slot while an earlier slot's chunk is copied (a host copy's
//! lane) or landed.

use web_time::Instant;

use super::ends::{done_flag, Ends, StepWrite, ZeroCopyRead};
use super::{check_arrived, HostLink, Path};
use crate::devices::Devices;
use crate::error::{Error, Result};
use crate::executor::record_one_pass;
use crate::steps::{Link, StepKernel};

/// Least slots per streamed direction (it streams through twice the submissions queued per device,
/// up to the trigger loop's `MAX_SLOTS`). A chunk is landed only once the submission that wrote it
/// completed, and its slot written again only once the landing's submission completed; with two
/// submissions queued per device a landing goes with the write two or three chunks later, so four
/// slots let every submission hold both (two let a device's submissions alternate between writes and
/// landings, and run them in passes of their own).
pub(super) const STREAM_SLOTS: usize = 4;

/// Largest chunk of the streamed measurement (it also stays within the largest calibrated size).
pub(super) const STREAM_CHUNK: u64 = 64 << 20;

/// How [`stream`] drives the links.
pub(super) struct StreamOptions {
    pub(super) bytes: u64,
    pub(super) chunks: usize,
    pub(super) threads: usize,
    /// Submissions queued per device.
    pub(super) in_flight: usize,
    /// Slots per direction.
    pub(super) slots: usize,
    pub(super) step_link: Link,
    pub(super) want: Path,
}

/// Where one slot of a streamed direction is: free, encoded into this poll's submission, being
/// written by the sender's kernel (then, on a host-copy link, mapped and copied by the lane), or, on
/// a zero-copy link, being read by the receiver's kernel; the flag is its submission's completion.
pub(super) enum SlotState {
    Free,
    Encoded,
    Written(std::sync::Arc<std::sync::atomic::AtomicBool>),
    Copying,
    Read(std::sync::Arc<std::sync::atomic::AtomicBool>),
}

/// One direction's state while streaming.
pub(super) struct Streamed<'a> {
    link: HostLink,
    lane: crate::hostlink::CopyLane,
    /// The sender's write of each slot.
    writes: Vec<StepWrite<'a>>,
    /// On a zero-copy link: the receiver's read of each slot.
    reads: Vec<ZeroCopyRead<'a>>,
    sent: usize,
    arrived: usize,
    /// Slots written, oldest first.
    waiting: std::collections::VecDeque<usize>,
    slots: Vec<SlotState>,
    done_at: Option<Instant>,
}

impl<'a> Streamed<'a> {
    /// Direction `(from, to)`'s link, its slots' writes and (zero-copy) reads, and its copy lane.
    fn new(
        devices: &'a Devices,
        kernels: &'a [StepKernel],
        ends: &[Ends],
        (from, to): (usize, usize),
        opts: &StreamOptions,
    ) -> Result<Self> {
        let bytes = opts.bytes;
        let link = HostLink::new(&devices.gpus, from, to, bytes, opts.slots, opts.want)?;
        let mut writes = Vec::new();
        let mut reads = Vec::new();
        // Buffers of the direction's own, as each step of a collective binds its own, and counters
        // per slot (never bumped, but bound read-write: one buffer would order two slots' sends,
        // which submissions in flight together may hold; a poll encodes one landing per direction
        // at most, so the slots' landings share the landing buffer, in queue order).
        use wgpu::BufferUsages as U;
        let counters =
            |g: usize| devices.gpus[g].buffer("streamed calibration counters", 16, U::STORAGE);
        let landing = if link.zero_copy() {
            let usage = U::STORAGE | U::COPY_SRC;
            Some(devices.gpus[to].buffer("streamed calibration landing", bytes, usage)?)
        } else {
            None
        };
        for slot in 0..opts.slots {
            writes.push(StepWrite::new(
                (&devices.gpus[from], &kernels[from]),
                (&ends[from].src, &counters(from)?),
                &link,
                slot,
                (bytes, opts.step_link),
            )?);
            if let Some(landing) = &landing {
                reads.push(ZeroCopyRead::new(
                    devices,
                    kernels,
                    (landing, &counters(to)?),
                    &link,
                    (slot, bytes, opts.step_link),
                )?);
            }
        }
        Ok(Streamed {
            link,
            lane: crate::hostlink::CopyLane::new(opts.threads)?,
            writes,
            reads,
            sent: 0,
            arrived: 0,
            waiting: Default::default(),
            slots: (0..opts.slots).map(|_| SlotState::Free).collect(),
            done_at: None,
        })
    }
}

impl Streamed<'_> {
    /// Frees the slots whose chunks arrived (copied by the host, landed by the receiver's copy or
    /// read by its kernel), counting them, and notes when the `chunks`-th arrived.
    fn collect_arrivals(&mut self, devices: &Devices, chunks: usize) -> Result<()> {
        let mut arrived = Vec::new();
        for (slot, r) in self.lane.done() {
            self.link.copied(slot, r)?;
            arrived.push(slot);
        }
        for slot in 0..self.slots.len() {
            if matches!(&self.slots[slot], SlotState::Read(f) if is_set(f)) {
                arrived.push(slot);
            }
            if self.link.engine()
                && matches!(self.slots[slot], SlotState::Copying)
                && self.link.ready(&devices.gpus, slot)?
            {
                self.link.copied(slot, Ok(()))?;
                arrived.push(slot);
            }
        }
        for slot in arrived {
            self.slots[slot] = SlotState::Free;
            self.arrived += 1;
            if self.arrived == chunks {
                self.done_at = Some(Instant::now());
            }
        }
        Ok(())
    }
}

/// What a poll encoded for a slot, on which device.
enum Started {
    Write(usize),
    Read(usize),
}

impl Started {
    fn device(&self) -> usize {
        let (Started::Write(g) | Started::Read(g)) = self;
        *g
    }
}

/// Encodes one device's part of a poll (`mine`: direction, slot, what) into `enc`: the sends' and
/// reads' kernels in one pass, as the trigger loop puts a device's steps beside each other (in
/// passes of their own the GPU may run them one after the other), then the sends' drains (staged).
fn encode(
    state: &mut [Streamed],
    mine: &[&(usize, usize, Started)],
    enc: &mut wgpu::CommandEncoder,
) -> Result<()> {
    let has = |d: usize, slot: usize, write: bool| {
        mine.iter()
            .any(|x| (x.0, x.1, matches!(x.2, Started::Write(_))) == (d, slot, write))
    };
    let mut parts = Vec::new();
    for (d, s) in state.iter_mut().enumerate() {
        for (slot, w) in s.writes.iter_mut().enumerate() {
            if has(d, slot, true) {
                parts.push(w.part());
            }
        }
        for (slot, r) in s.reads.iter_mut().enumerate() {
            if has(d, slot, false) {
                parts.push(r.part());
            }
        }
    }
    record_one_pass(enc, "host link streamed calibration", &mut parts, None)?;
    for &&(d, slot, ref what) in mine {
        if let Started::Write(_) = what {
            state[d].writes[slot].drain(&state[d].link, enc)?;
        }
    }
    Ok(())
}

pub(super) fn is_set(flag: &std::sync::atomic::AtomicBool) -> bool {
    flag.load(std::sync::atomic::Ordering::Acquire)
}

/// Streams `opts.chunks` chunks over every direction of `dirs` at once, `opts.slots` slots per
/// direction, as the trigger loop runs them: the sender's step kernel writes the next chunk while the
/// direction's copy lane copies an earlier one (or, zero-copy, while the receiver's kernel reads it),
/// a write and a landing per direction and poll, at most `opts.in_flight` submissions queued per
/// device. GB/s per direction, from the first submission to its last chunk arrived; the payload is
/// checked in every receiver after.
pub(super) fn stream(
    devices: &Devices,
    kernels: &[StepKernel],
    ends: &[Ends],
    dirs: &[(usize, usize)],
    opts: &StreamOptions,
    payload: &[u8],
) -> Result<Vec<f64>> {
    let bytes = opts.bytes;
    let mut state = dirs
        .iter()
        .map(|&dir| Streamed::new(devices, kernels, ends, dir, opts))
        .collect::<Result<Vec<_>>>()?;
    // Host-driven, not a timed series: submissions interleave with copy threads and device polls.
    let all = (opts.chunks * dirs.len()) as f64 * bytes as f64;
    let bound = devices.gpus[0].timeout_for(0.0, 4.0 * all);
    let t0 = Instant::now();
    // Each device's submissions not yet seen complete.
    let mut in_flight: Vec<Vec<std::sync::Arc<std::sync::atomic::AtomicBool>>> =
        vec![Vec::new(); devices.len()];
    let result = (|| -> Result<()> {
        while state.iter().any(|s| s.arrived < opts.chunks) {
            if t0.elapsed() > bound {
                return Err(Error::Timeout {
                    pending: "the host link's streamed calibration".into(),
                    after: t0.elapsed(),
                });
            }
            for g in &devices.gpus {
                g.device
                    .poll(wgpu::PollType::Poll)
                    .map_err(|e| Error::Gpu {
                        during: "the host link's streamed calibration".into(),
                        message: e.to_string(),
                    })?;
            }
            // One submission per device and poll: a device's sends and reads in one command buffer
            // share no buffer, so they may run side by side, where separate submissions would be
            // ordered one after the other on its queue. A device with `in_flight` submissions
            // queued takes nothing new.
            in_flight.iter_mut().for_each(|q| q.retain(|f| !is_set(f)));
            let open = |g: usize| in_flight[g].len() < opts.in_flight;
            let mut started: Vec<(usize, usize, Started)> = Vec::new();
            for (d, (s, &(from, to))) in state.iter_mut().zip(dirs).enumerate() {
                let next = s.sent % opts.slots;
                if s.sent < opts.chunks && open(from) && matches!(s.slots[next], SlotState::Free) {
                    let slot = next;
                    s.slots[slot] = SlotState::Encoded;
                    started.push((d, slot, Started::Write(from)));
                    s.waiting.push_back(slot);
                    s.sent += 1;
                }
                if let Some(&slot) = s.waiting.front() {
                    if s.link.zero_copy() && !open(to) {
                        // The receiver's queue is full: its landing waits for a later poll.
                    } else if s.link.zero_copy() {
                        // Written once the sender's submission completed: the receiver reads it.
                        if matches!(&s.slots[slot], SlotState::Written(f) if is_set(f)) {
                            s.slots[slot] = SlotState::Encoded;
                            started.push((d, slot, Started::Read(to)));
                            s.waiting.pop_front();
                        }
                    } else if s.link.engine() {
                        // Written once the sender's submission completed: the receiver's copy
                        // lands it (arriving below).
                        if matches!(&s.slots[slot], SlotState::Written(f) if is_set(f)) {
                            s.link.start(slot, bytes)?;
                            s.slots[slot] = SlotState::Copying;
                            s.waiting.pop_front();
                        }
                    } else if matches!(s.slots[slot], SlotState::Written(_))
                        && s.link.ready(&devices.gpus, slot)?
                    {
                        s.link.hand_over(slot, &mut s.lane, slot)?;
                        s.slots[slot] = SlotState::Copying;
                        s.waiting.pop_front();
                    }
                }
            }
            let mut flags = Vec::new();
            for (g, gpu) in devices.gpus.iter().enumerate() {
                let mine: Vec<_> = started.iter().filter(|x| x.2.device() == g).collect();
                if mine.is_empty() {
                    flags.push(None);
                    continue;
                }
                let mut enc = gpu.device.create_command_encoder(&Default::default());
                encode(&mut state, &mine, &mut enc)?;
                gpu.submit("host link streamed calibration", vec![enc.finish()])?;
                let flag = done_flag(gpu);
                in_flight[g].push(flag.clone());
                flags.push(Some(flag));
            }
            for (d, slot, what) in started {
                let s = &mut state[d];
                let flag = flags[what.device()].clone().expect("its device submitted");
                s.slots[slot] = match what {
                    Started::Write(_) => {
                        if !s.link.zero_copy() && !s.link.engine() {
                            s.link.start(slot, bytes)?;
                        }
                        SlotState::Written(flag)
                    }
                    Started::Read(_) => SlotState::Read(flag),
                };
            }
            for s in state.iter_mut() {
                s.collect_arrivals(devices, opts.chunks)?;
            }
            std::thread::yield_now();
        }
        Ok(())
    })();
    if result.is_err() {
        // A copy still running writes into a mapping: let it end before the links drop.
        let settle = Instant::now() + crate::hostlink::SETTLE;
        for s in &mut state {
            s.lane.drain();
            s.link.release(settle);
        }
    }
    result?;
    let mut gbps = Vec::new();
    for s in &mut state {
        let secs = s.done_at.map_or(f64::NAN, |t| (t - t0).as_secs_f64());
        gbps.push(opts.chunks as f64 * bytes as f64 / secs.max(1e-9) / 1e9);
        let last = (opts.chunks - 1) % opts.slots;
        let want = &payload[..bytes as usize];
        check_arrived(devices, &s.link, last, bytes, want)?;
        if let Some(read) = s.reads.get(last) {
            read.check(devices, bytes, want)?;
        }
    }
    Ok(gbps)
}
