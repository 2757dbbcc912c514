//! Calibration of the host-staged link: GB/s per direction by chunk size and copy threads, as a table that
//! names the devices and the link, printed and saved as JSON.
//!
//! Each repetition times, on the host clock, the three parts of one chunk's trip: the sender's step kernel
//! writing the chunk into its outbox (submit to completion, at the step's workgroup budget), the maps of
//! both ends once that submission is done, and the threaded copy with both unmaps. The kernel part hides
//! behind GEMM work in the pass it shares; the copy is what the host trigger loop pays per chunk.
//! Then the links streamed much as the trigger loop drives them (a copy lane per direction, four slots,
//! two submissions queued per device: the next chunk written while the lane copies an earlier one;
//! the loop may hold up to eight slots): each direction alone, the ring's directions at once (what a
//! ring collective drives) and all at once.
//!
//! On a zero-copy link there is no host part: a row's "copy" is the receiver's step kernel reading
//! the chunk out of host memory (submit to completion), and streaming alternates the sender's kernel
//! writing one slot with the receiver's kernel reading the other.

use web_time::Instant;

use serde::{Deserialize, Serialize};

mod duplex;
mod ends;
mod stream;
mod table;

pub use duplex::{BesideRow, DuplexRow};

use super::{CopyPool, HostLink, Path};
use crate::devices::{DeviceSpec, Devices};
use crate::error::{Error, Result};
use crate::shapes::{Dtype, Shape};
use crate::stats::median;
use crate::steps::{Link, StepKernel};
use crate::timestamps::Timestamps;
use ends::{Ends, StepWrite, ZeroCopyRead};
use stream::{stream, StreamOptions, STREAM_CHUNK, STREAM_SLOTS};

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
    /// The workgroup budget of the step kernels that write the outbox and land a zero-copy chunk
    /// (the trigger loop gives both the link's budget away from GEMM work, `HOST_SEND_WORKGROUPS`
    /// where it is unthrottled).
    pub step_link: Link,
    /// The send's and the landing's budgets beside the GEMM of `beside_gemm`: where the link is
    /// unthrottled the trigger loop gives them `HOST_SEND_BESIDE_GEMM_WORKGROUPS` and
    /// `HOST_LAND_BESIDE_GEMM_WORKGROUPS` there, a budget the user sets holds there too.
    pub beside_link: (Link, Link),
    /// The path asked for (mapped falls back to staged at an end without MAPPABLE_PRIMARY_BUFFERS).
    pub want: Path,
    /// About how many bytes each direction streams (chunks of the largest size, at most 64 MiB; 2 to
    /// 64 of them) in the streamed measurement; 0 leaves it out.
    pub stream_bytes: u64,
    /// Threads each lane copies on in the streamed measurement (None: as the trigger loop gives
    /// each lane by default when every link is in use, `config::host::default_copy_threads`).
    pub stream_threads: Option<usize>,
    /// Submissions queued per device in the streamed measurement (None: as the trigger loop queues
    /// them by default, `IN_FLIGHT`); each direction gets twice as many slots, 4 to 8.
    pub stream_in_flight: Option<usize>,
    /// A GEMM (its shape, its operands' type) to time each device's sending and landing beside, in
    /// one pass (`DuplexRow::beside`); None: not.
    pub beside_gemm: Option<(Shape, Dtype)>,
}

// The calibration gives the send and the landing kernels one budget, as the trigger loop does
// where the user sets it; where the link is unthrottled the loop's two defaults must agree too.
const _: () = assert!(crate::lower::HOST_SEND_WORKGROUPS == crate::lower::HOST_LAND_WORKGROUPS);

