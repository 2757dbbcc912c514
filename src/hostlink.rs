//! The link between two devices through the host: per direction, the sender's outbox and the receiver's
//! inbox (made once, reused by every step): one host allocation both bind, or the host's threaded copy.
//!
//! wgpu shares no buffer between devices, so host memory is the only path. Where both devices can import
//! host memory ([`Path::ZeroCopy`], [`shared`]) the outbox and the inbox are the same host bytes: the
//! sender's kernel writes them over its bus and the receiver's kernel reads them over its own, and the
//! host only orders the two. Otherwise the host copies, and where a device has
//! `MAPPABLE_PRIMARY_BUFFERS` the buffers the kernels use are the mapped ones ([`Path::Mapped`]): the
//! sender's step kernel writes the chunk straight into its outbox (`STORAGE | MAP_READ`, host memory), in
//! the pass with its GEMM work, and the receiver's kernels read the inbox (`STORAGE | MAP_WRITE`) that the
//! host filled in place. Without the feature ([`Path::Staged`]) each end adds a `copy_buffer_to_buffer`
//! through a reusable staging buffer, which the caller encodes with [`HostLink::encode_drain`] (sender,
//! after the step) and [`HostLink::encode_land`] (receiver, before the pass that reads the inbox); on the
//! mapped path both encode nothing.
//!
//! A transfer is [`HostLink::start`] (ask both maps), [`HostLink::ready`] (poll, never block) and
//! [`HostLink::finish`] (copy on a [`CopyPool`]'s threads over disjoint slices, unmap both), so a trigger loop can
//! decide other things while maps resolve; [`HostLink::transfer`] does the three with bounded waits.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;
use web_time::Instant;

use crate::devices::device;
use crate::error::{Error, Result};
use crate::gpu::Gpu;

pub mod calibration;
mod copy;
pub mod engine;
pub mod gates;
mod path;
pub mod polled;
pub mod shared;

pub use copy::{CopyLane, CopyPool, LaneDone, MAX_COPY_THREADS, MIN_BYTES_PER_THREAD};
pub use path::Path;

const IDLE: u32 = 0;
const PENDING: u32 = 1;
const MAPPED: u32 = 2;
const FAILED: u32 = 3;

/// How long a run's release of its links, or a transfer that gave up, waits for the engine copies
/// still in flight: past it a hung device's copy keeps its slot (the next start says so) rather
/// than the run waiting on it.
pub const SETTLE: Duration = Duration::from_secs(10);

/// One buffer the host maps, with the state its map callback leaves.
struct Mappable {
    buffer: wgpu::Buffer,
    /// Map generation << 2 | state: a callback of a cancelled map (which may run after a later map was
    /// asked) finds another generation and changes nothing.
    state: Arc<AtomicU32>,
}

impl Mappable {
    fn new(buffer: wgpu::Buffer) -> Self {
        Mappable {
            buffer,
            state: Arc::new(AtomicU32::new(IDLE)),
        }
    }

    fn map(&self, mode: wgpu::MapMode, bytes: u64) {
        let pending = (self.state.load(Ordering::Acquire) >> 2).wrapping_add(1) << 2 | PENDING;
        self.state.store(pending, Ordering::Release);
        let state = self.state.clone();
        self.buffer.map_async(mode, ..bytes, move |r| {
            let done = pending & !3 | if r.is_ok() { MAPPED } else { FAILED };
            let _ = state.compare_exchange(pending, done, Ordering::AcqRel, Ordering::Acquire);
        });
    }

    fn state(&self) -> u32 {
        self.state.load(Ordering::Acquire) & 3
    }

    /// Leaves the buffer unmapped whatever state it was in (a pending map is cancelled).
    fn reset(&self) {
        let s = self.state.load(Ordering::Acquire);
        if s & 3 != IDLE {
            self.buffer.unmap();
        }
        self.state.store(s & !3 | IDLE, Ordering::Release);
    }
}

/// One slot's buffers: a chunk in flight from the sender's outbox to the receiver's inbox.
struct Slot {
    /// On the sender: where the step kernel writes the chunk.
    outbox: wgpu::Buffer,
    /// On the sender: what the host maps for reading (the outbox itself, or its staging copy).
    read: Mappable,
    /// On the receiver: what the receiver's kernels read.
    inbox: wgpu::Buffer,
    /// On the receiver: what the host maps for writing (the inbox itself, or its staging copy).
    write: Mappable,
    /// Bytes of the transfer started on this slot.
    bytes: u64,
    /// Its gates for the flag handoff ([`HostLink::with_gates`]).
    gates: Option<gates::Gates>,
    /// The host memory a zero-copy or engine slot is (views: the sender's, the receiver's): on a
    /// zero-copy slot the host reads there the mark of a send the device triggered that gave up
    /// (its last 16 bytes, past every chunk); an engine slot's copies go through it.
    host: Option<shared::Shared>,
}

