//! Each device sending and landing at once: its kernel writing one zero-copy link's host memory while
//! another reads the link it receives on, what every device does when both directions (or a ring)
//! stream. Timed alone, in two passes of one submission and in one pass, so that a streamed rate
//! can be read against what the device itself allows.

use serde::{Deserialize, Serialize};

use super::ends::{timed, StepWrite, ZeroCopyRead};
use super::{check_arrived, HostLink, Options, Rig};
use crate::error::Result;
use crate::executor::record_one_pass;
use crate::stats::median;

/// Medians of one device's write and read, alone and at once (GB/s of each, the chunk over the
/// time of the work timed).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct DuplexRow {
    pub device: usize,
    /// The link it sends on and the one it lands from.
    pub send: (usize, usize),
    pub land: (usize, usize),
    pub bytes: u64,
    /// Its step kernels: the sender's write alone, the landing's read alone, both in one pass, both
    /// in one submission in passes of their own.
    pub write_gbps: f64,
    pub read_gbps: f64,
    pub one_pass_gbps: f64,
    pub passes_gbps: f64,
    /// The same bytes by the queue's copies (`copy_buffer_to_buffer`), each alone and both at once.
    pub copy_write_gbps: f64,
    pub copy_read_gbps: f64,
    pub copies_gbps: f64,
}

/// What one duplex measurement runs.
#[derive(Clone, Copy)]
enum Work {
    CopyWrite,
    CopyRead,
    Copies,
    Write,
    Read,
    Passes,
    OnePass,
}

impl Work {
    /// In the order each repetition times them (and their indices into its times).
    const ALL: [Work; 7] = [
        Work::CopyWrite,
        Work::CopyRead,
        Work::Copies,
        Work::Write,
        Work::Read,
        Work::Passes,
        Work::OnePass,
    ];
}

// Each work's time goes to `times[work as usize]`: ALL lists them in declaration order.
const _: () = {
    let mut i = 0;
    while i < Work::ALL.len() {
        assert!(Work::ALL[i] as usize == i);
        i += 1;
    }
};

/// One device's two halves and the buffers its copies move between.
struct Duplex<'a, 'l> {
    write: StepWrite<'a>,
    read: ZeroCopyRead<'a>,
    out: &'l HostLink,
    /// Device memory the sender's chunk comes from, the host memory it goes to; the host memory
    /// the landed chunk comes from, the device memory it lands in.
    copy_out: [&'l wgpu::Buffer; 2],
    copy_in: [&'l wgpu::Buffer; 2],
}

impl Duplex<'_, '_> {
    fn encode(
        &mut self,
        work: Work,
        enc: &mut wgpu::CommandEncoder,
        ts: Option<wgpu::ComputePassTimestampWrites<'_>>,
        bytes: u64,
    ) -> Result<()> {
        let copy = |enc: &mut wgpu::CommandEncoder, [from, to]: [&wgpu::Buffer; 2]| {
            enc.copy_buffer_to_buffer(from, 0, to, 0, bytes);
            Ok(())
        };
        match work {
            Work::Write => self.write.encode(self.out, enc, ts),
            Work::Read => self.read.encode(enc, ts),
            Work::Passes => {
                self.write.encode(self.out, enc, ts)?;
                self.read.encode(enc, None)
            }
            Work::OnePass => {
                let parts = &mut [self.write.part(), self.read.part()];
                record_one_pass(enc, "sending and landing in one pass", parts, ts)
            }
            Work::CopyWrite => copy(enc, self.copy_out),
            Work::CopyRead => copy(enc, self.copy_in),
            Work::Copies => {
                copy(enc, self.copy_out)?;
                copy(enc, self.copy_in)
            }
        }
    }
}

/// Every device's row where both its links (to the next device, from the previous) are zero-copy,
/// at `bytes`; what the kernels in one pass and the copies landed checked against the payload, and
/// what they sent where it arrived.
pub(super) fn measure_duplex(rig: &Rig, bytes: u64, opts: &Options) -> Result<Vec<DuplexRow>> {
    let Rig {
        devices, kernels, ..
    } = *rig;
    let (gpus, n) = (&devices.gpus, devices.len());
    let want = &rig.payload[..bytes as usize];
    let mut rows = Vec::new();
    for d in 0..n {
        let (next, prev) = ((d + 1) % n, (d + n - 1) % n);
        let out = HostLink::new(gpus, d, next, bytes, 1, opts.want)?;
        let inbound = HostLink::new(gpus, prev, d, bytes, 1, opts.want)?;
        if !(out.zero_copy() && inbound.zero_copy()) {
            continue;
        }
        let ends = |i: usize| (&rig.ends[i].src, &rig.ends[i].counters);
        // What device d lands: its sender's chunk, written once.
        let on = |i: usize| (&gpus[i], &kernels[i]);
        StepWrite::new(on(prev), ends(prev), &inbound, 0, (bytes, opts.step_link))?
            .time(&inbound)?;
        use wgpu::BufferUsages as U;
        let counters = gpus[d].buffer("duplex calibration counters", 16, U::STORAGE)?;
        let landing = &rig.ends[d].landing;
        let mut x = Duplex {
            write: StepWrite::new(on(d), ends(d), &out, 0, (bytes, opts.step_link))?,
            read: ZeroCopyRead::new(
                devices,
                kernels,
                (landing, &counters),
                &inbound,
                (0, bytes, opts.step_link),
            )?,
            out: &out,
            copy_out: [&rig.ends[d].src, out.outbox(0)?],
            copy_in: [inbound.inbox(0)?, landing],
        };
        let mut times = vec![Vec::new(); Work::ALL.len()];
        for rep in 0..=opts.reps {
            for work in Work::ALL {
                let t = timed(&gpus[d], "sending and landing", bytes, |enc, ts| {
                    x.encode(work, enc, ts, bytes)
                })?;
                if rep > 0 {
                    times[work as usize].push(t);
                }
            }
        }
        // What each way of moving both at once moved, checked: the landing poisoned and the
        // outbox cleared first (in the same submission, ahead of the work).
        for work in [Work::Copies, Work::OnePass] {
            x.read.poison(devices, bytes);
            timed(&gpus[d], "sending and landing", bytes, |enc, ts| {
                enc.clear_buffer(x.copy_out[1], 0, Some(bytes));
                x.encode(work, enc, ts, bytes)
            })?;
            x.read.check(devices, bytes, want)?;
            check_arrived(devices, &out, 0, bytes, want)?;
        }
        let gbps = |w: Work| bytes as f64 / median(&times[w as usize]).max(1e-9) / 1e9;
        rows.push(DuplexRow {
            device: d,
            send: (d, next),
            land: (prev, d),
            bytes,
            write_gbps: gbps(Work::Write),
            read_gbps: gbps(Work::Read),
            one_pass_gbps: gbps(Work::OnePass),
            passes_gbps: gbps(Work::Passes),
            copy_write_gbps: gbps(Work::CopyWrite),
            copy_read_gbps: gbps(Work::CopyRead),
            copies_gbps: gbps(Work::Copies),
        });
    }
    Ok(rows)
}