impl Default for Options {
    /// 1 to 256 MiB, 1 to 16 threads, 5 reps, steps on the trigger loop's budget for an unthrottled
    /// link (`HOST_SEND_WORKGROUPS`).
    fn default() -> Self {
        Options {
            bytes: [1u64, 4, 16, 64, 256].iter().map(|m| m << 20).collect(),
            threads: vec![1, 2, 4, 8, 16],
            reps: 5,
            step_link: Link::Workgroups(crate::lower::HOST_SEND_WORKGROUPS),
            beside_link: (
                Link::Workgroups(crate::lower::HOST_SEND_BESIDE_GEMM_WORKGROUPS),
                Link::Workgroups(crate::lower::HOST_LAND_BESIDE_GEMM_WORKGROUPS),
            ),
            want: Path::ZeroCopy,
            stream_bytes: 4 << 30,
            stream_threads: None,
            stream_in_flight: None,
            beside_gemm: None,
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
    /// Each device's send and landing at once, where its links are zero-copy (older tables have none).
    #[serde(default)]
    pub duplex: Vec<DuplexRow>,
    /// Whether the devices were opened on one adapter (`--devices N`): they then time-share one GPU,
    /// so a streamed rate is that GPU's, not a link's between GPUs.
    #[serde(default)]
    pub one_gpu: bool,
}

/// The links streamed: `chunks` chunks of `bytes` per direction through `slots` slots (the sender's
/// kernel writing the next chunk while a copy lane of `threads` copies an earlier one), every
/// direction of `directions` at once; GB/s per direction in that order, first submission to last
/// copy.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct StreamRow {
    pub directions: Vec<(usize, usize)>,
    pub bytes: u64,
    pub chunks: usize,
    /// Slots per direction (tables saved before it streamed through 2).
    #[serde(default = "two")]
    pub slots: usize,
    /// Submissions queued per device (tables saved before it queued 2).
    #[serde(default = "two")]
    pub in_flight: usize,
    pub threads: usize,
    pub gbps: Vec<f64>,
}

fn two() -> usize {
    2
}

/// Measures every ordered pair of `devices` (each direction its own link) per `opts`. Every size's
/// payload is checked byte for byte in the inbox after its last repetition.
pub fn calibrate(devices: &Devices, opts: &Options) -> Result<HostLinkTable> {
    check_options(devices, opts)?;
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
        timer: Timestamps::host_clock().clock().into(),
        reps: opts.reps,
        rows: Vec::new(),
        streams: Vec::new(),
        duplex: Vec::new(),
        one_gpu: matches!(devices.spec, DeviceSpec::Count(n) if n > 1),
    };
    // Per device: the payload its step kernel reads as a sender, the counters it binds (never
    // bumped), and where its step kernel puts a zero-copy chunk as a receiver.
    let mut srcs = Vec::new();
    for sender in &devices.gpus {
        use wgpu::BufferUsages as U;
        let usage = U::STORAGE | U::COPY_SRC | U::COPY_DST;
        let src = sender.buffer("calibration payload", cap, usage)?;
        sender.queue.write_buffer(&src, 0, payload);
        let counters = sender.buffer("calibration counters", 16, U::STORAGE)?;
        // A tail past the largest chunk, so that a read that writes past its chunk shows there.
        let landing = sender.buffer(
            "calibration landing",
            cap + ends::POISON_TAIL,
            U::STORAGE | U::COPY_SRC | U::COPY_DST,
        )?;
        srcs.push(Ends {
            src,
            counters,
            landing,
        });
    }
    let rig = Rig {
        devices,
        kernels: &kernels,
        ends: &srcs,
        payload,
    };
    for from in 0..devices.len() {
        for to in (0..devices.len()).filter(|&t| t != from) {
            let mut link = HostLink::new(&devices.gpus, from, to, cap, 1, opts.want)?;
            table.directions.push(Direction {
                from,
                to,
                send: link.send,
                recv: link.recv,
            });
            for &bytes in &opts.bytes {
                table
                    .rows
                    .extend(measure_size(&rig, &mut link, bytes, opts)?);
            }
        }
    }
    table.duplex = duplex::measure_duplex(&rig, cap, opts)?;
    table.streams = measure_streams(&rig, &table.directions, cap, opts)?;
    Ok(table)
}

