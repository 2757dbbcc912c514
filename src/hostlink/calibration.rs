//! Calibration of the host-staged link: GB/s per direction by chunk size and copy threads, as a table that
//! names the devices and the link, printed and saved as JSON.
//!
//! Each repetition times, on the host clock, the three parts of one chunk's trip: the sender's step kernel
//! writing the chunk into its outbox (submit to completion, at the step's workgroup budget), the maps of
//! both ends once that submission is done, and the threaded copy with both unmaps. The kernel part hides
//! behind GEMM work in the pass it shares; the copy is what the host trigger loop pays per chunk.
//! Then the links streamed much as the trigger loop drives them (a copy lane per direction, two slots:
//! the next chunk written while the lane copies the last; the loop may hold up to eight): each
//! direction alone, the ring's directions at once (what a ring collective drives) and all at once.
//!
//! On a zero-copy link there is no host part: a row's "copy" is the receiver's step kernel reading
//! the chunk out of host memory (submit to completion), and streaming alternates the sender's kernel
//! writing one slot with the receiver's kernel reading the other.

use std::fmt::Write as _;
use web_time::Instant;

use serde::{Deserialize, Serialize};

use super::{CopyPool, HostLink, Path};
use crate::devices::Devices;
use crate::error::{Error, Result};
use crate::shaders::Put;
use crate::stats::median;
use crate::steps::{Link, StepKernel};

/// Default file the table is saved to.
pub const DEFAULT_TABLE: &str = "t3-hostlink.json";

/// What to measure.
#[derive(Clone, Debug, Serialize)]
pub struct Options {
    /// Chunk sizes in bytes (positive multiples of 16).
    pub bytes: Vec<u64>,
    /// Copy thread counts.
    pub threads: Vec<usize>,
    /// Timed repetitions per (direction, size, threads), after one untimed one; medians reported.
    pub reps: usize,
    /// The workgroup budget of the step kernel that writes the outbox.
    pub step_link: Link,
    /// The path asked for (mapped falls back to staged at an end without MAPPABLE_PRIMARY_BUFFERS).
    pub want: Path,
    /// About how many bytes each direction streams (chunks of the largest size, at most 64 MiB; 2 to
    /// 64 of them) in the streamed measurement; 0 leaves it out.
    pub stream_bytes: u64,
    /// Threads each lane copies on in the streamed measurement (None: as the trigger loop gives
    /// each lane by default when every link is in use, `config::host::default_copy_threads`).
    pub stream_threads: Option<usize>,
}

impl Default for Options {
    /// 1 to 256 MiB, 1 to 16 threads, 5 reps, a 16-workgroup step: the measurements (50 GB/s
    /// kernel to host from 16 workgroups; host copies at 31 GB/s on 4 to 16 threads).
    fn default() -> Self {
        Options {
            bytes: [1u64, 4, 16, 64, 256].iter().map(|m| m << 20).collect(),
            threads: vec![1, 2, 4, 8, 16],
            reps: 5,
            step_link: Link::Workgroups(16),
            want: Path::ZeroCopy,
            stream_bytes: 1 << 30,
            stream_threads: None,
        }
    }
}

/// One direction of the table: which devices and how its ends reach host memory.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Direction {
    pub from: usize,
    pub to: usize,
    pub send: Path,
    pub recv: Path,
}

/// Medians of one (direction, size, threads).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct HostLinkRow {
    pub from: usize,
    pub to: usize,
    pub bytes: u64,
    pub threads: usize,
    /// The sender's step kernel writing the outbox (plus the staging copy on the staged path): submit to
    /// completion.
    pub write_ms: f64,
    pub write_gbps: f64,
    /// Both maps, asked once the sender's submission completed.
    pub map_ms: f64,
    /// The threaded copy and both unmaps.
    pub copy_ms: f64,
    pub copy_gbps: f64,
    /// Maps and copy: the host's whole part of a transfer, the link's rate when the kernel part hides.
    pub host_gbps: f64,
    /// Submit to inbox filled, nothing hidden.
    pub total_gbps: f64,
}

/// The calibration of every direction between a set of devices.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct HostLinkTable {
    /// One line per device, as [`Devices::describe`] gives them.
    pub devices: Vec<String>,
    pub directions: Vec<Direction>,
    /// The step kernel's budget, as [`Link::describe`] says it.
    pub step_link: String,
    pub timer: String,
    pub reps: usize,
    pub rows: Vec<HostLinkRow>,
    /// The links streamed as the trigger loop drives them (older tables have none).
    #[serde(default)]
    pub streams: Vec<StreamRow>,
}

