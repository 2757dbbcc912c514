//! Recordings: GPU work as data, over handles the executor resolves (the ranks' buffers and its
//! pooled ones), with no wgpu type in them: what lowering produces and the executor encodes.

use crate::kernels::gather::GatherParams;
use crate::kernels::gemm::{GemmParams, StoreMode};
use crate::kernels::step::StepParams;
use crate::kernels::Put;
use crate::plan::Loc;

/// Which device a recording runs on (one today; the real-peers work adds more).
pub type DeviceId = usize;

/// A device buffer a recording names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Buffer {
    /// A rank's buffer for one chunk.
    Data(Loc),
    /// That buffer's tracker: [counter, done slots...].
    Tracker(Loc),
    /// A rank's buffer for one chunk, and its tracker, through views of their own (src/alias.rs):
    /// what a send that watches the GEMM writing them binds, so that wgpu puts no barrier between
    /// the two (the buffers themselves where the device made no views: then wgpu orders them).
    Watched(Loc),
    WatchedTracker(Loc),
    /// Rank p's A and B operands.
    A(usize),
    B(usize),
    /// One of [`Lowered::pool`]: buffers the executor makes (job tables, fused mode's packing).
    Pool(usize),
    /// View k (1..=its `views`) of pool buffer i: the same memory as another wgpu buffer, so a
    /// dispatch binding it follows one that writes `Pool(i)` (or another view) without a barrier
    /// (src/alias.rs); the same buffer where the device cannot alias.
    View(usize, usize),
    /// One of a host link's buffers (made by the link, imported into the executor).
    Link(LinkBox),
}

/// A buffer of one slot of a host link.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LinkBox {
    pub link: usize,
    pub slot: usize,
    pub end: End,
}

impl LinkBox {
    pub fn of(c: super::Crossing, end: End) -> Self {
        LinkBox {
            link: c.link,
            slot: c.slot,
            end,
        }
    }
}

/// Which buffer of a link slot: the boxes the kernels bind and what the host maps (the same buffer
/// where the device maps its kernels' buffers in place, else a staging copy).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum End {
    /// On the sender: the send half writes it.
    Outbox,
    /// On the sender: what the host maps to read.
    OutboxMap,
    /// On the receiver: the receive half reads it.
    Inbox,
    /// On the receiver: what the host maps to write.
    InboxMap,
    /// On the sender: the send half's flag, which its last workgroup bumps (the flag handoff).
    SendFlag,
    /// On the receiver: the gate its waiting landing polls (the flag handoff).
    LandGate,
}

/// A buffer the executor makes for the recordings.
#[derive(Clone, Debug)]
pub struct PoolBuffer {
    pub label: &'static str,
    pub bytes: u64,
    /// Contents of a table, written once; None: device working memory (counted in device memory).
    pub init: Option<Vec<u8>>,
    /// Bound only in windows ([`Resource::Window`]): only max_buffer_size bounds its size.
    pub windowed: bool,
    /// Also bound through this many more views ([`Buffer::View`]).
    pub views: usize,
}

/// Which bind group layout a binding follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Group {
    Gemm,
    Step,
    Fused,
    /// Fused mode's with the packed output in four windows of two buffers (`dst_2`, `dst_3` the
    /// second buffer's): where it passes what one buffer holds.
    Fused4,
    Gather,
}

impl Group {
    /// Each binding's role, 0.. in order: the name its kernels' WGSL gives the buffer (src/reflect.rs
    /// checks these against naga's reflection of every composition, and [`Binding::new`] every
    /// binding against these, so a swap on either side fails a test).
    pub fn roles(self) -> &'static [&'static str] {
        match self {
            Group::Gemm => &["dst", "p", "a", "b", "counters", "jobs"],
            Group::Step => &["dst", "p", "src", "counters", "acc"],
            Group::Fused => &[
                "dst", "p", "a", "b", "counters", "jobs", "table", "dst_hi", "b_hi",
            ],
            Group::Fused4 => &[
                "dst", "p", "a", "b", "counters", "jobs", "table", "dst_hi", "b_hi", "dst_2",
                "dst_3",
            ],
            Group::Gather => &["dst", "p", "t0", "t1", "t2", "t3", "t4", "t5", "t6"],
        }
    }
}

impl Binding {
    /// A binding of `group` with `params` and its resources named by role, in the group's order.
    pub fn new(group: Group, params: Params, named: &[(&str, Resource)]) -> Binding {
        let roles: Vec<&str> = named.iter().map(|(r, _)| *r).collect();
        assert_eq!(
            roles,
            group.roles(),
            "{group:?} bound out of its roles' order"
        );
        Binding {
            group,
            params,
            resources: named.iter().map(|&(_, r)| r).collect(),
        }
    }