impl Slot {
    /// A slot over host memory `host` with these boxes, which the host never maps.
    fn over(outbox: wgpu::Buffer, inbox: wgpu::Buffer, host: shared::Shared) -> Slot {
        Slot {
            read: Mappable::new(outbox.clone()),
            write: Mappable::new(inbox.clone()),
            outbox,
            inbox,
            bytes: 0,
            gates: None,
            host: Some(host),
        }
    }
}

/// How long the two halves of one transfer took, on the host clock (for the timeline's host lanes).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TransferTimes {
    /// From asking both maps until both were mapped (includes the sender's submission finishing;
    /// an engine link: until its receiver's copy started).
    pub wait: Duration,
    /// The threaded copy and both unmaps (an engine link: its receiver's copy, until landed).
    pub copy: Duration,
}

/// The link in one direction between two devices: device `from` sends, device `to` receives; through
/// host memory both devices bind (zero-copy) or a host copy between their own mapped buffers.
pub struct HostLink {
    pub from: usize,
    pub to: usize,
    /// Bytes one slot carries at most.
    pub capacity: u64,
    /// How the sender's and the receiver's ends reach host memory.
    pub send: Path,
    pub recv: Path,
    slots: Vec<Slot>,
    /// On an engine link, its copier and where each slot's chunk is.
    engines: Option<engine::Engines>,
}

impl HostLink {
    /// Buffers for `slots` chunks in flight of at most `capacity` bytes from device `from` to device `to`.
    /// `want` is the path asked for: [`Path::ZeroCopy`] falls back to mapped where either device cannot
    /// import host memory, and mapped to staged at an end without the feature.
    pub fn new(
        gpus: &[Gpu],
        from: usize,
        to: usize,
        capacity: u64,
        slots: usize,
        want: Path,
    ) -> Result<Self> {
        let want = want.resolve(None);
        let (s, r) = (device(gpus, from)?, device(gpus, to)?);
        if from == to {
            return Err(Error::invalid(
                "host link",
                format!("device {from} to itself"),
                "between two different devices (ranks of one device share its memory)",
            ));
        }
        if capacity == 0 || !capacity.is_multiple_of(4) {
            return Err(Error::invalid(
                "host link capacity",
                capacity,
                "a positive multiple of 4 bytes",
            ));
        }
        if slots == 0 || slots > 64 {
            return Err(Error::invalid("host link slots", slots, "1 to 64"));
        }
        let (send, recv) = (Path::on(s, want), Path::on(r, want));
        // Zero-copy and engine only where both ends could also take the mapped path: the lowering
        // leaves out the staging copies on such devices, and those ends need none either.
        if (send, recv) == (Path::Mapped, Path::Mapped) {
            let made = match want {
                Path::ZeroCopy => {
                    zero_copy_slots(s, r, from, to, capacity, slots).map(|o| (o, None))
                }
                Path::Engine => engine::slots(s, r, from, to, capacity, slots)?,
                _ => None,
            };
            if let Some((out, engines)) = made {
                return Ok(HostLink {
                    from,
                    to,
                    capacity,
                    send: want,
                    recv: want,
                    slots: out,
                    engines,
                });
            }
        }
        use wgpu::BufferUsages as U;
        let mut out = Vec::with_capacity(slots);
        for i in 0..slots {
            let name = |what: &str| format!("host link {from}->{to} slot {i} {what}");
            let (outbox, read) = end(s, send, &name, "outbox", capacity, U::MAP_READ, U::COPY_DST)?;
            let (inbox, write) = end(r, recv, &name, "inbox", capacity, U::MAP_WRITE, U::COPY_SRC)?;
            out.push(Slot {
                outbox,
                read,
                inbox,
                write,
                bytes: 0,
                gates: None,
                host: None,
            });
        }
        Ok(HostLink {
            from,
            to,
            capacity,
            send,
            recv,
            slots: out,
            engines: None,
        })
    }

    pub fn slots(&self) -> usize {
        self.slots.len()
    }

