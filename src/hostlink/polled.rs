//! The polled link (shaders/polled.wgsl): a chunk crosses in slices through a ring of slots that both
//! ends reach (host memory imported into the devices, a device's BAR, or one device's own memory for
//! a loopback: [`Memory`]), each slice handed over by a flag the other end polls (a kernel, or a host
//! thread where an end is the host), with no submission or host round trip between slices.
//!
//! This is how NCCL's host-memory transport moves a step; the host link of src/hostlink.rs instead
//! hands a whole chunk over per submission, the receiver's kernel launched only once the sender's
//! submission completed. Vulkan does not promise that one device's stores reach another device while
//! its kernel still runs (storage atomics and barriers are Device-scope), so this module measures
//! whether a driver delivers them: every receiver checks each word against the pattern its sender
//! wrote (a stale slot or a word read before its flag is a mismatch), every wait is bounded (a flag
//! that never comes ends the run as a timeout, never a hang), and results are poisoned before each run.
//!
//! One device runs one dispatch: its send half, its receive half, or both (a loopback, or a device in
//! a ring or a pair sending one way and receiving the other), because a device's dispatches run in
//! order on its one queue and a receiver queued before its own device's sender would wait forever.

use std::time::{Duration, Instant};

mod ends;
mod memory;

use crate::error::{Error, Result};
use crate::gpu::Gpu;
use crate::reflect;
use crate::shaders::{self, Put, Variant};
use ends::{host_lane, relay, HostLane, LaneResult};
use memory::{link_memory, LinkMemory};
pub use t3_core::kernels::polled::{pattern, PolledParams, Role};

const KERNEL: &str = "polled.wgsl";

/// How long kernels get to end once aborted: those the abort word does not reach end after their
/// `spins` flag loads.
const AFTER_ABORT: Duration = Duration::from_secs(60);

/// The kernel's bindings, in binding order, by the names its WGSL gives them (src/reflect.rs checks
/// these against naga's reflection of the kernel).
pub const ROLES: [&str; 6] = ["dst", "p", "out_flags", "out_data", "in_flags", "in_data"];

/// A `const` of shaders/polled.wgsl, reflected by build.rs (it declares every one asked for here).
fn layout_constant(name: &str) -> u32 {
    reflect::constant(KERNEL, name)
        .unwrap_or_else(|| panic!("build.rs reflects {name} from shaders/{KERNEL}"))
}

/// One end of a link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    /// Host threads, one per lane.
    Host,
    /// Device `i` of the devices given (a kernel's workgroups, one per lane).
    Device(usize),
}

impl std::fmt::Display for End {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            End::Host => write!(f, "host"),
            End::Device(i) => write!(f, "device {i}"),
        }
    }
}

/// Where a link's slots and flags live.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Memory {
    /// Host memory imported into every device end (`VK_EXT_external_memory_host`).
    Host,
    /// The device's own memory: a loopback only (both ends on one device).
    Device,
    /// Slots in host memory, each device end's flags in its own memory that the host maps (its
    /// BAR): a running kernel sees what the host writes there, where it does not see host memory
    /// change. Between two devices a host thread relays each lane's flags from one BAR to the other.
    Bar,
    /// Between two devices: the flags and slots in the receiver's own memory, mapped for the host and
    /// imported into the sender ([`shared::import_mapped`]): the sender's kernel writes the slices and
    /// their flags straight into the receiver's memory over the bus. The sender's waits read the
    /// receiver's memory from afar: give the ring a slot per slice.
    Peer,
}

impl Memory {
    pub fn name(self) -> &'static str {
        match self {
            Memory::Host => "host memory",
            Memory::Device => "device memory",
            Memory::Bar => "flags in BAR",
            Memory::Peer => "receiver's",
        }
    }
}

/// How a kernel reads what the other end wrote into host memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlagLoad {
    /// Flags by `atomicLoad` (Device-scope, relaxed), slots by plain loads.
    Atomic,
    /// Flags by `atomicOr(flag, 0)`: a read-modify-write, performed where the device's atomics are.
    /// Where the other end writes the same word over the bus the two are not atomic together, so a
    /// write-back may undo a publish; a flag so lost reads as one that never came.
    Rmw,
    /// `atomicLoad`, with the flags and slots declared `@coherent @volatile` (SPIR-V Coherent and
    /// Volatile: every load goes to memory).
    Volatile,
}