    /// The binding with `buffer` in `role`'s place.
    pub fn rebind(&mut self, role: &str, buffer: Buffer) {
        let k = self
            .group
            .roles()
            .iter()
            .position(|&r| r == role)
            .unwrap_or_else(|| panic!("{:?} has no role {role}", self.group));
        self.resources[k] = Resource::Buffer(buffer);
    }
}

/// One entry of a bind group, in binding order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resource {
    /// The binding's own params (its slot of the executor's uniform buffer).
    Params,
    Buffer(Buffer),
    /// A range of a buffer (one window of a buffer larger than one binding may be).
    Window(Span),
}

impl Resource {
    /// The buffer it binds (whole or a window of), if any.
    pub fn buffer(self) -> Option<Buffer> {
        match self {
            Resource::Params => None,
            Resource::Buffer(b) => Some(b),
            Resource::Window(s) => Some(s.buffer),
        }
    }
}

/// A kernel's parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Params {
    Gemm(GemmParams),
    Step(StepParams),
    Gather(GatherParams),
}

impl Params {
    pub fn bytes(&self) -> &[u8] {
        match self {
            Params::Gemm(p) => bytemuck::bytes_of(p),
            Params::Step(p) => bytemuck::bytes_of(p),
            Params::Gather(p) => bytemuck::bytes_of(p),
        }
    }
}

/// A bind group: its layout, params and buffers.
#[derive(Clone, Debug, PartialEq)]
pub struct Binding {
    pub group: Group,
    pub params: Params,
    pub resources: Vec<Resource>,
}

/// What a step kernel waits for before it moves its chunk (shaders/step.wgsl's `WAIT`, `WATCH`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Wait {
    /// Nothing: it runs once its dependencies did (queue order, barriers).
    No,
    /// Its gate, which the host raises (the flag handoff's landing ahead of its chunk).
    Gate,
    /// Its source's counter reaching its mark, beside the GEMM bumping it (the device's trigger).
    Mark,
}

/// Which pipeline a dispatch runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kernel {
    Gemm(StoreMode),
    /// The tracked GEMM with plain stores on a persistent grid (`Config::gemm_grid`).
    GemmGrid,
    /// A step writing through `put`; `acc`: with the second source (its params' `has_acc`), a
    /// pipeline of its own (shaders/step.wgsl `ACC`); `wait`: a landing that waits for its gate
    /// first (`WAIT`: host mode's flag handoff).
    Step {
        put: Put,
        acc: bool,
        wait: Wait,
    },
    /// The GEMM whose epilogue is the device-side trigger; `split_b`: its packed B spans both
    /// windows (else the pipeline without the per-load branch between them); `split_c`: its packed
    /// output spans more than its first window (the watched GEMM is the tracked one where neither B nor the output does, else the
    /// windowed composition); `grid`: on the
    /// persistent grid (`GemmParams::grid_wg` workgroups loop over the tiles); `watched`: the
    /// tracker alone, the spares triggering (`--fused trigger=spares`, shaders/fused/watched.wgsl).
    Fused {
        split_b: bool,
        split_c: bool,
        grid: bool,
        watched: bool,
    },
    /// Fused mode's spare workgroups as a pipeline of their own (shaders/fused/spares.wgsl);
    /// `watch`: the spares are the trigger (`--fused trigger=spares`, the pipeline built with
    /// WATCH); `land`: they land the ring's last hops (`--fused land`, built with LAND: only there
    /// the landing's code and registers).
    Spares {
        watch: bool,
        land: bool,
    },
    /// Tracker counters into one buffer (src/gather.rs).
    Gather,
}

/// One dispatch: a pipeline over one of [`Lowered::bindings`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dispatch {
    pub kernel: Kernel,
    pub binding: usize,
    pub workgroups: u32,
}

/// One compute pass: the plan ops it realises (for timelines) and its dispatches in order.
#[derive(Clone, Debug, PartialEq)]
pub struct Pass {
    pub ops: Vec<usize>,
    pub dispatches: Vec<Dispatch>,
}

/// Bytes of one buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    pub buffer: Buffer,
    pub offset: u64,
    pub bytes: u64,
}

/// One command of a recording.
#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    /// Zero a whole buffer.
    Clear(Buffer),
    Copy {
        src: Span,
        dst: Buffer,
        dst_offset: u64,
    },
    /// A compute pass, timestamped where the device can.
    Pass(Pass),
    /// Copy these spans to the host once the submission completes.
    Read(Vec<Span>),
}

/// GPU work as data: one submission's commands on one device.
#[derive(Clone, Debug, PartialEq)]
pub struct Recording {
    pub device: DeviceId,
    pub label: &'static str,
    pub commands: Vec<Command>,
}

impl Recording {
    /// The passes, in order.
    pub fn passes(&self) -> impl Iterator<Item = &Pass> {
        self.commands.iter().filter_map(|c| match c {
            Command::Pass(p) => Some(p),
            _ => None,
        })
    }
}
