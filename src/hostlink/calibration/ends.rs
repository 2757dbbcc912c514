//! A calibration's buffers on each device, and the receiver's half of a zero-copy transfer: its
//! landing kernel reading a slot out of host memory, submitted, waited for and checked.

use super::HostLink;
use crate::devices::Devices;
use crate::error::{Error, Result};
use crate::gpu::Gpu;
use crate::shaders::Put;
use crate::steps::{Link, StepKernel};
use crate::timestamps::{time_series, Timestamps};

/// One device's calibration buffers: the payload a sender's step kernel reads, the counters it binds
/// (never bumped), and where a receiver's step kernel puts a zero-copy chunk.
pub(super) struct Ends {
    pub(super) src: wgpu::Buffer,
    pub(super) counters: wgpu::Buffer,
    pub(super) landing: wgpu::Buffer,
}

/// The sender's half of one chunk: its step kernel writing one slot's outbox at the calibration's
/// budget, then (staged path) the drain to staging, as the trigger loop's send half does.
pub(super) struct StepWrite {
    bind: wgpu::BindGroup,
    n_wg: u32,
    slot: usize,
    bytes: u64,
}

impl StepWrite {
    /// The write of `bytes` from the sender's payload `src` into `slot` of `link`, binding `counters`
    /// (never bumped; a direction's own where several stream at once, as [`ZeroCopyRead::new`]).
    pub(super) fn new(
        sender: &Gpu,
        kernel: &StepKernel,
        (src, counters): (&wgpu::Buffer, &wgpu::Buffer),
        link: &HostLink,
        slot: usize,
        (bytes, step_link): (u64, Link),
    ) -> Result<Self> {
        let (bind, n_wg) = kernel.bind_standalone(
            sender,
            link.outbox(slot)?,
            src,
            counters,
            (bytes / 16) as u32,
            step_link,
        );
        Ok(StepWrite {
            bind,
            n_wg,
            slot,
            bytes,
        })
    }

    /// Encodes the write (its pass timestamped by `ts`) and the drain.
    pub(super) fn encode(
        &self,
        sender: &Gpu,
        kernel: &StepKernel,
        link: &HostLink,
        enc: &mut wgpu::CommandEncoder,
        ts: Option<wgpu::ComputePassTimestampWrites<'_>>,
    ) -> Result<()> {
        {
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("host link calibration write"),
                timestamp_writes: ts,
            });
            kernel.dispatch(sender, &mut pass, Put::Store, &self.bind, self.n_wg);
        }
        link.encode_drain(self.slot, enc, self.bytes)
    }

    /// The write submitted and waited for (bounded): seconds from encoding to completion, on the
    /// host clock (the table's figures are submit to completion, as the trigger loop waits).
    pub(super) fn time(&self, sender: &Gpu, kernel: &StepKernel, link: &HostLink) -> Result<f64> {
        let span = time_series(
            sender,
            &mut Timestamps::host_clock(),
            "the host link calibration's step",
            1,
            sender.timeout_for(0.0, 2.0 * self.bytes as f64),
            |enc, ts| self.encode(sender, kernel, link, enc, ts),
        )?[0];
        Ok((span.1 - span.0) / 1e6)
    }
}

/// The receiver's half of a zero-copy transfer: its step kernel reading one slot of the link out of
/// host memory into its landing buffer.
pub(super) struct ZeroCopyRead {
    to: usize,
    bind: wgpu::BindGroup,
    n_wg: u32,
    landing: wgpu::Buffer,
}