impl FlagLoad {
    pub const ALL: [FlagLoad; 3] = [FlagLoad::Atomic, FlagLoad::Rmw, FlagLoad::Volatile];

    pub fn name(self) -> &'static str {
        match self {
            FlagLoad::Atomic => "atomic",
            FlagLoad::Rmw => "rmw",
            FlagLoad::Volatile => "volatile",
        }
    }

    /// The kernel's source with this load: shaders/polled.wgsl rewritten where it says so.
    fn source(self, gpu: &Gpu, variant: &Variant) -> Result<String> {
        let src = variant.source(None)?;
        let rewrites: Vec<(String, String)> = match self {
            FlagLoad::Atomic => return Ok(src),
            FlagLoad::Rmw => ["out", "in"]
                .map(|e| {
                    (
                        format!("return atomicLoad(&{e}_flags[at]);"),
                        format!("return atomicOr(&{e}_flags[at], 0u);"),
                    )
                })
                .to_vec(),
            FlagLoad::Volatile => {
                let need = wgpu::Features::MEMORY_DECORATION_COHERENT
                    | wgpu::Features::MEMORY_DECORATION_VOLATILE;
                if !gpu.features.contains(need) {
                    return Err(Error::MissingFeature {
                        adapter: gpu.describe(),
                        feature: "MEMORY_DECORATION_COHERENT and MEMORY_DECORATION_VOLATILE",
                        needed_for: "the polled link's volatile flag loads".into(),
                    });
                }
                (2..=5)
                    .map(|b| {
                        let at = format!("@group(0) @binding({b})");
                        (at.clone(), format!("{at} @coherent @volatile"))
                    })
                    .collect()
            }
        };
        let mut src = src;
        for (from, to) in rewrites {
            if !src.contains(&from) {
                return Err(Error::invalid(
                    "polled link kernel",
                    format!("shaders/{KERNEL} without `{from}`"),
                    format!("what --flag-load {} rewrites", self.name()),
                ));
            }
            src = src.replace(&from, &to);
        }
        Ok(src)
    }
}

/// The shape of every link's ring.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ring {
    /// Lanes per link (a workgroup or a host thread at each end, each with its own slots and flags).
    pub lanes: u32,
    /// Slots per lane.
    pub slots: u32,
    /// Slices each lane moves.
    pub slices: u32,
    /// u32 words per slice.
    pub words: u32,
    /// Flag loads a kernel's wait makes before it gives up (rounded up to the kernel's rounds of
    /// `ABORT_EVERY` loads; at most 2^31), should the host's abort word (set when a run's time is up)
    /// not reach it.
    pub spins: u32,
}

impl Ring {
    /// Bytes one link moves.
    pub fn bytes(&self) -> u64 {
        self.lanes as u64 * self.slices as u64 * self.words as u64 * 4
    }

    fn data_bytes(&self) -> u64 {
        self.lanes as u64 * self.slots as u64 * self.words as u64 * 4
    }

    /// Each lane's line of flags, then the abort word's line.
    fn flag_bytes(&self) -> u64 {
        (self.lanes as u64 + 1) * layout_constant("FLAG_STRIDE") as u64 * 4
    }

    fn check(&self, gpus: &[Gpu]) -> Result<()> {
        for (what, v) in [
            ("polled link lanes", self.lanes),
            ("polled link slots", self.slots),
            ("polled link slices", self.slices),
            ("polled link words per slice", self.words),
            ("polled link spins", self.spins),
        ] {
            if v == 0 {
                return Err(Error::invalid(what, v, "at least 1"));
            }
        }
        let lane_words = self.slices as u64 * self.words as u64;
        if self.lanes > 1 << 15 || self.spins > 1 << 31 || lane_words > u32::MAX as u64 {
            return Err(Error::invalid(
                "polled link ring",
                format!("{self:?}"),
                "at most 2^15 lanes, 2^31 spins and 2^32 words moved per lane",
            ));
        }
        for g in gpus {
            g.check_binding("polled link slots", self.data_bytes())?;
        }
        Ok(())
    }
}