/// The links streamed: `chunks` chunks of `bytes` per direction through two slots (the sender's
/// kernel writing the next chunk while a copy lane of `threads` copies the last), every direction
/// of `directions` at once; GB/s per direction in that order, first submission to last copy.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct StreamRow {
    pub directions: Vec<(usize, usize)>,
    pub bytes: u64,
    pub chunks: usize,
    pub threads: usize,
    pub gbps: Vec<f64>,
}

/// Measures every ordered pair of `devices` (each direction its own link) per `opts`. Every size's
/// payload is checked byte for byte in the inbox after its last repetition.
pub fn calibrate(devices: &Devices, opts: &Options) -> Result<HostLinkTable> {
    if devices.len() < 2 {
        return Err(Error::invalid(
            "device count",
            devices.len(),
            "at least 2 for a host link (e.g. --devices 2)",
        ));
    }
    if opts.reps == 0 || opts.bytes.is_empty() || opts.threads.is_empty() {
        return Err(Error::invalid(
            "host link calibration",
            format!(
                "{} reps, {} sizes, {} thread counts",
                opts.reps,
                opts.bytes.len(),
                opts.threads.len()
            ),
            "at least one of each",
        ));
    }
    if let Some(&b) = opts.bytes.iter().find(|&&b| b == 0 || b % 16 != 0) {
        return Err(Error::invalid(
            "host link calibration size",
            format!("{b} bytes"),
            "a positive multiple of 16 bytes",
        ));
    }
    let cap = *opts.bytes.iter().max().unwrap_or(&16);
    let kernels = devices
        .gpus
        .iter()
        .map(StepKernel::new)
        .collect::<Result<Vec<_>>>()?;
    let mut rng = crate::reference::Rng::new(0x4057);
    let payload: Vec<f32> = rng.fill((cap / 4) as usize);
    let payload: &[u8] = bytemuck::cast_slice(&payload);
    let mut table = HostLinkTable {
        devices: devices.describe(),
        directions: Vec::new(),
        step_link: opts.step_link.describe(),
        timer: "host clock".into(),
        reps: opts.reps,
        rows: Vec::new(),
        streams: Vec::new(),
    };
    // Per device: the payload its step kernel reads as a sender, the counters it binds (never
    // bumped), and where its step kernel puts a zero-copy chunk as a receiver.
    let mut srcs = Vec::new();
    for sender in &devices.gpus {
        use wgpu::BufferUsages as U;
        let src = sender.buffer("calibration payload", cap, U::STORAGE | U::COPY_DST)?;
        sender.queue.write_buffer(&src, 0, payload);
        let counters = sender.buffer("calibration counters", 16, U::STORAGE)?;
        let landing = sender.buffer("calibration landing", cap, U::STORAGE | U::COPY_SRC)?;
        srcs.push(Ends {
            src,
            counters,
            landing,
        });
    }
    for (from, (sender, kernel)) in devices.gpus.iter().zip(&kernels).enumerate() {
        let Ends { src, counters, .. } = &srcs[from];
        for to in (0..devices.len()).filter(|&t| t != from) {
            let mut link = HostLink::new(&devices.gpus, from, to, cap, 1, opts.want)?;
            table.directions.push(Direction {
                from,
                to,
                send: link.send,
                recv: link.recv,
            });
            for &bytes in &opts.bytes {
                let len4 = (bytes / 16) as u32;
                let (bg, n_wg) = kernel.bind_standalone(
                    sender,
                    link.outbox(0)?,
                    src,
                    counters,
                    len4,
                    opts.step_link,
                );
                if link.zero_copy() {
                    let read = ZeroCopyRead::new(devices, &kernels, &srcs, &link, 0);
                    let (mut write, mut reads, mut total) = (vec![], vec![], vec![]);
                    for rep in 0..=opts.reps {
                        let t0 = Instant::now();
                        let mut enc = sender.device.create_command_encoder(&Default::default());
                        {
                            let mut pass = enc.begin_compute_pass(&Default::default());
                            kernel.dispatch(sender, &mut pass, Put::Store, &bg, n_wg);
                        }
                        let idx = sender.submit("host link calibration", vec![enc.finish()])?;
                        sender.wait(
                            Some(idx),
                            "the host link calibration's step",
                            sender.timeout_for(0.0, 2.0 * bytes as f64),
                        )?;
                        let t1 = Instant::now();
                        read.run(devices, &kernels, bytes)?;
                        if rep > 0 {
                            write.push((t1 - t0).as_secs_f64());
                            reads.push(t1.elapsed().as_secs_f64());
                            total.push(t0.elapsed().as_secs_f64());
                        }
                    }
                    let (w, c, t) = (median(&write), median(&reads), median(&total));
                    let gbps = |s: f64| bytes as f64 / s.max(1e-9) / 1e9;
                    table.rows.push(HostLinkRow {
                        from,
                        to,
                        bytes,
                        threads: 0,
                        write_ms: w * 1e3,
                        write_gbps: gbps(w),
                        map_ms: 0.0,
                        copy_ms: c * 1e3,
                        copy_gbps: gbps(c),
                        host_gbps: gbps(c),
                        total_gbps: gbps(t),
                    });
                    check_arrived(devices, &mut link, 0, bytes, &payload[..bytes as usize])?;
                    read.check(devices, bytes, &payload[..bytes as usize])?;
                    continue;
                }
                for &threads in &opts.threads {
                    let mut pool = CopyPool::new(threads)?;
                    let (mut write, mut map, mut copy, mut total) =
                        (vec![], vec![], vec![], vec![]);
                    for rep in 0..=opts.reps {
                        let t0 = Instant::now();
                        let mut enc = sender.device.create_command_encoder(&Default::default());
                        {
                            let mut pass = enc.begin_compute_pass(&Default::default());
                            kernel.dispatch(sender, &mut pass, Put::Store, &bg, n_wg);
                        }
                        link.encode_drain(0, &mut enc, bytes)?;
                        let idx = sender.submit("host link calibration", vec![enc.finish()])?;
                        sender.wait(
                            Some(idx),
                            "the host link calibration's step",
                            sender.timeout_for(0.0, 2.0 * bytes as f64),
                        )?;
                        let t1 = Instant::now();
                        let times = link.transfer(&devices.gpus, 0, bytes, None, &mut pool)?;
                        if rep > 0 {
                            write.push((t1 - t0).as_secs_f64());
                            map.push(times.wait.as_secs_f64());
                            copy.push(times.copy.as_secs_f64());
                            total.push(t0.elapsed().as_secs_f64());
                        }
                    }
                    let (w, m, c, t) =
                        (median(&write), median(&map), median(&copy), median(&total));
                    let gbps = |s: f64| bytes as f64 / s.max(1e-9) / 1e9;
                    table.rows.push(HostLinkRow {
                        from,
                        to,
                        bytes,
                        threads,
                        write_ms: w * 1e3,
                        write_gbps: gbps(w),
                        map_ms: m * 1e3,
                        copy_ms: c * 1e3,
                        copy_gbps: gbps(c),
                        host_gbps: gbps(m + c),
                        total_gbps: gbps(t),
                    });
                }
                check_arrived(devices, &mut link, 0, bytes, &payload[..bytes as usize])?;
            }
        }
    }
    // Streamed as the trigger loop drives the links: each direction alone, then all at once.
    let stream_bytes = cap.min(STREAM_CHUNK);
    let chunks = opts.stream_bytes.div_ceil(stream_bytes).clamp(2, 64) as usize;
    let dirs: Vec<(usize, usize)> = table.directions.iter().map(|d| (d.from, d.to)).collect();
    // The threads the trigger loop gives each lane when every link is in use.
    let threads = opts
        .stream_threads
        .unwrap_or_else(|| crate::config::host::default_copy_threads(dirs.len()));
    let mut cases: Vec<Vec<(usize, usize)>> = dirs.iter().map(|&d| vec![d]).collect();
    let n = devices.len();
    if n > 2 {
        cases.push((0..n).map(|d| (d, (d + 1) % n)).collect());
    }
    if dirs.len() > 1 {
        cases.push(dirs);
    }
    if opts.stream_bytes == 0 {
        cases.clear();
    }
    let stream_opts = StreamOptions {
        bytes: stream_bytes,
        chunks,
        threads,
        step_link: opts.step_link,
        want: opts.want,
    };
    for dirs in cases {
        let gbps = stream(devices, &kernels, &srcs, &dirs, &stream_opts, payload)?;
        table.streams.push(StreamRow {
            directions: dirs,
            bytes: stream_bytes,
            chunks,
            threads,
            gbps,
        });
    }
    Ok(table)
}

