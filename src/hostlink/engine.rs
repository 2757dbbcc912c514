//! The engine link's receiving end: its slots (host memory both devices bind, an inbox in the
//! receiver's memory), where each slot's chunk is, and the copier landing it on the receiver's copy
//! engine (a transfer queue beside wgpu's, src/sidequeue.rs) where it offers one, else on wgpu's own
//! queue; each copy known by its ticket and polled (waited on, bounded, only when a link is released
//! before a run or a transfer gives up).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use web_time::Instant;

use super::{shared, Slot};
use crate::error::{Error, Result};
use crate::gpu::Gpu;
use crate::sidequeue::{Copy, Side, SideQueue};

/// Where one end's copies run.
pub enum Copier {
    /// A transfer queue: DMA beside the SMs and beside wgpu's queue.
    Engine(Box<SideQueue>),
    /// The device's own queue (no copy engine offered): each copy a submission of its own, ordered
    /// with the device's other work.
    Queue {
        device: wgpu::Device,
        queue: wgpu::Queue,
        /// Per ticket: None free, Some(flag) in flight (the flag set once it completed).
        flights: Vec<Option<Arc<AtomicBool>>>,
    },
}

impl Copier {
    /// A copier on `gpu` with `depth` copies in flight at most: the first of the transfer queues
    /// `sides` the device has, else its own queue.
    pub fn new(gpu: &Gpu, sides: &[Side], depth: usize) -> Self {
        match sides
            .iter()
            .find_map(|&side| SideQueue::new(&gpu.device, side, depth))
        {
            Some(q) => Copier::Engine(Box::new(q)),
            None => Copier::Queue {
                device: gpu.device.clone(),
                queue: gpu.queue.clone(),
                flights: vec![None; depth.max(1)],
            },
        }
    }

    /// Whether the copies run on a copy engine.
    pub fn engine(&self) -> bool {
        matches!(self, Copier::Engine(_))
    }

    /// Starts `copies` (one command buffer or submission); its ticket.
    pub fn copy(&mut self, copies: &[Copy<'_>]) -> Result<usize> {
        match self {
            Copier::Engine(q) => q.copy(copies),
            Copier::Queue {
                device,
                queue,
                flights,
            } => {
                let Some(ticket) = flights.iter().position(Option::is_none) else {
                    return Err(Error::invalid(
                        "link copies in flight",
                        flights.len() + 1,
                        format!("at most {}", flights.len()),
                    ));
                };
                let mut enc = device.create_command_encoder(&Default::default());
                for c in copies {
                    enc.copy_buffer_to_buffer(c.src, c.src_offset, c.dst, c.dst_offset, c.size);
                }
                queue.submit([enc.finish()]);
                let flag = Arc::new(AtomicBool::new(false));
                let f = flag.clone();
                queue.on_submitted_work_done(move || f.store(true, Ordering::Release));
                flights[ticket] = Some(flag);
                Ok(ticket)
            }
        }
    }

    /// Waits, until `deadline` at most, for copy `ticket` (errors and a copy that outlasts it are
    /// dropped: for a run that failed, whose link is released before the next).
    pub fn settle(&mut self, ticket: usize, deadline: Instant) {
        while !matches!(self.done(ticket), Ok(true) | Err(_)) && Instant::now() < deadline {
            std::thread::yield_now();
        }
    }

    /// Whether copy `ticket` completed (true where none is in flight under it); never blocks.
    pub fn done(&mut self, ticket: usize) -> Result<bool> {
        match self {
            Copier::Engine(q) => q.done(ticket),
            Copier::Queue {
                device, flights, ..
            } => {
                let Some(Some(flag)) = flights.get(ticket) else {
                    return Ok(true);
                };
                if !flag.load(Ordering::Acquire) {
                    device.poll(wgpu::PollType::Poll).map_err(|e| Error::Gpu {
                        during: "a link copy on the device's queue".into(),
                        message: e.to_string(),
                    })?;
                }
                let done = flag.load(Ordering::Acquire);
                if done {
                    flights[ticket] = None;
                }
                Ok(done)
            }
        }
    }
}

/// Where an engine slot's chunk is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Dma {
    Idle,
    /// The receiver's copy into its inbox in flight, under its ticket.
    Landing(usize),
    /// In the inbox.
    Landed,
}

/// An engine link's copier (the receiver's) and where each slot's chunk is, under one lock: a
/// slot's state changes only with its copy's.
pub(super) struct Engines(Mutex<Landing>);

struct Landing {
    copier: Copier,
    dma: Vec<Dma>,
}

/// (sending device, receiving device, slot): what an error names.
type At = (usize, usize, usize);

impl Engines {
    /// Whether the receiver lands on a copy engine (not its own queue).
    pub(super) fn on_copy_engine(&self) -> bool {
        self.lock().copier.engine()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Landing> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Starts landing slot `at`'s `bytes` (`s`'s host memory into its inbox): the sender's
    /// submission that wrote the chunk, and the receiver's that last read the inbox, completed.
    pub(super) fn start(&self, (from, to, slot): At, s: &Slot, bytes: u64) -> Result<()> {
        let mut l = self.lock();
        if l.dma[slot] != Dma::Idle {
            return Err(Error::invalid(
                "host link transfer",
                format!("slot {slot} of link {from}->{to} started twice"),
                "landed and copied before its slot is started again",
            ));
        }
        let host = s.host.as_ref().expect("an engine slot's host memory");
        let t = l.copier.copy(&[Copy {
            src: &host.views[1],
            src_offset: 0,
            dst: &s.inbox,
            dst_offset: 0,
            size: bytes,
        }])?;
        l.dma[slot] = Dma::Landing(t);
        Ok(())
    }