impl ZeroCopyRead {
    /// The read of `bytes` of `slot` of `link` into `landing` (on the receiver), binding `counters`
    /// (never bumped). A direction streamed beside others lands into buffers of its own: two reads or a read
    /// and a write binding one buffer would be ordered one after the other on the receiver.
    pub(super) fn new(
        devices: &Devices,
        kernels: &[StepKernel],
        (landing, counters): (&wgpu::Buffer, &wgpu::Buffer),
        link: &HostLink,
        (slot, bytes): (usize, u64),
    ) -> Self {
        // As the host loop lands a zero-copy chunk.
        let step_link = Link::Workgroups(crate::lower::HOST_LAND_WORKGROUPS);
        let to = link.to;
        let inbox = link.inbox(slot).expect("the link has the slot");
        let (bind, n_wg) = kernels[to].bind_standalone(
            &devices.gpus[to],
            landing,
            inbox,
            counters,
            (bytes.min(link.capacity).min(landing.size()) / 16) as u32,
            step_link,
        );
        ZeroCopyRead {
            to,
            bind,
            n_wg,
            landing: landing.clone(),
        }
    }

    pub(super) fn encode(
        &self,
        r: &Gpu,
        kernel: &StepKernel,
        enc: &mut wgpu::CommandEncoder,
        ts: Option<wgpu::ComputePassTimestampWrites<'_>>,
    ) {
        let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("zero-copy calibration read"),
            timestamp_writes: ts,
        });
        kernel.dispatch(r, &mut pass, Put::Store, &self.bind, self.n_wg);
    }

    /// The read, submitted and waited for (bounded): seconds from encoding to completion, on the
    /// host clock (as [`StepWrite::time`]).
    pub(super) fn time(
        &self,
        devices: &Devices,
        kernels: &[StepKernel],
        bytes: u64,
    ) -> Result<f64> {
        let r = &devices.gpus[self.to];
        let span = time_series(
            r,
            &mut Timestamps::host_clock(),
            "the zero-copy calibration's read",
            1,
            r.timeout_for(0.0, 2.0 * bytes as f64),
            |enc, ts| {
                self.encode(r, &kernels[self.to], enc, ts);
                Ok(())
            },
        )?[0];
        Ok((span.1 - span.0) / 1e6)
    }

    /// Poisons the landing's first `bytes` and the word after them (where it has one), so that
    /// [`ZeroCopyRead::check`] fails a read that wrote less or more than it was timed for.
    pub(super) fn poison(&self, devices: &Devices, bytes: u64) {
        let r = &devices.gpus[self.to];
        let len = (bytes + POISON_TAIL).min(self.landing.size());
        r.queue
            .write_buffer(&self.landing, 0, &vec![POISON; len as usize]);
    }

    /// Fails where the receiver's landing buffer does not hold `want`, or (after
    /// [`ZeroCopyRead::poison`]) the read wrote past its `bytes`.
    pub(super) fn check(&self, devices: &Devices, bytes: u64, want: &[u8]) -> Result<()> {
        let r = &devices.gpus[self.to];
        let len = (bytes + POISON_TAIL).min(self.landing.size());
        let got = r.read("the zero-copy calibration's landing", &self.landing, 0, len)?;
        let (got, tail) = got.split_at(bytes as usize);
        if tail.iter().any(|&b| b != POISON) {
            return Err(Error::Gpu {
                during: format!(
                    "checking the zero-copy read on device {} at {bytes} bytes",
                    self.to
                ),
                message: "the receiver's kernel wrote past the chunk it was timed for".into(),
            });
        }
        match got.iter().zip(want).position(|(g, w)| g != w) {
            Some(i) => Err(Error::Gpu {
                during: format!(
                    "checking the zero-copy read on device {} at {bytes} bytes",
                    self.to
                ),
                message: format!(
                    "what the receiver's kernel read differs from the payload at byte {i}"
                ),
            }),
            None => Ok(()),
        }
    }
}

/// What [`ZeroCopyRead::poison`] writes, and how far past the chunk.
const POISON: u8 = 0xFF;
const POISON_TAIL: u64 = 16;

/// A flag `gpu`'s queue sets once everything submitted so far completed (seen at its next poll).
pub(super) fn done_flag(gpu: &crate::gpu::Gpu) -> std::sync::Arc<std::sync::atomic::AtomicBool> {
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = done.clone();
    gpu.queue
        .on_submitted_work_done(move || flag.store(true, std::sync::atomic::Ordering::Release));
    done
}