/// One device's calibration buffers: the payload a sender's step kernel reads, the counters it binds
/// (never bumped), and where a receiver's step kernel puts a zero-copy chunk.
struct Ends {
    src: wgpu::Buffer,
    counters: wgpu::Buffer,
    landing: wgpu::Buffer,
}

/// The receiver's half of a zero-copy transfer: its step kernel reading one slot of the link out of
/// host memory into its landing buffer.
struct ZeroCopyRead {
    to: usize,
    bind: wgpu::BindGroup,
    n_wg: u32,
    landing: wgpu::Buffer,
}

impl ZeroCopyRead {
    fn new(
        devices: &Devices,
        kernels: &[StepKernel],
        ends: &[Ends],
        link: &HostLink,
        slot: usize,
    ) -> Self {
        // As the host loop lands a zero-copy chunk.
        let step_link = Link::Workgroups(crate::lower::HOST_LAND_WORKGROUPS);
        let to = link.to;
        let e = &ends[to];
        let inbox = link.inbox(slot).expect("the link has the slot");
        let (bind, n_wg) = kernels[to].bind_standalone(
            &devices.gpus[to],
            &e.landing,
            inbox,
            &e.counters,
            (link.capacity.min(e.landing.size()) / 16) as u32,
            step_link,
        );
        ZeroCopyRead {
            to,
            bind,
            n_wg,
            landing: e.landing.clone(),
        }
    }

