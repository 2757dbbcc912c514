//! A calibration's buffers on each device, and its two step halves, each lowered by core and bound
//! once by an executor of its own over the link slot it names and the device's shared buffers: the
//! sender's write of a slot's outbox, and the receiver's zero-copy read of a slot's inbox (submitted,
//! waited for and checked).

use std::collections::HashMap;

use super::HostLink;
use crate::devices::Devices;
use crate::error::{Error, Result};
use crate::executor::{Executor, Handed, KernelSet, Part};
use crate::gpu::Gpu;
use crate::lower::{lower_step, End, LinkBox, StepEnd, StepLowering, StepSpec};
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

/// The one link a calibration step's lowering names, and slot `slot`'s `end` of it.
fn slot_box(slot: usize, end: End) -> LinkBox {
    LinkBox { link: 0, slot, end }
}

/// Step `spec` (one end a link slot's, the other a pool buffer) lowered and bound on `gpu` (as
/// device `device`), handed its link slot `link`, and `own` and `counters` for its pool end and
/// counters: the calibration shares them between its steps.
fn bound<'a>(
    (gpu, device, kernel): (&'a Gpu, usize, &'a StepKernel),
    spec: &StepSpec,
    link: (LinkBox, &wgpu::Buffer),
    (own, counters): (&wgpu::Buffer, &wgpu::Buffer),
) -> Result<(Executor<'a>, StepLowering)> {
    let step = lower_step(spec, crate::executor::step_target(gpu, device));
    let pool = [(step.src, own), (step.dst, own), (step.counters, counters)]
        .into_iter()
        .filter(|(b, _)| matches!(b, crate::lower::Buffer::Pool(_)))
        .collect();
    let handed = Handed {
        links: HashMap::from([(link.0, link.1.clone())]),
        pool,
    };
    let exec = Executor::pooled(gpu, KernelSet::Step(kernel), &step.lowered, handed)?;
    Ok((exec, step))
}

/// Encodes `step`'s one recording through `exec`, its pass timestamped by `ts`.
fn record(
    exec: &mut Executor,
    step: &StepLowering,
    enc: &mut wgpu::CommandEncoder,
    ts: Option<wgpu::ComputePassTimestampWrites<'_>>,
) -> Result<()> {
    let rec = step.recording(0, 0);
    exec.record(enc, &step.lowered, rec.label, &rec.commands, ts)
}

/// The sender's half of one chunk: its step kernel writing one slot's outbox at the calibration's
/// budget, then (staged path) the drain to staging, as the trigger loop's send half does.
pub(super) struct StepWrite<'a> {
    gpu: &'a Gpu,
    exec: Executor<'a>,
    step: StepLowering,
    slot: usize,
    bytes: u64,
}

impl<'a> StepWrite<'a> {
    /// The write of `bytes` from the sender's payload `src` into `slot` of `link`, binding `counters`
    /// (never bumped; a direction's own where several stream at once, as [`ZeroCopyRead::new`]).
    pub(super) fn new(
        (sender, kernel): (&'a Gpu, &'a StepKernel),
        (src, counters): (&wgpu::Buffer, &wgpu::Buffer),
        link: &HostLink,
        slot: usize,
        (bytes, step_link): (u64, Link),
    ) -> Result<Self> {
        let outbox = slot_box(slot, End::Outbox);
        let spec = StepSpec {
            label: "host link calibration write",
            dst: StepEnd::Link(outbox),
            src: StepEnd::Pool,
            bytes,
            puts: &[Put::Store],
            links: &[step_link],
        };
        let on = (sender, link.from, kernel);
        let (exec, step) = bound(on, &spec, (outbox, link.outbox(slot)?), (src, counters))?;
        Ok(StepWrite {
            gpu: sender,
            exec,
            step,
            slot,
            bytes,
        })
    }

    /// Encodes the write (its pass timestamped by `ts`) and the drain.
    pub(super) fn encode(
        &mut self,
        link: &HostLink,
        enc: &mut wgpu::CommandEncoder,
        ts: Option<wgpu::ComputePassTimestampWrites<'_>>,
    ) -> Result<()> {
        record(&mut self.exec, &self.step, enc, ts)?;
        self.drain(link, enc)
    }

    /// The drain to staging on the staged path (nothing elsewhere).
    pub(super) fn drain(&self, link: &HostLink, enc: &mut wgpu::CommandEncoder) -> Result<()> {
        link.encode_drain(self.slot, enc, self.bytes)
    }

    /// The write submitted and waited for (bounded): seconds from encoding to completion, on the
    /// host clock (the table's figures are submit to completion, as the trigger loop waits).
    pub(super) fn time(&mut self, link: &HostLink) -> Result<f64> {
        let (gpu, bytes) = (self.gpu, self.bytes);
        timed(gpu, "the host link calibration's step", bytes, |enc, ts| {
            self.encode(link, enc, ts)
        })
    }

