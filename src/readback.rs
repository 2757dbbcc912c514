//! Readback: GPU buffers copied to the host through staging buffers that are kept and reused (one
//! capped pool per [`Gpu`]), every wait bounded.

use web_time::Instant;

use crate::error::{Error, Result};
use crate::gpu::Gpu;

type MapResult = std::result::Result<(), wgpu::BufferAsyncError>;

use crate::staging::StagingPool;
pub use crate::staging::{STAGING_BUDGET, STAGING_PER_SIZE};

// The pool keeps a counters' readback per queued submission of the host trigger loop.
const _: () = assert!(STAGING_PER_SIZE == crate::config::host::MAX_IN_FLIGHT);

/// A readback whose staging buffer was asked to map: [`Gpu::try_read`] or [`Gpu::await_read`]
/// collects it.
pub struct PendingRead {
    what: String,
    staging: wgpu::Buffer,
    size: u64,
    /// Whether the buffer goes back to the pool once read (false: its owner keeps it).
    pooled: bool,
    /// Where the map callback sends its result.
    rx: futures::channel::oneshot::Receiver<MapResult>,
}

impl Gpu {
    /// A MAP_READ | COPY_DST buffer of at least `bytes`, reused from finished readbacks where one of
    /// its size class is kept; [`Gpu::map_staging`] hands it back.
    pub fn staging(&self, bytes: u64) -> wgpu::Buffer {
        let kept = self.staging.lock().unwrap().take(bytes);
        kept.unwrap_or_else(|| {
            self.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("t3 readback staging"),
                size: StagingPool::<wgpu::Buffer>::class(bytes),
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            })
        })
    }

    /// Sizes of the free staging buffers the pool keeps, oldest returned first.
    pub fn staging_kept(&self) -> Vec<u64> {
        self.staging.lock().unwrap().sizes()
    }

    /// Encodes copies of `spans` (buffer, byte offset, bytes: each a multiple of 4), one after
    /// another, into a staging buffer; [`Gpu::map_staging`] returns their bytes once submitted.
    pub fn encode_read(
        &self,
        enc: &mut wgpu::CommandEncoder,
        spans: &[(&wgpu::Buffer, u64, u64)],
    ) -> (wgpu::Buffer, u64) {
        let total: u64 = spans.iter().map(|s| s.2).sum();
        let staging = self.staging(total.max(4));
        let mut at = 0;
        for &(src, offset, bytes) in spans {
            enc.copy_buffer_to_buffer(src, offset, &staging, at, bytes);
            at += bytes;
        }
        (staging, total)
    }

    /// Copies `spans` to the host after what `enc` holds: submits and returns their bytes (bounded
    /// wait).
    pub fn read_spans(
        &self,
        what: &str,
        mut enc: wgpu::CommandEncoder,
        spans: &[(&wgpu::Buffer, u64, u64)],
    ) -> Result<Vec<u8>> {
        let (staging, total) = self.encode_read(&mut enc, spans);
        let idx = self.submit(&format!("reading back {what}"), vec![enc.finish()])?;
        self.map_staging(what, staging, idx, total)
    }

    /// Copies `size` bytes at `offset` of `src` to a staging buffer, maps it (bounded wait) and returns the bytes.
    pub fn read(&self, what: &str, src: &wgpu::Buffer, offset: u64, size: u64) -> Result<Vec<u8>> {
        let enc = self.device.create_command_encoder(&Default::default());
        let size4 = size.next_multiple_of(4).max(4);
        let mut bytes = self.read_spans(what, enc, &[(src, offset, size4)])?;
        bytes.truncate(size as usize);
        Ok(bytes)
    }

    /// Maps a buffer from [`Gpu::staging`] once `idx` completes, returns its first `size` bytes and
    /// keeps the buffer for the next readback.
    pub fn map_staging(
        &self,
        what: &str,
        staging: wgpu::Buffer,
        idx: wgpu::SubmissionIndex,
        size: u64,
    ) -> Result<Vec<u8>> {
        let pending = self.map_later(what, staging, size);
        self.wait(Some(idx), &format!("reading back {what}"), self.timeout)?;
        self.await_read(pending, Instant::now() + self.timeout)
    }

    /// Asks for a buffer from [`Gpu::staging`] to be mapped once the work that fills it completes,
    /// without waiting: the host trigger loop decides while the GPU runs and collects the bytes with
    /// [`Gpu::try_read`] once a poll has run the map callback.
    pub fn map_later(&self, what: &str, staging: wgpu::Buffer, size: u64) -> PendingRead {
        Self::map_read(what, staging, size, true)
    }

    /// [`Gpu::map_later`] for a MAP_READ buffer its owner keeps (a timer's readback): once read it
    /// is unmapped, not pooled.
    pub fn map_owned(&self, what: &str, buffer: &wgpu::Buffer, size: u64) -> PendingRead {
        Self::map_read(what, buffer.clone(), size, false)
    }

    fn map_read(what: &str, staging: wgpu::Buffer, size: u64, pooled: bool) -> PendingRead {
        let (tx, rx) = futures::channel::oneshot::channel();
        staging.map_async(wgpu::MapMode::Read, .., move |r| {
            let _ = tx.send(r);
        });
        PendingRead {
            what: what.to_string(),
            staging,
            size,
            pooled,
            rx,
        }
    }

    /// The bytes of `p` if its map callback has run (the staging buffer then goes back to the pool),
    /// else `p` itself, still pending. Polls nothing.
    pub fn try_read(
        &self,
        mut p: PendingRead,
    ) -> Result<std::result::Result<Vec<u8>, PendingRead>> {
        let result = match p.rx.try_recv() {
            Ok(Some(r)) => r,
            Ok(None) => return Ok(Err(p)),
            Err(_) => {
                return Err(Error::Readback {
                    what: p.what,
                    message: "the map callback was dropped unrun".to_string(),
                })
            }
        };
        self.collect(p, result).map(Ok)
    }

    /// The bytes of `p` once its map callback has run, or a timeout at `deadline`: natively by
    /// polling the device without blocking on the queue (another thread's poll may be the one that
    /// runs the callback); in the browser, which runs the callback from its event loop, by
    /// suspending (JSPI) until it has.
    pub fn await_read(&self, p: PendingRead, deadline: Instant) -> Result<Vec<u8>> {
        let t0 = Instant::now();
        let timeout = |what: &str| Error::Timeout {
            pending: format!("the map callback of {what}"),
            after: t0.elapsed(),
        };
        #[cfg(not(target_arch = "wasm32"))]
        {
            let mut p = p;
            loop {
                p = match self.try_read(p)? {
                    Ok(bytes) => return Ok(bytes),
                    Err(p) => p,
                };
                if Instant::now() > deadline {
                    return Err(timeout(&p.what));
                }
                let _ = self.device.poll(wgpu::PollType::Poll);
                // Yield for the first millisecond (a sleep costs ~60 µs here), then sleep: the
                // trigger loop awaits reads of submissions it saw complete, whose callbacks run at
                // the next poll or so; a read awaited right after its submission (timestamps.rs)
                // spends that millisecond yielding, then waits for the GPU in the sleeps.
                if t0.elapsed() < std::time::Duration::from_millis(1) {
                    std::thread::yield_now();
                } else {
                    std::thread::sleep(std::time::Duration::from_micros(50));
                }
            }
        }
        #[cfg(target_arch = "wasm32")]
        {
            let mut p = p;
            let left = deadline.saturating_duration_since(Instant::now());
            let sent =
                crate::suspend::with_timeout(&mut p.rx, left).ok_or_else(|| timeout(&p.what))?;
            let result = sent.map_err(|_| Error::Readback {
                what: p.what.clone(),
                message: "the map callback was dropped unrun".to_string(),
            })?;
            self.collect(p, result)
        }
    }

    /// The mapped bytes of `p` after its callback gave `result`; the staging buffer goes back to the
    /// pool.
    fn collect(&self, p: PendingRead, result: MapResult) -> Result<Vec<u8>> {
        if let Err(e) = result {
            return Err(Error::Readback {
                what: p.what,
                message: e.to_string(),
            });
        }
        let mut bytes = p
            .staging
            .get_mapped_range(..)
            .map_err(|e| Error::Readback {
                what: p.what.clone(),
                message: e.to_string(),
            })?
            .to_vec();
        bytes.truncate(p.size as usize);
        p.staging.unmap();
        if p.pooled {
            self.staging.lock().unwrap().keep(p.staging);
        }
        Ok(bytes)
    }

    /// Reads back `len` f32 values.
    pub fn read_f32(
        &self,
        what: &str,
        src: &wgpu::Buffer,
        offset: u64,
        len: usize,
    ) -> Result<Vec<f32>> {
        let b = self.read(what, src, offset, (len * 4) as u64)?;
        Ok(bytemuck::pod_collect_to_vec(&b))
    }

    /// Reads back `len` u32 values.
    pub fn read_u32(
        &self,
        what: &str,
        src: &wgpu::Buffer,
        offset: u64,
        len: usize,
    ) -> Result<Vec<u32>> {
        let b = self.read(what, src, offset, (len * 4) as u64)?;
        Ok(bytemuck::pod_collect_to_vec(&b))
    }
}