    /// Submits the read on the receiver; a flag set when it completed (seen at the device's next poll).
    fn submit(&self, devices: &Devices, kernels: &[StepKernel]) -> Result<Submitted> {
        let r = &devices.gpus[self.to];
        let mut enc = r.device.create_command_encoder(&Default::default());
        {
            let mut pass = enc.begin_compute_pass(&Default::default());
            kernels[self.to].dispatch(r, &mut pass, Put::Store, &self.bind, self.n_wg);
        }
        let idx = r.submit("zero-copy calibration read", vec![enc.finish()])?;
        Ok((idx, done_flag(r)))
    }

    /// The read, waited for (bounded).
    fn run(&self, devices: &Devices, kernels: &[StepKernel], bytes: u64) -> Result<()> {
        let r = &devices.gpus[self.to];
        let (idx, _) = self.submit(devices, kernels)?;
        r.wait(
            Some(idx),
            "the zero-copy calibration's read",
            r.timeout_for(0.0, 2.0 * bytes as f64),
        )
    }

    /// Fails where the receiver's landing buffer does not hold `want`.
    fn check(&self, devices: &Devices, bytes: u64, want: &[u8]) -> Result<()> {
        let r = &devices.gpus[self.to];
        let got = r.read(
            "the zero-copy calibration's landing",
            &self.landing,
            0,
            bytes,
        )?;
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

/// A submission and the flag its queue sets once it completed.
type Submitted = (
    wgpu::SubmissionIndex,
    std::sync::Arc<std::sync::atomic::AtomicBool>,
);

/// A flag `gpu`'s queue sets once everything submitted so far completed (seen at its next poll).
fn done_flag(gpu: &crate::gpu::Gpu) -> std::sync::Arc<std::sync::atomic::AtomicBool> {
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = done.clone();
    gpu.queue
        .on_submitted_work_done(move || flag.store(true, std::sync::atomic::Ordering::Release));
    done
}

/// Largest chunk of the streamed measurement (it also stays within the largest calibrated size).
const STREAM_CHUNK: u64 = 64 << 20;

/// How [`stream`] drives the links.
struct StreamOptions {
    bytes: u64,
    chunks: usize,
    threads: usize,
    step_link: Link,
    want: Path,
}

/// Where one slot of a streamed direction is: free, being written by the sender's kernel (then, on
/// a host-copy link, mapped and copied by the lane), or, on a zero-copy link, being read by the
/// receiver's kernel; the flag is its submission's completion.
enum SlotState {
    Free,
    Written(std::sync::Arc<std::sync::atomic::AtomicBool>),
    Copying,
    Read(std::sync::Arc<std::sync::atomic::AtomicBool>),
}

/// One direction's state while streaming.
struct Streamed {
    link: HostLink,
    lane: super::CopyLane,
    /// The step kernel's binding per slot (writing that slot's outbox).
    binds: Vec<wgpu::BindGroup>,
    /// On a zero-copy link: the receiver's read of each slot.
    reads: Vec<ZeroCopyRead>,
    n_wg: u32,
    sent: usize,
    arrived: usize,
    /// Slots written, oldest first.
    waiting: std::collections::VecDeque<usize>,
    slots: [SlotState; 2],
    done_at: Option<Instant>,
}

fn is_set(flag: &std::sync::atomic::AtomicBool) -> bool {
    flag.load(std::sync::atomic::Ordering::Acquire)
}

/// Streams `opts.chunks` chunks over every direction of `dirs` at once, two slots per direction, as
/// the trigger loop runs them: the sender's step kernel writes the next chunk while the direction's
/// copy lane copies the last (or, zero-copy, while the receiver's kernel reads it). GB/s per
/// direction, from the first submission to its last chunk arrived; the payload is checked in every
/// receiver after.
fn stream(
    devices: &Devices,
    kernels: &[StepKernel],
    ends: &[Ends],
    dirs: &[(usize, usize)],
    opts: &StreamOptions,
    payload: &[u8],
) -> Result<Vec<f64>> {
    let bytes = opts.bytes;
    let mut state = Vec::new();
    for &(from, to) in dirs {
        let link = HostLink::new(&devices.gpus, from, to, bytes, 2, opts.want)?;
        let e = &ends[from];
        let mut binds = Vec::new();
        let mut reads = Vec::new();
        let mut n_wg = 0;
        for slot in 0..2 {
            let (bg, n) = kernels[from].bind_standalone(
                &devices.gpus[from],
                link.outbox(slot)?,
                &e.src,
                &e.counters,
                (bytes / 16) as u32,
                opts.step_link,
            );
            binds.push(bg);
            n_wg = n;
            if link.zero_copy() {
                reads.push(ZeroCopyRead::new(devices, kernels, ends, &link, slot));
            }
        }
        state.push(Streamed {
            link,
            lane: super::CopyLane::new(opts.threads)?,
            binds,
            reads,
            n_wg,
            sent: 0,
            arrived: 0,
            waiting: Default::default(),
            slots: [SlotState::Free, SlotState::Free],
            done_at: None,
        });
    }
    let all = (opts.chunks * dirs.len()) as f64 * bytes as f64;
    let bound = devices.gpus[0].timeout_for(0.0, 4.0 * all);
    let t0 = Instant::now();
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
            for (s, &(from, _)) in state.iter_mut().zip(dirs) {
                let sender = &devices.gpus[from];
                while s.sent < opts.chunks && matches!(s.slots[s.sent % 2], SlotState::Free) {
                    let slot = s.sent % 2;
                    let mut enc = sender.device.create_command_encoder(&Default::default());
                    {
                        let mut pass = enc.begin_compute_pass(&Default::default());
                        kernels[from].dispatch(
                            sender,
                            &mut pass,
                            Put::Store,
                            &s.binds[slot],
                            s.n_wg,
                        );
                    }
                    s.link.encode_drain(slot, &mut enc, bytes)?;
                    sender.submit("host link streamed calibration", vec![enc.finish()])?;
                    if !s.link.zero_copy() {
                        s.link.start(slot, bytes)?;
                    }
                    s.slots[slot] = SlotState::Written(done_flag(sender));
                    s.waiting.push_back(slot);
                    s.sent += 1;
                }
                if let Some(&slot) = s.waiting.front() {
                    if s.link.zero_copy() {
                        // Written once the sender's submission completed: the receiver reads it.
                        if matches!(&s.slots[slot], SlotState::Written(f) if is_set(f)) {
                            let (_, flag) = s.reads[slot].submit(devices, kernels)?;
                            s.slots[slot] = SlotState::Read(flag);
                            s.waiting.pop_front();
                        }
                    } else if s.link.ready(&devices.gpus, slot)? {
                        s.link.hand_over(slot, &mut s.lane, slot)?;
                        s.slots[slot] = SlotState::Copying;
                        s.waiting.pop_front();
                    }
                }
                let mut arrived = Vec::new();
                for (slot, r) in s.lane.done() {
                    s.link.copied(slot, r)?;
                    arrived.push(slot);
                }
                for slot in 0..2 {
                    if matches!(&s.slots[slot], SlotState::Read(f) if is_set(f)) {
                        arrived.push(slot);
                    }
                }
                for slot in arrived {
                    s.slots[slot] = SlotState::Free;
                    s.arrived += 1;
                    if s.arrived == opts.chunks {
                        s.done_at = Some(Instant::now());
                    }
                }
            }
            std::thread::yield_now();
        }
        Ok(())
    })();
    if result.is_err() {
        // A copy still running writes into a mapping: let it end before the links drop.
        for s in &mut state {
            s.lane.drain();
            s.link.release();
        }
    }
    result?;
    let mut gbps = Vec::new();
    for s in &mut state {
        let secs = s.done_at.map_or(f64::NAN, |t| (t - t0).as_secs_f64());
        gbps.push(opts.chunks as f64 * bytes as f64 / secs.max(1e-9) / 1e9);
        let last = (opts.chunks - 1) % 2;
        let want = &payload[..bytes as usize];
        check_arrived(devices, &mut s.link, last, bytes, want)?;
        if let Some(read) = s.reads.get(last) {
            read.check(devices, bytes, want)?;
        }
    }
    Ok(gbps)
}