/// What one link did in one run.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Outcome {
    pub from: String,
    pub to: String,
    pub memory: &'static str,
    /// Bytes the link was to move.
    pub bytes: u64,
    /// From the first submission to the last end done (every link of the run at once).
    pub seconds: f64,
    /// Words the receiver read that were not what the sender wrote.
    pub mismatches: u64,
    /// Lanes (at either end) and relays that fell short: a wait gave up, or a receiving kernel
    /// checked fewer words than the slices it counts hold (its loops ended early).
    pub timeouts: u32,
    /// Slices the receiver checked, of `lanes * slices`.
    pub slices: u64,
    /// The longest wait of a receiving kernel, in flag loads (0 at a host receiver).
    pub longest_wait: u32,
}

impl Outcome {
    pub fn gbps(&self) -> f64 {
        self.bytes as f64 / self.seconds.max(1e-12) / 1e9
    }

    /// Whether every slice arrived, checked, with no wait given up.
    pub fn ok(&self, ring: &Ring) -> bool {
        self.mismatches == 0
            && self.timeouts == 0
            && self.slices == ring.lanes as u64 * ring.slices as u64
    }
}

/// Work a caller dispatches in a device's pass after the link's kernel ([`Polled::run_beside`]),
/// given the device's index.
pub type Beside<'b> = &'b mut dyn FnMut(usize, &mut wgpu::ComputePass<'_>) -> Result<()>;

/// A device's dispatch: its role, its bind group, its results.
struct Dispatch {
    device: usize,
    role: Role,
    /// The link it sends on (workgroups 0..lanes) and the one it receives on (lanes..2*lanes, or
    /// 0..lanes for a receive-only dispatch).
    sends: Option<usize>,
    receives: Option<usize>,
    params: wgpu::Buffer,
    bind_group: wgpu::BindGroup,
    pipeline: wgpu::ComputePipeline,
    results: wgpu::Buffer,
}

/// Links set up to run: their memory, each device's dispatch, made once and run as often as asked.
pub struct Polled<'a> {
    gpus: &'a [Gpu],
    links: Vec<(End, End)>,
    ring: Ring,
    memory: Memory,
    mem: Vec<LinkMemory>,
    dispatches: Vec<Dispatch>,
    /// Held for a whole run: two runs at once would write the same flags and slots.
    running: std::sync::Mutex<()>,
}

impl<'a> Polled<'a> {
    /// Sets up `links` over `gpus` with `ring`'s shape: refused where an end names no device, both
    /// ends are the host, a device sends or receives on more than one link, device memory is asked
    /// for anything but loopbacks, or a device cannot import host memory.
    pub fn new(
        gpus: &'a [Gpu],
        links: &[(End, End)],
        ring: Ring,
        memory: Memory,
        load: FlagLoad,
    ) -> Result<Self> {
        ring.check(gpus)?;
        for &(from, to) in links {
            for e in [from, to] {
                if let End::Device(i) = e {
                    if i >= gpus.len() {
                        return Err(Error::invalid(
                            "polled link end",
                            e,
                            format!("one of {} devices", gpus.len()),
                        ));
                    }
                }
            }
            if from == End::Host && to == End::Host {
                return Err(Error::invalid(
                    "polled link",
                    "host -> host",
                    "a device at one end",
                ));
            }
            if memory == Memory::Device && from != to {
                return Err(Error::invalid(
                    "polled link memory",
                    format!("device memory for {from} -> {to}"),
                    "host memory where the ends differ",
                ));
            }
        }
        let mem = links
            .iter()
            .enumerate()
            .map(|(i, &l)| link_memory(gpus, i, l, &ring, memory))
            .collect::<Result<Vec<_>>>()?;
        let mut dispatches = Vec::new();
        for (d, gpu) in gpus.iter().enumerate() {
            let sends: Vec<usize> = (0..links.len())
                .filter(|&i| links[i].0 == End::Device(d))
                .collect();
            let receives: Vec<usize> = (0..links.len())
                .filter(|&i| links[i].1 == End::Device(d))
                .collect();
            if sends.len() > 1 || receives.len() > 1 {
                return Err(Error::invalid(
                    "polled links of a device",
                    format!("device {d}: {} out, {} in", sends.len(), receives.len()),
                    "at most one out and one in",
                ));
            }
            let (s, r) = (sends.first().copied(), receives.first().copied());
            if s.is_none() && r.is_none() {
                continue;
            }
            dispatches.push(dispatch(gpu, d, (s, r), &mem, &ring, load)?);
        }
        Ok(Polled {
            gpus,
            links: links.to_vec(),
            ring,
            memory,
            mem,
            dispatches,
            running: std::sync::Mutex::new(()),
        })
    }