    /// Whether both ends bind one host allocation (no host copy: a chunk is there once the sender's
    /// submission completed).
    pub fn zero_copy(&self) -> bool {
        self.send == Path::ZeroCopy
    }

    /// Whether the receiver lands each chunk by a copy of its own ([`Path::Engine`]): a transfer is
    /// [`HostLink::start`], then [`HostLink::ready`] until true, then [`HostLink::copied`] (no host
    /// copy, no lane).
    pub fn engine(&self) -> bool {
        self.engines.is_some()
    }

    /// Whether an engine link's receiver lands on its copy engine: false where it has no transfer
    /// queue and copies on its own (or the link is not an engine link).
    pub fn on_copy_engine(&self) -> bool {
        self.engines.as_ref().is_some_and(|e| e.on_copy_engine())
    }

    /// Clears the mark that a send the device triggers leaves in zero-copy slot `slot` if it gives
    /// up: before the submission that holds the send. No-op on a slot of another path.
    pub fn clear_gave_up(&self, slot: usize) {
        if let Some(p) = self.gave_up_word(slot).filter(|_| self.zero_copy()) {
            // SAFETY: inside the allocation (its last 16 bytes, 4-aligned); no device touches it
            // while no submission holding a send into this slot is in flight, which is when the
            // loop clears it.
            unsafe { p.write_volatile(0) };
        }
    }

    /// Whether the send the device triggered into zero-copy slot `slot` gave up (its wait ran out:
    /// it wrote nothing). Read once its submission completed.
    pub fn gave_up(&self, slot: usize) -> bool {
        // SAFETY: as in `clear_gave_up`; the submission that may have marked it completed.
        self.gave_up_word(slot)
            .is_some_and(|p| unsafe { p.read_volatile() } != 0)
    }

    fn gave_up_word(&self, slot: usize) -> Option<*mut u32> {
        let host = self.slots.get(slot)?.host.as_ref()?;
        let at = usize::try_from(self.capacity).ok()?.checked_sub(16)?;
        (at + 4 <= host.len()).then(|| host.host().wrapping_add(at).cast::<u32>())
    }

    /// This link with the flag handoff's gates on every slot ([`gates`]), where it is zero-copy and
    /// both devices can make them (else as it was: [`HostLink::gated`] says which).
    pub fn with_gates(mut self, gpus: &[Gpu]) -> Self {
        if !self.zero_copy() {
            return self;
        }
        let (s, r) = (&gpus[self.from], &gpus[self.to]);
        let made: Option<Vec<gates::Gates>> = (0..self.slots.len())
            .map(|i| gates::Gates::new(s, r, (self.from, self.to, i)))
            .collect();
        if let Some(made) = made {
            for (slot, g) in self.slots.iter_mut().zip(made) {
                slot.gates = Some(g);
            }
        }
        self
    }

    /// Whether every slot has its gates (the flag handoff can take this link).
    pub fn gated(&self) -> bool {
        self.slots.iter().all(|s| s.gates.is_some())
    }

    /// Slot `slot`'s gates (None: the link has none).
    pub fn gates(&self, slot: usize) -> Option<&gates::Gates> {
        self.slots.get(slot)?.gates.as_ref()
    }

    /// "zero-copy", "mapped" when both ends are, else which end is staged: what reports name as the link.
    pub fn describe(&self) -> String {
        match (self.send, self.recv) {
            (Path::ZeroCopy, _) => "zero-copy, host memory both devices bind".into(),
            (Path::Engine, _) => format!(
                "engine, host memory both devices bind, landed by the receiver's {}",
                if self.on_copy_engine() {
                    "copy engine"
                } else {
                    "own queue (no copy engine)"
                }
            ),
            (Path::Mapped, Path::Mapped) => "host-staged, mapped both ends".into(),
            (a, b) => format!("host-staged, sender {}, receiver {}", a.name(), b.name()),
        }
    }

    fn slot(&self, slot: usize) -> Result<&Slot> {
        self.slots.get(slot).ok_or_else(|| {
            Error::invalid(
                "host link slot",
                slot,
                format!("below the link's {} slots", self.slots.len()),
            )
        })
    }

    /// The buffer the sender's step kernel writes the chunk of `slot` into (bind it as the step's dst).
    pub fn outbox(&self, slot: usize) -> Result<&wgpu::Buffer> {
        Ok(&self.slot(slot)?.outbox)
    }