/// Fails where the receiver's inbox does not hold `want` (on the staged path, after landing it).
fn check_arrived(
    devices: &Devices,
    link: &mut HostLink,
    slot: usize,
    bytes: u64,
    want: &[u8],
) -> Result<()> {
    let to = link.to;
    let r = &devices.gpus[to];
    let mut enc = r.device.create_command_encoder(&Default::default());
    link.encode_land(slot, &mut enc, bytes)?;
    r.submit("landing the calibration chunk", vec![enc.finish()])?;
    let got = r.read("the calibration inbox", link.inbox(slot)?, 0, bytes)?;
    if let Some(i) = got.iter().zip(want).position(|(g, w)| g != w) {
        return Err(Error::Gpu {
            during: format!(
                "checking the host link {}->{to} at {bytes} bytes",
                link.from
            ),
            message: format!("the inbox differs from the payload at byte {i}"),
        });
    }
    Ok(())
}

/// "256 MiB", "46.9 KiB", "16 B".
fn size(bytes: u64) -> String {
    let b = bytes as f64;
    if bytes >= 1 << 20 {
        let mib = format!("{:.4}", b / (1u64 << 20) as f64);
        format!("{} MiB", mib.trim_end_matches('0').trim_end_matches('.'))
    } else if bytes >= 1 << 10 {
        format!("{:.1} KiB", b / 1024.0)
    } else {
        format!("{bytes} B")
    }
}

