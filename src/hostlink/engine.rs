//! The engine link's copier: one end's copies between its device memory and the link's host memory,
//! on the device's copy engine (a transfer queue beside wgpu's, src/sidequeue.rs) where it offers
//! one, else on wgpu's own queue; each copy known by its ticket and polled, never waited on.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

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

    /// Waits, at most `bound`, for copy `ticket` (errors and a copy that outlasts it are dropped:
    /// for a run that failed, whose link is released before the next).
    pub fn settle(&mut self, ticket: usize, bound: std::time::Duration) {
        let t0 = web_time::Instant::now();
        while !matches!(self.done(ticket), Ok(true) | Err(_)) && t0.elapsed() < bound {
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