    /// The buffer the receiver's kernels read the chunk of `slot` from (bind it as a step's src).
    pub fn inbox(&self, slot: usize) -> Result<&wgpu::Buffer> {
        Ok(&self.slot(slot)?.inbox)
    }

    /// Slot `slot`'s buffers: (outbox, what the host maps to read it, inbox, what the host maps to
    /// write it); on a mapped end both are the same buffer.
    pub fn buffers(&self, slot: usize) -> Result<[&wgpu::Buffer; 4]> {
        let s = self.slot(slot)?;
        Ok([&s.outbox, &s.read.buffer, &s.inbox, &s.write.buffer])
    }

    fn check_bytes(&self, bytes: u64) -> Result<()> {
        if bytes == 0 || bytes > self.capacity || !bytes.is_multiple_of(4) {
            return Err(Error::invalid(
                "host link transfer",
                format!("{bytes} bytes"),
                format!(
                    "a positive multiple of 4 up to the link's capacity of {} bytes",
                    self.capacity
                ),
            ));
        }
        Ok(())
    }

    /// Staged sender only: copies the outbox to its staging buffer. Encode it on the sender after the pass
    /// that writes the outbox, in the same submission.
    pub fn encode_drain(
        &self,
        slot: usize,
        enc: &mut wgpu::CommandEncoder,
        bytes: u64,
    ) -> Result<()> {
        self.encode_staging(slot, enc, bytes, true)
    }

    /// Staged receiver only: copies the staging buffer the host filled into the inbox. Encode it on the
    /// receiver before the pass that reads the inbox.
    pub fn encode_land(
        &self,
        slot: usize,
        enc: &mut wgpu::CommandEncoder,
        bytes: u64,
    ) -> Result<()> {
        self.encode_staging(slot, enc, bytes, false)
    }

    fn encode_staging(
        &self,
        slot: usize,
        enc: &mut wgpu::CommandEncoder,
        bytes: u64,
        drain: bool,
    ) -> Result<()> {
        self.check_bytes(bytes)?;
        let s = self.slot(slot)?;
        let (path, src, dst) = if drain {
            (self.send, &s.outbox, &s.read.buffer)
        } else {
            (self.recv, &s.write.buffer, &s.inbox)
        };
        if path == Path::Staged {
            enc.copy_buffer_to_buffer(src, 0, dst, 0, bytes);
        }
        Ok(())
    }

    /// Asks for both maps of `slot` for a transfer of `bytes`. Submit the sender's work that writes the
    /// outbox first: the read map resolves when it completes, the write map when the receiver's last
    /// use of the inbox does. On an engine link it starts the receiver's copy at once: call it only
    /// once the sender's submission that wrote the chunk and the receiver's that last read the
    /// inbox both completed.
    pub fn start(&mut self, slot: usize, bytes: u64) -> Result<()> {
        self.check_bytes(bytes)?;
        let (from, to) = (self.from, self.to);
        if self.zero_copy() {
            return Err(Error::invalid(
                "host link transfer",
                format!("a host copy on the zero-copy link {from}->{to}"),
                "only on a host-staged link (a zero-copy chunk is in place once its sender's submission completed)",
            ));
        }
        let n = self.slots.len();
        let s = self.slots.get_mut(slot).ok_or_else(|| {
            Error::invalid(
                "host link slot",
                slot,
                format!("below the link's {n} slots"),
            )
        })?;
        if let Some(e) = &self.engines {
            e.start((from, to, slot), s, bytes)?;
            s.bytes = bytes;
            return Ok(());
        }
        if s.read.state() != IDLE || s.write.state() != IDLE {
            return Err(Error::invalid(
                "host link transfer",
                format!("slot {slot} of link {from}->{to} started twice"),
                "finished before its slot is started again",
            ));
        }
        s.bytes = bytes;
        s.read.map(wgpu::MapMode::Read, bytes);
        s.write.map(wgpu::MapMode::Write, bytes);
        Ok(())
    }