impl HostLinkTable {
    /// The row with the highest host rate for the direction `from` -> `to` at its largest size.
    pub fn best(&self, from: usize, to: usize) -> Option<&HostLinkRow> {
        let rows = self.rows.iter().filter(|r| r.from == from && r.to == to);
        let largest = rows.clone().map(|r| r.bytes).max()?;
        rows.filter(|r| r.bytes == largest)
            .max_by(|a, b| a.host_gbps.total_cmp(&b.host_gbps))
    }

    /// A fixed-width text table, then one line per direction with its best rate.
    pub fn text(&self) -> String {
        let mut out = String::new();
        for d in &self.devices {
            let _ = writeln!(out, "{d}");
        }
        let _ = writeln!(
            out,
            "step kernel: {}; timer: {}; medians of {} reps",
            self.step_link, self.timer, self.reps
        );
        let _ = writeln!(
            out,
            "{:<6} {:>10} {:>7} {:>10} {:>8} {:>10} {:>10} {:>10}",
            "link",
            "chunk",
            "threads",
            "write GB/s",
            "map ms",
            "copy GB/s",
            "host GB/s",
            "total GB/s"
        );
        for r in &self.rows {
            let _ = writeln!(
                out,
                "{:<6} {:>10} {:>7} {:>10.2} {:>8.3} {:>10.2} {:>10.2} {:>10.2}",
                format!("{}->{}", r.from, r.to),
                size(r.bytes),
                r.threads,
                r.write_gbps,
                r.map_ms,
                r.copy_gbps,
                r.host_gbps,
                r.total_gbps
            );
        }
        for d in &self.directions {
            if let (Some(b), Path::ZeroCopy) = (self.best(d.from, d.to), d.send) {
                let _ = writeln!(
                    out,
                    "{}->{} (zero-copy): the receiver's kernel reads {:.2} GB/s at {}; the sender's writes {:.2} GB/s",
                    d.from,
                    d.to,
                    b.host_gbps,
                    size(b.bytes),
                    b.write_gbps
                );
            } else if let Some(b) = self.best(d.from, d.to) {
                let _ = writeln!(
                    out,
                    "{}->{} (sender {}, receiver {}): {:.2} GB/s host part at {} on {} threads; kernel write {:.2} GB/s",
                    d.from,
                    d.to,
                    d.send.name(),
                    d.recv.name(),
                    b.host_gbps,
                    size(b.bytes),
                    b.threads,
                    b.write_gbps
                );
            }
        }
        for st in &self.streams {
            let each: Vec<String> = st
                .directions
                .iter()
                .zip(&st.gbps)
                .map(|((f, t), g)| format!("{f}->{t} {g:.2} GB/s"))
                .collect();
            let zero_copy = self.directions.iter().all(|d| d.send == Path::ZeroCopy);
            let how = if zero_copy {
                "zero-copy".to_string()
            } else {
                format!("copies on {} threads", st.threads)
            };
            let n = self.devices.len();
            let ring = n > 2
                && st.directions.len() == n
                && st.directions.iter().all(|&(f, t)| t == (f + 1) % n);
            let _ = writeln!(
                out,
                "streamed {} x {} through 2 slots, {how}, {}: {}",
                st.chunks,
                size(st.bytes),
                match st.directions.len() {
                    1 => "alone",
                    _ if ring => "the ring's directions at once",
                    _ => "all directions at once",
                },
                each.join(", ")
            );
        }
        out
    }

