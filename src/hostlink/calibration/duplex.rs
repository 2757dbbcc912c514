//! Each device sending and landing at once: its kernel writing one zero-copy link's host memory while
//! another reads the link it receives on, what every device does when both directions (or a ring)
//! stream. Timed alone, in two passes of one submission and in one pass, so that a streamed rate
//! can be read against what the device itself allows; and, where a GEMM is given, in one pass with
//! a tracked GEMM on the same device, the link's kernels dispatched first and last: how much of the
//! link that GEMM hides, as host mode's passes would.

use serde::{Deserialize, Serialize};

use super::ends::{timed_with, StepWrite, ZeroCopyRead};
use super::{check_arrived, HostLink, Options, Rig};
use crate::error::Result;
use crate::executor::record_one_pass;
use crate::gemm::{GemmKernel, StoreMode};
use crate::gpu::Gpu;
use crate::stats::{median, Settle};
use crate::steps::Link;
use crate::tracked::{ExactRow, TrackedGemm};

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
    /// The sending and landing in one pass with a GEMM on the device (`Options::beside_gemm`;
    /// absent from tables saved before it, and where none was given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub beside: Option<BesideRow>,
}

/// A device's sending and landing in one pass with a tracked GEMM: milliseconds (medians, submit to
/// completion on the host clock, an empty submission's round trip subtracted from each).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct BesideRow {
    /// The GEMM: "MxNxK" and its operands' type (f32 outputs).
    pub shape: String,
    pub dtype: String,
    pub gemm_ms: f64,
    /// The sending and landing alone (one pass), and with the GEMM: their kernels dispatched before
    /// the GEMM's, and after.
    pub link_ms: f64,
    pub link_first_ms: f64,
    pub gemm_first_ms: f64,
    /// An empty submission's round trip, taken off each figure above (on a CPU adapter a small GEMM
    /// may take less than its median, and the figure then reads below zero).
    #[serde(default)]
    pub empty_ms: f64,
    /// The send's and the landing's workgroup budgets in these passes (`Options::beside_link`;
    /// absent from tables saved before they were said).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub send_workgroups: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub land_workgroups: Option<u32>,
}

impl BesideRow {
    /// What a pass of both saved against the two one after the other, the link dispatched first, as
    /// a share of the shorter of the two (1: the shorter fully hidden; 0: nothing).
    pub fn hidden(&self) -> f64 {
        let (g, l) = (self.gemm_ms, self.link_ms);
        ((g + l - self.link_first_ms) / l.min(g).max(1e-9)).clamp(-1.0, 1.0)
    }
}

/// What one duplex measurement runs.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Work {
    CopyWrite,
    CopyRead,
    Copies,
    Write,
    Read,
    Passes,
    OnePass,
    /// Only where a GEMM is given: the GEMM alone, and in one pass with both halves, the halves
    /// dispatched first or last.
    Gemm,
    LinkFirst,
    GemmFirst,
    /// Nothing: a submission's round trip, taken off the beside rows' times.
    Empty,
}

impl Work {
    /// In the order each repetition times them (and their indices into its times).
    const ALL: [Work; 11] = [
        Work::CopyWrite,
        Work::CopyRead,
        Work::Copies,
        Work::Write,
        Work::Read,
        Work::Passes,
        Work::OnePass,
        Work::Gemm,
        Work::LinkFirst,
        Work::GemmFirst,
        Work::Empty,
    ];

    fn needs_gemm(self) -> bool {
        matches!(
            self,
            Work::Gemm | Work::LinkFirst | Work::GemmFirst | Work::Empty
        )
    }
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
    gemm: Option<TrackedGemm<'a>>,
    /// The GEMM's rows the checks read, with their exact values.
    expected: Vec<ExactRow>,
}

impl Duplex<'_, '_> {
    /// `work` submitted and waited for (bounded by its bytes and, beside a GEMM, its flops): seconds.
    fn time(&mut self, gpu: &Gpu, work: Work, bytes: u64, clear: bool) -> Result<f64> {
        let flops = match &self.gemm {
            Some(g) if work.needs_gemm() => g.shape.flops(),
            _ => 0.0,
        };
        timed_with(gpu, "sending and landing", (flops, bytes), |enc, ts| {
            if clear {
                enc.clear_buffer(self.copy_out[1], 0, Some(bytes));
            }
            self.encode(work, enc, ts, bytes)
        })
    }