    /// Polls both devices once, without blocking; true when both maps of `slot` are in place (an
    /// engine link: its chunk is in the inbox).
    /// A lost device or a failed map is an error (and leaves the slot unmapped, ready to start again).
    pub fn ready(&self, gpus: &[Gpu], slot: usize) -> Result<bool> {
        let s = self.slot(slot)?;
        if let Some(e) = &self.engines {
            return e.ready((self.from, self.to, slot));
        }
        let (sg, rg) = (device(gpus, self.from)?, device(gpus, self.to)?);
        // Polled in a loop: the message is only formatted on an error.
        let during = || format!("host link {}->{} slot {slot}", self.from, self.to);
        for g in [sg, rg] {
            // A poll error is a lost device or an internal one: check() names which.
            if let Err(e) = g.device.poll(wgpu::PollType::Poll) {
                self.abandon(s);
                g.check(&during())?;
                return Err(Error::Gpu {
                    during: during(),
                    message: e.to_string(),
                });
            }
            if let Err(e) = g.check("a host link transfer") {
                self.abandon(s);
                return Err(e);
            }
        }
        let (a, b) = (s.read.state(), s.write.state());
        if a == FAILED || b == FAILED {
            self.abandon(s);
            let which = if a == FAILED {
                "outbox (read)"
            } else {
                "inbox (write)"
            };
            return Err(Error::Gpu {
                during: format!("mapping the {which} of {}", during()),
                message: "the map was refused (buffer destroyed, or its device lost)".into(),
            });
        }
        if a == IDLE || b == IDLE {
            return Err(Error::invalid(
                "host link transfer",
                format!(
                    "slot {slot} of link {}->{} polled before start",
                    self.from, self.to
                ),
                "started first",
            ));
        }
        Ok(a == MAPPED && b == MAPPED)
    }

    /// Leaves every slot unmapped and free, whatever an earlier run that failed left behind (an
    /// engine slot's copies still in flight waited for until `deadline`: one for all of a run's
    /// links, [`SETTLE`] from its release, so a hung device costs that once).
    pub fn release(&self, deadline: Instant) {
        for s in &self.slots {
            self.abandon(s);
        }
        for slot in 0..self.slots.len() {
            self.settle(slot, deadline);
        }
    }

    /// An engine slot's copy, waited for until `deadline` and the slot freed once it completed.
    fn settle(&self, slot: usize, deadline: Instant) {
        if let Some(e) = &self.engines {
            e.settle(slot, deadline);
        }
    }

    fn abandon(&self, s: &Slot) {
        s.read.reset();
        s.write.reset();
    }

    /// Copies the mapped chunk of `slot` on `pool`'s threads and unmaps both ends; call once
    /// [`HostLink::ready`] said true. Returns the time it took.
    pub fn finish(&self, slot: usize, pool: &mut CopyPool) -> Result<Duration> {
        let s = self.mapped(slot)?;
        let t0 = Instant::now();
        let copied = copy::copy_buffers(pool, &s.read.buffer, &s.write.buffer, s.bytes);
        self.copied(slot, copied)?;
        Ok(t0.elapsed())
    }

    /// Slot `slot`, both of whose ends are mapped, or an error.
    fn mapped(&self, slot: usize) -> Result<&Slot> {
        let s = self.slot(slot)?;
        if s.read.state() != MAPPED || s.write.state() != MAPPED {
            return Err(Error::invalid(
                "host link transfer",
                format!(
                    "slot {slot} of link {}->{} copied before both maps",
                    self.from, self.to
                ),
                "ready (both ends mapped) first",
            ));
        }
        Ok(s)
    }

    /// [`HostLink::finish`] off the caller's thread: hands the mapped chunk of `slot` to `lane` as
    /// copy `ticket` (call once [`HostLink::ready`] said true); when the lane returns the ticket,
    /// [`HostLink::copied`] unmaps both ends. The slot must not be touched meanwhile.
    pub fn hand_over(&self, slot: usize, lane: &mut CopyLane, ticket: usize) -> Result<()> {
        let s = self.mapped(slot)?;
        lane.start(ticket, &s.read.buffer, &s.write.buffer, s.bytes);
        Ok(())
    }

    /// Unmaps both ends of `slot` after its lane copy returned `result` (an error names the link);
    /// on an engine link, frees the slot its landed chunk held.
    pub fn copied(&self, slot: usize, result: std::result::Result<(), String>) -> Result<()> {
        self.abandon(self.slot(slot)?);
        if let Some(e) = &self.engines {
            e.copied((self.from, self.to, slot))?;
        }
        result.map_err(|message| Error::Gpu {
            during: format!(
                "host link {}->{} slot {slot}: the mapped ranges",
                self.from, self.to
            ),
            message,
        })
    }