    /// Writes the table as JSON to `path`, atomically (src/files.rs).
    pub fn save(&self, path: &str) -> Result<()> {
        let json = serde_json::to_string_pretty(self).map_err(|e| Error::Write {
            path: path.to_string(),
            source: e.into(),
        })?;
        crate::files::write(path, &json)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(from: usize, to: usize, bytes: u64, threads: usize, host_gbps: f64) -> HostLinkRow {
        HostLinkRow {
            from,
            to,
            bytes,
            threads,
            write_ms: 1.0,
            write_gbps: 1.0,
            map_ms: 0.1,
            copy_ms: 1.0,
            copy_gbps: 1.0,
            host_gbps,
            total_gbps: 1.0,
        }
    }

    #[test]
    fn best_is_the_fastest_at_the_largest_size() {
        let t = HostLinkTable {
            devices: vec!["device 0: a".into(), "device 1: b".into()],
            directions: vec![Direction {
                from: 0,
                to: 1,
                send: Path::Mapped,
                recv: Path::Staged,
            }],
            step_link: "16 workgroups".into(),
            timer: "host clock".into(),
            reps: 3,
            streams: vec![StreamRow {
                directions: vec![(0, 1), (1, 0)],
                bytes: 64 << 20,
                chunks: 16,
                threads: 8,
                gbps: vec![30.0, 29.5],
            }],
            rows: vec![
                row(0, 1, 1 << 20, 1, 90.0),
                row(0, 1, 4 << 20, 1, 10.0),
                row(0, 1, 4 << 20, 8, 30.0),
                row(1, 0, 4 << 20, 8, 99.0),
            ],
        };
        let b = t.best(0, 1).unwrap();
        assert_eq!((b.bytes, b.threads), (4 << 20, 8));
        assert!(t.best(1, 2).is_none());
        let text = t.text();
        assert!(
            text.contains(
                "0->1 (sender mapped, receiver staged): 30.00 GB/s host part at 4 MiB on 8"
            ),
            "{text}"
        );
        assert_eq!(
            [16, 48_016, 1 << 20, 3 << 19].map(size),
            ["16 B", "46.9 KiB", "1 MiB", "1.5 MiB"]
        );
        // Three rows and the summary line.
        assert_eq!(text.lines().filter(|l| l.starts_with("0->1 ")).count(), 4);
        assert!(
            text.contains("streamed 16 x 64 MiB through 2 slots, copies on 8 threads, all directions at once: 0->1 30.00 GB/s, 1->0 29.50 GB/s"),
            "{text}"
        );
        let back: HostLinkTable =
            serde_json::from_str(&serde_json::to_string(&t).unwrap()).unwrap();
        assert_eq!((back.rows.len(), back.streams.len()), (4, 1));
    }
}