/// Refuses a calibration with fewer than two devices, nothing to measure, or a size the step kernel
/// cannot move (a positive multiple of 16 bytes).
fn check_options(devices: &Devices, opts: &Options) -> Result<()> {
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
    Ok(())
}

/// What every measurement of one calibration shares: the devices, their step kernels, their
/// buffers ([`Ends`]) and the payload the senders' buffers hold.
struct Rig<'a> {
    devices: &'a Devices,
    kernels: &'a [StepKernel],
    ends: &'a [Ends],
    payload: &'a [u8],
}

/// The rows of one direction (`link`) at one chunk size: one per copy thread count (one alone on a
/// zero-copy link), medians of `opts.reps` repetitions after an untimed one; the payload checked
/// where it arrived after the last.
fn measure_size(
    rig: &Rig,
    link: &mut HostLink,
    bytes: u64,
    opts: &Options,
) -> Result<Vec<HostLinkRow>> {
    let Rig {
        devices, kernels, ..
    } = *rig;
    let (from, to) = (link.from, link.to);
    let mut write = StepWrite::new(
        (&devices.gpus[from], &kernels[from]),
        (&rig.ends[from].src, &rig.ends[from].counters),
        link,
        0,
        (bytes, opts.step_link),
    )?;
    // A zero-copy link has no host copy (no threads to vary): its chunk arrives by the receiver's
    // landing kernel, timed where a host copy's maps and copy are.
    let mut read = if link.zero_copy() {
        let e = &rig.ends[to];
        let ends = (&e.landing, &e.counters);
        Some(ZeroCopyRead::new(
            devices,
            kernels,
            ends,
            link,
            (0, bytes, opts.step_link),
        )?)
    } else {
        None
    };
    // Nor has an engine link: its chunk arrives by the receiver's copy, timed as the copy.
    let threads = if read.is_some() || link.engine() {
        vec![0]
    } else {
        opts.threads.clone()
    };
    let mut rows = Vec::new();
    for &threads in &threads {
        let mut pool = CopyPool::new(threads.max(1))?;
        let (mut writes, mut map, mut copy, mut total) = (vec![], vec![], vec![], vec![]);
        if let Some(read) = &read {
            read.poison(devices, bytes);
        }
        for rep in 0..=opts.reps {
            let written = write.time(link)?;
            let t1 = Instant::now();
            let (waited, copied) = match &mut read {
                Some(read) => (0.0, read.time(devices, bytes)?),
                None => {
                    let t = link.transfer(&devices.gpus, 0, bytes, None, &mut pool)?;
                    (t.wait.as_secs_f64(), t.copy.as_secs_f64())
                }
            };
            if rep > 0 {
                writes.push(written);
                map.push(waited);
                copy.push(copied);
                total.push(written + t1.elapsed().as_secs_f64());
            }
        }
        let (w, m, c, t) = (median(&writes), median(&map), median(&copy), median(&total));
        let gbps = |s: f64| bytes as f64 / s.max(1e-9) / 1e9;
        rows.push(HostLinkRow {
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
    let want = &rig.payload[..bytes as usize];
    if let Some(read) = &read {
        read.check(devices, bytes, want)?;
    }
    check_arrived(devices, link, 0, bytes, want)?;
    Ok(rows)
}

/// The links streamed as the trigger loop drives them: each direction of `directions` alone, the
/// ring's directions at once (more than 2 devices), then all at once; none where
/// `opts.stream_bytes` is 0.
fn measure_streams(
    rig: &Rig,
    directions: &[Direction],
    cap: u64,
    opts: &Options,
) -> Result<Vec<StreamRow>> {
    let stream_bytes = cap.min(STREAM_CHUNK);
    let chunks = opts.stream_bytes.div_ceil(stream_bytes).clamp(2, 64) as usize;
    let dirs: Vec<(usize, usize)> = directions.iter().map(|d| (d.from, d.to)).collect();
    // The threads the trigger loop gives each lane when every link is in use.
    let threads = opts
        .stream_threads
        .unwrap_or_else(|| crate::config::host::default_copy_threads(dirs.len()));
    let mut cases: Vec<Vec<(usize, usize)>> = dirs.iter().map(|&d| vec![d]).collect();
    let n = rig.devices.len();
    if n > 2 {
        cases.push((0..n).map(|d| (d, (d + 1) % n)).collect());
    }
    if dirs.len() > 1 {
        cases.push(dirs);
    }
    if opts.stream_bytes == 0 {
        cases.clear();
    }
    let in_flight = opts
        .stream_in_flight
        .unwrap_or(crate::modes::IN_FLIGHT)
        .max(1);
    let stream_opts = StreamOptions {
        bytes: stream_bytes,
        chunks,
        threads,
        in_flight,
        slots: (2 * in_flight).clamp(STREAM_SLOTS, crate::lower::MAX_SLOTS),
        step_link: opts.step_link,
        want: opts.want,
    };
    cases
        .into_iter()
        .map(|dirs| {
            let (devices, kernels, ends) = (rig.devices, rig.kernels, rig.ends);
            let gbps = stream(devices, kernels, ends, &dirs, &stream_opts, rig.payload)?;
            Ok(StreamRow {
                directions: dirs,
                bytes: stream_bytes,
                chunks,
                slots: stream_opts.slots,
                in_flight,
                threads,
                gbps,
            })
        })
        .collect()
}

/// Fails where the receiver's inbox does not hold `want` (on the staged path, after landing it).
pub(super) fn check_arrived(
    devices: &Devices,
    link: &HostLink,
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

#[cfg(test)]
mod tests {
    use super::table::size;
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
                slots: 2,
                in_flight: 2,
                threads: 8,
                gbps: vec![30.0, 29.5],
            }],
            duplex: vec![DuplexRow {
                device: 1,
                send: (1, 0),
                land: (0, 1),
                bytes: 256 << 20,
                write_gbps: 48.0,
                read_gbps: 40.0,
                passes_gbps: 22.0,
                one_pass_gbps: 39.5,
                copy_write_gbps: 50.0,
                copy_read_gbps: 51.0,
                copies_gbps: 45.0,
                beside: None,
            }],
            one_gpu: false,
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
            text.contains("streamed 16 x 64 MiB through 2 slots, 2 queued per device, copies on 8 threads, all directions at once: 0->1 30.00 GB/s, 1->0 29.50 GB/s"),
            "{text}"
        );
        // A pair both ways at once, read against its devices' own rate at once: 29.5 of 39.5.
        assert!(
            text.contains("1->0 29.50 GB/s; the slowest is 75% of the 39.50 GB/s each device sends and lands at once"),
            "{text}"
        );
        assert!(
            text.contains("device 1 sending to 0 and landing from 0 at once (zero-copy, 256 MiB each): its kernels 39.50 GB/s each in one pass (22.00 in two), alone write 48.00, read 40.00; the queue's copies 45.00 GB/s each, alone 50.00, 51.00"),
            "{text}"
        );
        // Devices on one GPU time-share it: their streamed rows are said to be the GPU's, and not read
        // against the devices' own rate.
        let shared = HostLinkTable {
            one_gpu: true,
            ..t.clone()
        };
        let text = shared.text();
        assert!(!text.contains("the slowest is"), "{text}");
        assert!(text.contains("time-share it"), "{text}");
        let back: HostLinkTable =
            serde_json::from_str(&serde_json::to_string(&t).unwrap()).unwrap();
        assert_eq!(
            (back.rows.len(), back.streams.len(), back.duplex.len()),
            (4, 1, 1)
        );
        // A table saved before the duplex rows reads back without them.
        let mut old = serde_json::to_value(&t).unwrap();
        old.as_object_mut().unwrap().remove("duplex");
        let old: HostLinkTable = serde_json::from_value(old).unwrap();
        assert!(old.duplex.is_empty());
    }
}