    /// Runs every link at once, its words mixed with `tag`; each wait bounded by `bound`.
    pub fn run(&self, tag: u32, bound: Duration) -> Result<Vec<Outcome>> {
        self.run_with(tag, bound, Some(tag), None)
    }

    /// [`Polled::run`] with other work in each device's pass after the link's kernel, which
    /// `beside` dispatches (given the device's index): the link's workgroups are then resident
    /// before that work fills the device, as a receiver waiting beside a GEMM would be.
    pub fn run_beside(&self, tag: u32, bound: Duration, beside: Beside) -> Result<Vec<Outcome>> {
        self.run_with(tag, bound, Some(tag), Some(beside))
    }

    /// The devices' part of [`Polled::run`] alone: host ends and relays never act, as when a host
    /// thread stalls (the kernels' waits give up: tests/polled.rs).
    pub fn run_without_host(&self, tag: u32, bound: Duration) -> Result<Vec<Outcome>> {
        self.run_with(tag, bound, None, None)
    }

    /// [`Polled::run`] with the host ends writing and checking the words of `host_tag` where the
    /// kernels write and check `tag`'s: every word a receiver reads is then wrong (tests/polled.rs
    /// plants it so, to see the check fail).
    pub fn run_with_host_tag(
        &self,
        tag: u32,
        host_tag: u32,
        bound: Duration,
    ) -> Result<Vec<Outcome>> {
        self.run_with(tag, bound, Some(host_tag), None)
    }

    /// Runs with the host ends acting on `host_tag`'s words, or not acting at all (None), and
    /// `beside`'s work after each device's kernel in its pass.
    fn run_with(
        &self,
        tag: u32,
        bound: Duration,
        host_tag: Option<u32>,
        mut beside: Option<Beside>,
    ) -> Result<Vec<Outcome>> {
        let _one_run = self.running.lock().unwrap_or_else(|e| e.into_inner());
        let ring = self.ring;
        self.reset(tag);
        let t0 = Instant::now();
        let mut submitted = Vec::new();
        for d in &self.dispatches {
            let gpu = &self.gpus[d.device];
            let mut enc = gpu.device.create_command_encoder(&Default::default());
            // Flags in device memory are zeroed by the device, ahead of the dispatch that polls them
            // (the host's are zeroed by `reset`).
            if self.memory == Memory::Device {
                for l in [d.sends, d.receives].into_iter().flatten() {
                    enc.clear_buffer(self.mem[l].view(d.device).0, 0, None);
                }
            }
            {
                let mut pass = enc.begin_compute_pass(&Default::default());
                gpu.dispatch(
                    &mut pass,
                    &d.pipeline,
                    &d.bind_group,
                    d.role.workgroups(ring.lanes),
                );
                if let Some(b) = beside.as_mut() {
                    b(d.device, &mut pass)?;
                }
            }
            submitted.push(gpu.submit("the polled link", vec![enc.finish()])?);
        }
        let deadline = t0 + bound;
        // Per link: its host lanes' results, then its relay's.
        let host: Vec<(Vec<LaneResult>, Vec<LaneResult>)> = std::thread::scope(|s| {
            let mut threads = Vec::new();
            for (i, &(from, to)) in self.links.iter().enumerate() {
                let Some(host_tag) = host_tag else {
                    continue;
                };
                if from == End::Host || to == End::Host {
                    for (lane, at) in self.host_lanes(i).into_iter().enumerate() {
                        let send = from == End::Host;
                        let t = s.spawn(move || {
                            host_lane(at, lane as u32, send, &ring, host_tag, deadline)
                        });
                        threads.push((i, false, t));
                    }
                }
                if let Some(copies) = self.mem[i].relay {
                    threads.push((i, true, s.spawn(move || relay(copies, &ring, deadline))));
                }
            }
            let mut per_link = vec![(Vec::new(), Vec::new()); self.links.len()];
            for (i, relayed, t) in threads {
                let r = t.join().unwrap_or(LaneResult::gave_up());
                if relayed {
                    per_link[i].1.push(r);
                } else {
                    per_link[i].0.push(r);
                }
            }
            per_link
        });
        let mut aborted = false;
        for (d, idx) in self.dispatches.iter().zip(submitted) {
            let gpu = &self.gpus[d.device];
            let pending = "the polled link's kernels";
            if aborted {
                gpu.wait(Some(idx), pending, bound.max(AFTER_ABORT))?;
                continue;
            }
            let left = deadline
                .saturating_duration_since(Instant::now())
                .max(Duration::from_secs(1));
            match gpu.wait(Some(idx.clone()), pending, left) {
                // A kernel still waits for a flag: the run's time is up, said by the abort word, and
                // every kernel left gets as long to end; they count the waits they give up.
                Err(Error::Timeout { .. }) => {
                    self.abort();
                    aborted = true;
                    gpu.wait(Some(idx), pending, bound.max(AFTER_ABORT))?;
                }
                r => r?,
            }
        }
        let seconds = t0.elapsed().as_secs_f64();
        self.outcomes(host, seconds)
    }