    /// Beside the GEMM, timed apart: the link's work alone leaves the SMs idle, and a GPU lowers
    /// its clock within a fraction of a second of that (an H200 to 345-840 MHz, where a GEMM timed
    /// runs 4-6 times slower); the GEMM first runs alone until the clock is back, and the link's
    /// pass alone is timed again beside the others. None without a GEMM. `budgets`: the send's and
    /// the landing's workgroups in these passes, as the caller built its halves, said in the row.
    fn time_beside(
        &mut self,
        gpu: &Gpu,
        bytes: u64,
        reps: usize,
        budgets: (Link, Link),
    ) -> Result<Option<BesideRow>> {
        let Some(g) = &self.gemm else {
            return Ok(None);
        };
        let (shape, dtype) = (g.shape, g.dtype);
        let beside = [
            Work::Gemm,
            Work::OnePass,
            Work::LinkFirst,
            Work::GemmFirst,
            Work::Empty,
        ];
        let mut times = vec![Vec::new(); Work::ALL.len()];
        let warm = web_time::Instant::now();
        let mut last = Vec::new();
        let warming = |last: &[f64]| {
            let s = warm.elapsed().as_secs_f64();
            s < WARM_S.0 || (s < WARM_S.1 && !SETTLED.settled(last))
        };
        while warming(&last) {
            last.push(self.time(gpu, Work::Gemm, bytes, false)?);
        }
        for _ in 0..reps {
            for work in beside {
                times[work as usize].push(self.time(gpu, work, bytes, false)?);
            }
        }
        let ms = |w: Work| median(&times[w as usize]) * 1e3;
        let empty = ms(Work::Empty);
        // Any work takes longer than an empty submission: a time that does not is kept as it is
        // (the table then shows it), not bent into range.
        let less = |w: Work| ms(w) - empty;
        Ok(Some(BesideRow {
            shape: shape.to_string(),
            dtype: dtype.name().into(),
            gemm_ms: less(Work::Gemm),
            link_ms: less(Work::OnePass),
            link_first_ms: less(Work::LinkFirst),
            gemm_first_ms: less(Work::GemmFirst),
            empty_ms: empty,
            send_workgroups: budgets.0.cap(),
            land_workgroups: budgets.1.cap(),
        }))
    }

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
            Work::Gemm | Work::LinkFirst | Work::GemmFirst => {
                let g = self.gemm.as_mut().expect("a GEMM work runs with a GEMM");
                match work {
                    Work::Gemm => g.encode(enc, StoreMode::Store, false, ts),
                    Work::LinkFirst => {
                        let parts = &mut [self.write.part(), self.read.part(), g.part()];
                        record_one_pass(enc, "the link, then a GEMM, in one pass", parts, ts)
                    }
                    _ => {
                        let parts = &mut [g.part(), self.write.part(), self.read.part()];
                        record_one_pass(enc, "a GEMM, then the link, in one pass", parts, ts)
                    }
                }
            }
            Work::Empty => Ok(()),
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
        let kernel = match opts.beside_gemm {
            Some((_, dtype)) => Some(GemmKernel::with(&gpus[d], dtype, None)?),
            None => None,
        };
        let (gemm, expected) = match (opts.beside_gemm, &kernel) {
            (Some((shape, _)), Some(k)) => {
                let (g, expected) = TrackedGemm::exact(&gpus[d], k, shape, "GEMM beside the link")?;
                (Some(g), expected)
            }
            _ => (None, Vec::new()),
        };
        // Device d's send and landing kernels on these budgets.
        let halves = |(send, land): (Link, Link)| -> Result<(StepWrite, ZeroCopyRead)> {
            Ok((
                StepWrite::new(on(d), ends(d), &out, 0, (bytes, send))?,
                ZeroCopyRead::new(
                    devices,
                    kernels,
                    (landing, &counters),
                    &inbound,
                    (0, bytes, land),
                )?,
            ))
        };
        let away = (opts.step_link, opts.step_link);
        let (write, read) = halves(away)?;
        let mut x = Duplex {
            write,
            read,
            out: &out,
            copy_out: [&rig.ends[d].src, out.outbox(0)?],
            copy_in: [inbound.inbox(0)?, landing],
            gemm,
            expected,
        };
        let works: Vec<Work> = Work::ALL.into_iter().filter(|w| !w.needs_gemm()).collect();
        let mut times = vec![Vec::new(); Work::ALL.len()];
        for rep in 0..=opts.reps {
            for &work in &works {
                let t = x.time(&gpus[d], work, bytes, false)?;
                if rep > 0 {
                    times[work as usize].push(t);
                }
            }
        }
        if x.gemm.is_some() && opts.beside_link != away {
            // Beside GEMM work the link's kernels take host mode's budgets there.
            (x.write, x.read) = halves(opts.beside_link)?;
        }
        let beside = x.time_beside(&gpus[d], bytes, opts.reps, opts.beside_link)?;
        // What each way of moving both at once moved, checked: the landing poisoned and the
        // outbox cleared first (in the same submission, ahead of the work); beside a GEMM, what
        // the GEMM stored too.
        let checked = [
            Work::Copies,
            Work::OnePass,
            Work::LinkFirst,
            Work::GemmFirst,
        ];
        let with_gemm = x.gemm.is_some();
        for work in checked.into_iter().filter(|w| with_gemm || !w.needs_gemm()) {
            x.read.poison(devices, bytes);
            let gemm = x.gemm.as_ref().filter(|_| work.needs_gemm());
            if let Some(g) = gemm {
                g.fill_c(f32::NAN)?;
            }
            x.time(&gpus[d], work, bytes, true)?;
            x.read.check(devices, bytes, want)?;
            check_arrived(devices, &out, 0, bytes, want)?;
            if let Some(g) = x.gemm.as_ref().filter(|_| work.needs_gemm()) {
                g.check_exact(&x.expected, "the GEMM beside the link")?;
            }
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
            beside,
        });
    }
    Ok(rows)
}

/// Seconds the GEMM beside the link runs alone, back to back, before it is timed: at least the first
/// (a GEMM at a lowered clock is as steady as at the full one, just slower), then until its times
/// settle, at most the second.
const WARM_S: (f64, f64) = (1.0, 4.0);

/// When the GEMM's times have settled: its last five within 5% of their median.
const SETTLED: Settle = Settle {
    window: 5,
    tolerance: 0.05,
};