    /// The write as one executor's part of a pass shared with others (zero-copy: no drain).
    pub(super) fn part(&mut self) -> Part<'_, 'a> {
        part(&mut self.exec, &self.step)
    }
}

/// `step`'s one recording through `exec`, as a part of a shared pass.
fn part<'p, 'a>(exec: &'p mut Executor<'a>, step: &'p StepLowering) -> Part<'p, 'a> {
    Part {
        exec,
        lowered: &step.lowered,
        commands: &step.recording(0, 0).commands,
    }
}

/// What `record` encodes, submitted and waited for (bounded by `bytes`' time at a slow bus): seconds
/// from encoding to completion on the host clock, as the trigger loop waits for a submission.
pub(super) fn timed(
    gpu: &Gpu,
    what: &str,
    bytes: u64,
    record: impl FnMut(
        &mut wgpu::CommandEncoder,
        Option<wgpu::ComputePassTimestampWrites<'_>>,
    ) -> Result<()>,
) -> Result<f64> {
    timed_with(gpu, what, (0.0, bytes), record)
}

/// As [`timed`], for work that also computes `flops` (its wait bounded by both).
pub(super) fn timed_with(
    gpu: &Gpu,
    what: &str,
    (flops, bytes): (f64, u64),
    record: impl FnMut(
        &mut wgpu::CommandEncoder,
        Option<wgpu::ComputePassTimestampWrites<'_>>,
    ) -> Result<()>,
) -> Result<f64> {
    let bound = gpu.timeout_for(flops, 2.0 * bytes as f64);
    let span = time_series(gpu, &mut Timestamps::host_clock(), what, 1, bound, record)?[0];
    Ok((span.1 - span.0) / 1e6)
}

/// The receiver's half of a zero-copy transfer: its step kernel reading one slot of the link out of
/// host memory into its landing buffer.
pub(super) struct ZeroCopyRead<'a> {
    to: usize,
    exec: Executor<'a>,
    step: StepLowering,
    landing: wgpu::Buffer,
}

impl<'a> ZeroCopyRead<'a> {
    /// The read of `bytes` of `slot` of `link` into `landing` (on the receiver) by a kernel of
    /// `budget`, binding `counters` (never bumped). A direction streamed beside others lands into
    /// buffers of its own: two reads or a read and a write binding one buffer would be ordered one
    /// after the other on the receiver.
    pub(super) fn new(
        devices: &'a Devices,
        kernels: &'a [StepKernel],
        (landing, counters): (&wgpu::Buffer, &wgpu::Buffer),
        link: &HostLink,
        (slot, bytes, budget): (usize, u64, Link),
    ) -> Result<Self> {
        let to = link.to;
        let inbox = slot_box(slot, End::Inbox);
        let spec = StepSpec {
            label: "zero-copy calibration read",
            dst: StepEnd::Pool,
            src: StepEnd::Link(inbox),
            bytes: bytes.min(link.capacity).min(landing.size()) / 16 * 16,
            puts: &[Put::Store],
            // As the host loop lands a zero-copy chunk: on the link's budget.
            links: &[budget],
        };
        let on = (&devices.gpus[to], to, &kernels[to]);
        let (exec, step) = bound(on, &spec, (inbox, link.inbox(slot)?), (landing, counters))?;
        Ok(ZeroCopyRead {
            to,
            exec,
            step,
            landing: landing.clone(),
        })
    }

    pub(super) fn encode(
        &mut self,
        enc: &mut wgpu::CommandEncoder,
        ts: Option<wgpu::ComputePassTimestampWrites<'_>>,
    ) -> Result<()> {
        record(&mut self.exec, &self.step, enc, ts)
    }

    /// The read, submitted and waited for (bounded): seconds from encoding to completion, on the
    /// host clock (as [`StepWrite::time`]).
    pub(super) fn time(&mut self, devices: &Devices, bytes: u64) -> Result<f64> {
        let r = &devices.gpus[self.to];
        timed(r, "the zero-copy calibration's read", bytes, |enc, ts| {
            self.encode(enc, ts)
        })
    }

    /// The read as one executor's part of a pass shared with others.
    pub(super) fn part(&mut self) -> Part<'_, 'a> {
        part(&mut self.exec, &self.step)
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
pub(super) const POISON_TAIL: u64 = 16;

/// A flag `gpu`'s queue sets once everything submitted so far completed (seen at its next poll).
pub(super) fn done_flag(gpu: &crate::gpu::Gpu) -> std::sync::Arc<std::sync::atomic::AtomicBool> {
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = done.clone();
    gpu.queue
        .on_submitted_work_done(move || flag.store(true, std::sync::atomic::Ordering::Release));
    done
}