    /// Flags the host reaches to zero, params for `tag` and results poisoned, before a run.
    fn reset(&self, tag: u32) {
        for m in &self.mem {
            for &f in &m.flag_copies {
                let n = self.ring.flag_bytes() as usize;
                // SAFETY: no device or thread runs between runs; each copy is `flag_bytes` long.
                unsafe { std::ptr::write_bytes(f as *mut u8, 0, n) };
            }
        }
        for d in &self.dispatches {
            let gpu = &self.gpus[d.device];
            let role = d.role as u32;
            let p = PolledParams {
                lanes: self.ring.lanes,
                slots: self.ring.slots,
                slices: self.ring.slices,
                words: self.ring.words,
                role,
                spins: self.ring.spins,
                tag,
                _pad0: 0,
            };
            gpu.queue.write_buffer(&d.params, 0, bytemuck::bytes_of(&p));
            let words = d.results.size() as usize / 4;
            gpu.queue
                .write_buffer(&d.results, 0, bytemuck::cast_slice(&vec![u32::MAX; words]));
        }
    }

    /// Sets the abort word of every link the host reaches (host memory, BARs): its kernels' waits give
    /// up. A device-memory loopback has none: its waits end by their spins.
    fn abort(&self) {
        let at = self.ring.lanes as usize * layout_constant("FLAG_STRIDE") as usize * 4;
        for m in &self.mem {
            for &f in &m.flag_copies {
                // SAFETY: the abort word is 4-aligned inside each copy (`Ring::flag_bytes`).
                ends::publish(unsafe { ends::flag_at(f + at) }, 1);
            }
        }
    }

    /// The addresses of link `i`'s lanes in its host memory (none where the memory is a device's).
    fn host_lanes(&self, i: usize) -> Vec<HostLane> {
        let Some(h) = &self.mem[i].host else {
            return Vec::new();
        };
        let stride = layout_constant("FLAG_STRIDE") as usize * 4;
        let lane_bytes = self.ring.slots as usize * self.ring.words as usize * 4;
        (0..self.ring.lanes as usize)
            .map(|l| HostLane {
                flags: h.flags + l * stride,
                slots: h.slots + l * lane_bytes,
            })
            .collect()
    }