    /// One whole transfer of `bytes` on `slot`: start, wait (bounded: the sender's submission `sent`,
    /// then both maps), copy on `pool`'s threads, unmap (an engine link: its receiver's copy, polled).
    /// Errors leave the slot reusable, but for an engine copy that outlasts its bounded wait.
    pub fn transfer(
        &mut self,
        gpus: &[Gpu],
        slot: usize,
        bytes: u64,
        sent: Option<wgpu::SubmissionIndex>,
        pool: &mut CopyPool,
    ) -> Result<TransferTimes> {
        let t0 = Instant::now();
        // An engine link's copy reads host memory the sender's submission writes: it starts only once
        // that submission completed (`sent` waited for below; without it, the caller waited).
        if !self.zero_copy() && !self.engine() {
            self.start(slot, bytes)?;
        }
        let sg = device(gpus, self.from)?;
        let bound = sg.timeout_for(0.0, 2.0 * bytes as f64);
        let pending = format!(
            "the host link {}->{} transfer of {bytes} bytes",
            self.from, self.to
        );
        if let Some(idx) = sent {
            if let Err(e) = sg.wait(Some(idx), &pending, bound) {
                self.abandon(self.slot(slot)?);
                return Err(e);
            }
        }
        // An engine link's copy is its transfer's copy: timed from its start.
        let copy_from = Instant::now();
        if self.engine() {
            self.start(slot, bytes)?;
        }
        if self.zero_copy() {
            self.check_bytes(bytes)?;
            self.slot(slot)?;
            return Ok(TransferTimes {
                wait: t0.elapsed(),
                copy: Duration::ZERO,
            });
        }
        while !self.ready(gpus, slot)? {
            if t0.elapsed() > bound {
                self.abandon(self.slot(slot)?);
                self.settle(slot, Instant::now() + SETTLE);
                return Err(Error::Timeout {
                    pending,
                    after: t0.elapsed(),
                });
            }
            std::thread::yield_now();
        }
        if self.engine() {
            self.copied(slot, Ok(()))?;
            return Ok(TransferTimes {
                wait: copy_from - t0,
                copy: copy_from.elapsed(),
            });
        }
        let wait = t0.elapsed();
        let copy = self.finish(slot, pool)?;
        Ok(TransferTimes { wait, copy })
    }
}

/// `slots` slots of `capacity` bytes, each one host allocation imported into sender `s` and receiver
/// `r`; None where either cannot import (the caller falls back to a host copy).
fn zero_copy_slots(
    s: &Gpu,
    r: &Gpu,
    from: usize,
    to: usize,
    capacity: u64,
    slots: usize,
) -> Option<Vec<Slot>> {
    (0..slots)
        .map(|i| {
            let label = format!("host link {from}->{to} slot {i} (zero-copy)");
            // SAFETY: the host trigger loop lets the receiver read a slot only after the sender's
            // submission that wrote it completed, and the sender write it again only after the
            // receiver's submission that read it completed (`Crossing::after`); calibration and tests
            // wait for each submission before the other device's.
            let mut host = unsafe { shared::import(&[&s.device, &r.device], &label, capacity) }?;
            let inbox = host.views.pop()?;
            let outbox = host.views.pop()?;
            Some(Slot::over(outbox, inbox, host))
        })
        .collect()
}

/// One end's buffers: the box the kernels bind (`what`) and what the host maps (`map`): the box itself on
/// the mapped path, else a staging buffer that `staging` lets the queue copy to or from.
fn end(
    gpu: &Gpu,
    path: Path,
    name: &dyn Fn(&str) -> String,
    what: &str,
    capacity: u64,
    map: wgpu::BufferUsages,
    staging: wgpu::BufferUsages,
) -> Result<(wgpu::Buffer, Mappable)> {
    use wgpu::BufferUsages as U;
    // COPY_SRC on the boxes lets tests and calibration read them back.
    Ok(match path {
        Path::Auto | Path::Mapped | Path::ZeroCopy | Path::Engine => {
            let b = gpu.buffer(&name(what), capacity, U::STORAGE | map | U::COPY_SRC)?;
            (b.clone(), Mappable::new(b))
        }
        Path::Staged => (
            gpu.buffer(
                &name(what),
                capacity,
                U::STORAGE | U::COPY_SRC | U::COPY_DST,
            )?,
            Mappable::new(gpu.buffer(
                &name(&format!("{what} staging")),
                capacity,
                map | staging,
            )?),
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn describes_its_paths() {
        assert_eq!(Path::Mapped.name(), "mapped");
        assert_eq!(serde_json::to_string(&Path::Staged).unwrap(), "\"staged\"");
        for p in Path::ALL {
            assert_eq!(p.name().parse::<Path>().unwrap(), p);
        }
    }
}