    /// Whether slot `at`'s chunk is in its inbox (polled, never blocking).
    pub(super) fn ready(&self, (from, to, slot): At) -> Result<bool> {
        let mut l = self.lock();
        if let Dma::Landing(t) = l.dma[slot] {
            if l.copier.done(t)? {
                l.dma[slot] = Dma::Landed;
            }
        }
        match l.dma[slot] {
            Dma::Idle => Err(Error::invalid(
                "host link transfer",
                format!("slot {slot} of link {from}->{to} polled before start"),
                "started first",
            )),
            d => Ok(d == Dma::Landed),
        }
    }

    /// Frees slot `at` once its landed chunk was read.
    pub(super) fn copied(&self, (from, to, slot): At) -> Result<()> {
        let mut l = self.lock();
        if l.dma[slot] != Dma::Landed {
            return Err(Error::invalid(
                "host link transfer",
                format!("slot {slot} of link {from}->{to} copied before it landed"),
                "ready first",
            ));
        }
        l.dma[slot] = Dma::Idle;
        Ok(())
    }

    /// Slot `slot`'s copy waited for until `deadline` and the slot freed once it completed; a
    /// copy that outlasts the wait keeps the slot, whose next start is then refused, naming it.
    pub(super) fn settle(&self, slot: usize, deadline: Instant) {
        let mut l = self.lock();
        if let Dma::Landing(t) = l.dma[slot] {
            l.copier.settle(t, deadline);
            if !matches!(l.copier.done(t), Ok(true)) {
                return;
            }
        }
        l.dma[slot] = Dma::Idle;
    }
}

/// `slots` engine slots of `capacity` bytes: each one host allocation imported into sender `s` and
/// receiver `r` (the sender's view its outbox) and an inbox in the receiver's memory, with the
/// receiver's copier (its links from even and odd senders on its two transfer queues where it has
/// two); None where either device cannot import.
pub(super) fn slots(
    s: &Gpu,
    r: &Gpu,
    from: usize,
    to: usize,
    capacity: u64,
    slots: usize,
) -> Result<Option<(Vec<Slot>, Option<Engines>)>> {
    use wgpu::BufferUsages as U;
    let mut out = Vec::with_capacity(slots);
    for i in 0..slots {
        let label = format!("host link {from}->{to} slot {i} (engine)");
        // SAFETY: the receiver's copy reads the host memory only once the sender's submission that
        // wrote it completed, and the sender writes it again only once the receiver's submission
        // that read the inbox (after the copy) completed (`Crossing::after`, as zero-copy).
        let Some(host) = (unsafe { shared::import(&[&s.device, &r.device], &label, capacity) })
        else {
            return Ok(None);
        };
        // COPY_SRC and COPY_DST on the inbox let tests and calibration fill and read it.
        let inbox = r.buffer(
            &format!("{label} inbox"),
            capacity,
            U::STORAGE | U::COPY_SRC | U::COPY_DST,
        )?;
        out.push(Slot::over(host.views[0].clone(), inbox, host));
    }
    // wgpu zeroes a buffer's bytes before the first pass that reads them unless it saw them
    // written, and it never sees a copy outside its queue: an inbox the copy engine filled would
    // be zeroed under the receiver's first read. Cleared once here, it counts as written for good.
    let mut enc = r.device.create_command_encoder(&Default::default());
    for x in &out {
        enc.clear_buffer(&x.inbox, 0, None);
    }
    let idx = r.submit("clearing the engine link's inboxes", vec![enc.finish()])?;
    r.wait(Some(idx), "clearing the engine link's inboxes", r.timeout)?;
    let sides = [Side::Transfer((from % 2) as u32), Side::Transfer(0)];
    let engines = Engines(Mutex::new(Landing {
        copier: Copier::new(r, &sides, slots),
        dma: vec![Dma::Idle; slots],
    }));
    Ok(Some((out, Some(engines))))
}

#[cfg(test)]
mod tests {
    use super::super::Path;

    #[test]
    fn auto_is_the_engine_link_for_the_direct_all_reduce_alone() {
        use crate::config::host::{Handoff, HostOptions, SendTrigger};
        use crate::config::Config;
        use crate::schedule::Collective;
        let of = |collective| Config {
            collective,
            ..Config::new(crate::shapes::Shape::new(64, 64, 64).unwrap(), 2)
        };
        let direct = of(Collective::DirectAllReduce);
        assert_eq!(Path::Auto.resolve(Some(&direct)), Path::Engine);
        for c in Collective::ALL
            .into_iter()
            .filter(|&c| c != Collective::DirectAllReduce)
        {
            assert_eq!(Path::Auto.resolve(Some(&of(c))), Path::ZeroCopy, "{c}");
        }
        // The flag handoff's gates and the device's watched sends are zero-copy links' alone.
        for host in [
            HostOptions {
                handoff: Some(Handoff::Flag),
                ..Default::default()
            },
            HostOptions {
                trigger: Some(SendTrigger::Device),
                ..Default::default()
            },
        ] {
            let c = Config {
                host,
                ..direct.clone()
            };
            assert_eq!(Path::Auto.resolve(Some(&c)), Path::ZeroCopy);
        }
        assert_eq!(Path::Auto.resolve(None), Path::ZeroCopy);
        assert_eq!(Path::Mapped.resolve(Some(&direct)), Path::Mapped);
        assert_eq!(Path::default(), Path::Auto);
    }
}