    fn outcomes(
        &self,
        host: Vec<(Vec<LaneResult>, Vec<LaneResult>)>,
        seconds: f64,
    ) -> Result<Vec<Outcome>> {
        let lanes = self.ring.lanes as usize;
        let words = layout_constant("RESULT_WORDS") as usize;
        let mut device: Vec<(Vec<LaneResult>, Vec<LaneResult>)> =
            vec![(Vec::new(), Vec::new()); self.links.len()];
        for d in &self.dispatches {
            let gpu = &self.gpus[d.device];
            let n = d.role.workgroups(self.ring.lanes) as usize;
            let r = gpu.read_u32("the polled link's results", &d.results, 0, n * words)?;
            let lane = |w: usize| LaneResult::from_words(&r[w * words..(w + 1) * words]);
            if let Some(l) = d.sends {
                device[l].0 = (0..lanes).map(lane).collect();
            }
            if let Some(l) = d.receives {
                let first = if d.role == Role::Receive { 0 } else { lanes };
                device[l].1 = (first..first + lanes).map(lane).collect();
            }
        }
        Ok(self
            .links
            .iter()
            .zip(host)
            .zip(device)
            .map(|((&(from, to), (host, relays)), (sent, received))| {
                let (senders, receivers) = match (from, to) {
                    (End::Host, _) => (host, received),
                    (_, End::Host) => (sent, host),
                    _ => (sent, received),
                };
                Outcome {
                    from: from.to_string(),
                    to: to.to_string(),
                    memory: self.memory.name(),
                    bytes: self.ring.bytes(),
                    seconds,
                    mismatches: receivers.iter().map(|r| r.mismatches).sum(),
                    timeouts: senders
                        .iter()
                        .chain(&receivers)
                        .chain(&relays)
                        .filter(|r| r.timed_out)
                        .count() as u32,
                    slices: receivers.iter().map(|r| r.slices).sum(),
                    longest_wait: receivers.iter().map(|r| r.longest).max().unwrap_or(0),
                }
            })
            .collect())
    }
}

/// Device `d`'s dispatch: sending on link `sends`, receiving on `receives`, its flags read by `load`.
fn dispatch(
    gpu: &Gpu,
    d: usize,
    (sends, receives): (Option<usize>, Option<usize>),
    mem: &[LinkMemory],
    ring: &Ring,
    load: FlagLoad,
) -> Result<Dispatch> {
    let role = match (sends, receives) {
        (Some(s), Some(r)) if s == r => Role::Loopback,
        (Some(_), Some(_)) => Role::Duplex,
        (Some(_), None) => Role::Send,
        _ => Role::Receive,
    };
    let workgroups = role.workgroups(ring.lanes);
    if workgroups > gpu.max_workgroups_per_dim {
        return Err(Error::invalid(
            "polled link lanes",
            format!("{} ({workgroups} workgroups on device {d})", ring.lanes),
            format!(
                "at most {} workgroups a dispatch",
                gpu.max_workgroups_per_dim
            ),
        ));
    }
    let variant = Variant {
        kernel: KERNEL,
        gemm: None,
        put: Put::Word,
        epilogue: None,
    };
    let interface = variant.interface()?;
    let layout = shaders::layout(gpu, "polled link layout", interface);
    let module =
        shaders::module_from_source(gpu, "polled link", load.source(gpu, &variant)?, false)?;
    let pipeline = shaders::pipeline(gpu, "polled link", &layout, &module, &[])?;
    let storage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST;
    let params = gpu.init_buffer(
        "polled link params",
        bytemuck::bytes_of(&PolledParams::default()),
        wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
    );
    let words = role.workgroups(ring.lanes) as u64 * layout_constant("RESULT_WORDS") as u64;
    let results = gpu.buffer(
        "polled link results",
        words * 4,
        storage | wgpu::BufferUsages::COPY_SRC,
    )?;
    let unused = gpu.buffer("polled link (unused end)", 16, storage)?;
    let out = sends.map(|l| mem[l].view(d));
    let inn = match role {
        Role::Loopback => None,
        _ => receives.map(|l| mem[l].view(d)),
    };
    let named = [
        ("dst", &results),
        ("p", &params),
        ("out_flags", out.map_or(&unused, |v| v.0)),
        ("out_data", out.map_or(&unused, |v| v.1)),
        ("in_flags", inn.map_or(&unused, |v| v.0)),
        ("in_data", inn.map_or(&unused, |v| v.1)),
    ];
    assert_eq!(
        named.map(|n| n.0),
        ROLES,
        "the polled link bound out of its roles' order"
    );
    let entries: Vec<wgpu::BindGroupEntry> = named
        .iter()
        .enumerate()
        .map(|(i, (_, b))| wgpu::BindGroupEntry {
            binding: i as u32,
            resource: b.as_entire_binding(),
        })
        .collect();
    let bind_group = gpu.device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("polled link"),
        layout: &layout,
        entries: &entries,
    });
    Ok(Dispatch {
        device: d,
        role,
        sends,
        receives,
        params,
        bind_group,
        pipeline,
        results,
    })
}
