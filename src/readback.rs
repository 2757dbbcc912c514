//! Readback: GPU buffers copied to the host through staging buffers that are kept and reused (one
//! pool per [`Gpu`]), every wait bounded.

use web_time::Instant;

use crate::error::{Error, Result};
use crate::gpu::Gpu;

type MapResult = std::result::Result<(), wgpu::BufferAsyncError>;
/// Where the map callback sends its result.
type MapReceiver = futures::channel::oneshot::Receiver<MapResult>;

impl Gpu {
    /// A MAP_READ | COPY_DST buffer of at least `bytes`, reused from finished readbacks where one fits;
    /// [`Gpu::map_staging`] hands it back.
    pub fn staging(&self, bytes: u64) -> wgpu::Buffer {
        let mut free = self.staging.lock().unwrap();
        let fit = free
            .iter()
            .enumerate()
            .filter(|(_, b)| b.size() >= bytes)
            .min_by_key(|(_, b)| b.size())
            .map(|(i, _)| i);
        match fit {
            Some(i) => free.swap_remove(i),
            None => self.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("t3 readback staging"),
                size: bytes.max(256).next_power_of_two(),
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            }),
        }
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
        let (tx, rx) = futures::channel::oneshot::channel();
        staging.map_async(wgpu::MapMode::Read, .., move |r| {
            let _ = tx.send(r);
        });
        self.wait(Some(idx), &format!("reading back {what}"), self.timeout)?;
        let result = self.map_result(what, rx)?;
        if let Err(e) = result {
            return Err(Error::Readback {
                what: what.to_string(),
                message: e.to_string(),
            });
        }
        let mut bytes = staging
            .get_mapped_range(..)
            .map_err(|e| Error::Readback {
                what: what.to_string(),
                message: e.to_string(),
            })?
            .to_vec();
        bytes.truncate(size as usize);
        staging.unmap();
        self.staging.lock().unwrap().push(staging);
        Ok(bytes)
    }

    /// The map callback's result once it has run, bounded.
    fn map_result(&self, what: &str, mut rx: MapReceiver) -> Result<MapResult> {
        let t0 = Instant::now();
        let timeout = || Error::Timeout {
            pending: format!("the map callback of {what}"),
            after: t0.elapsed(),
        };
        // Another thread's poll may be the one that runs our callback: wait for it, bounded.
        #[cfg(not(target_arch = "wasm32"))]
        let sent = loop {
            if let Some(r) = rx.try_recv().transpose() {
                break r;
            }
            if t0.elapsed() > self.timeout {
                return Err(timeout());
            }
            let _ = self.device.poll(wgpu::PollType::Poll);
            std::thread::sleep(std::time::Duration::from_micros(50));
        };
        // The browser runs the callback from its event loop: suspend (JSPI) until it has, or the bound.
        #[cfg(target_arch = "wasm32")]
        let sent = crate::suspend::with_timeout(&mut rx, self.timeout).ok_or_else(timeout)?;
        sent.map_err(|_| Error::Readback {
            what: what.to_string(),
            message: "the map callback was dropped unrun".to_string(),
        })
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
