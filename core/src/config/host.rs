//! The host trigger loop's choices (host mode, and sequential mode's waits across devices): each
//! set, or left to its default. The binary fills them in from `--host-loop` (src/cli/knobs.rs).

/// Most submissions the host trigger loop may keep queued per device.
pub const MAX_IN_FLIGHT: usize = 16;

/// How much GEMM work the host trigger loop puts in one submission (its counters come back only when
/// the submission completes, so this is the trigger's grain).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostGrain {
    /// One chunk per rank: a stage of several chunks per rank goes in several submissions, so the
    /// first chunks' steps go while the rest of the stage computes (T3's chunk-granular trigger).
    Chunk,
    /// A whole stage (every chunk its ranks produce for one step of the schedule) per submission:
    /// fewer, fuller submissions; a chunk's steps wait for its whole stage.
    Stage,
    /// Up to this many chunks per rank per submission (at least 2: [`HostGrain::chunks`]): a stage of c chunks per rank
    /// (a shard's chunks in the stage order, one chunk of each shard in the chunk order) in
    /// ceil(c / n) submissions, between `Chunk` (1) and `Stage`. Across devices a chunk's send
    /// can land only in a submission after its sender's completed, so a stage split in two lets
    /// the first half's chunks cross while the second half computes.
    Chunks(usize),
}

/// A grain is written as its name ("chunk", "stage" or N), as the flag and the tune table take it.
impl serde::Serialize for HostGrain {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(&self.name())
    }
}

impl HostGrain {
    /// Up to `n` chunks per rank per submission, one spelling per grain: 1 is [`HostGrain::Chunk`].
    pub fn chunks(n: usize) -> HostGrain {
        if n <= 1 {
            HostGrain::Chunk
        } else {
            HostGrain::Chunks(n)
        }
    }

    /// Chunks per rank a submission of GEMM work holds at most (None: a whole stage).
    pub fn chunks_per_submission(self) -> Option<usize> {
        match self {
            HostGrain::Chunk => Some(1),
            HostGrain::Chunks(n) => Some(n.max(1)),
            HostGrain::Stage => None,
        }
    }

    /// The grain as `--host-loop grain=` and the tune table write it.
    pub fn name(self) -> String {
        match self {
            HostGrain::Chunk => "chunk".into(),
            HostGrain::Stage => "stage".into(),
            HostGrain::Chunks(n) => n.to_string(),
        }
    }
}

/// How the host trigger loop waits for its devices.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum HostWait {
    /// Non-blocking polls back to back (one host core busy): sees a completion within microseconds.
    Spin,
    /// Blocked in the driver on one device (polls 20 µs apart on several): on the H200 the blocked
    /// wait returns up to hundreds of µs after the GPU finishes, and every such delay is a step
    /// triggered that much later.
    Block,
}

/// How a chunk between devices is handed to its receiver on a zero-copy link.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Handoff {
    /// The receiver's landing goes out once the sender's submission completed (its fence): after
    /// whatever GEMM work rode with the send, and then behind the receiver's own queued work.
    Fence,
    /// The receiver's landing goes out ahead, beside its GEMM work, waiting in the kernel at a gate
    /// the host raises once the sender's kernel flags the chunk written (or its submission
    /// completed): the chunk lands under the receiver's GEMM. Needs memory each device shares with
    /// the host (its BAR); the fence where a link has none.
    Flag,
}

/// What sends host mode's chunks to another device over a zero-copy link, where the chunk comes
/// straight from a GEMM (the first step of a ring, the direct reduce-scatter's, the all-gather's).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SendTrigger {
    /// The host: it sees the chunk's counter once the GEMM's submission completed and queues its
    /// send kernel in a later submission.
    Host,
    /// The device (T3's tracker and trigger on the GPU): the send kernel goes in the pass of the
    /// GEMM work making its chunk, ahead of it, and waits in the kernel until the chunk's counter
    /// reaches its mark, so each chunk crosses while the rest of the stage computes. A send whose
    /// wait runs out (its spins) writes nothing and says so in its slot: it goes again, as with
    /// the host's trigger. Needs the rank's output and tracker bound through views of their own
    /// (Vulkan), else the send waits out its spins before the GEMM and goes again after.
    Device,
}

/// The host trigger loop's knobs; a mode's own choice (`modes::Host`'s fields) wins over them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct HostOptions {
    /// Submissions kept queued per device, 1 to 16 (None: 2). A knob for the pipeline's depth
    /// against step delay: 1 makes every decision wait for the device (its idle time per GEMM stage
    /// is the loop's turnaround), which pays only where stages are long; more than 2 hides slower
    /// decisions but delays steps by a stage each.
    pub in_flight: Option<usize>,
    /// GEMM work per submission (None: a stage; the command line's model sets 2 chunks where the
    /// ranks span four GPUs or more, `tune::model::across_devices_defaults`). A stage's chunks side by
    /// side fill the GPU and its steps ride in the same passes, while a chunk per submission
    /// multiplies the submissions and runs each chunk's GEMM alone: on one GPU host mode then falls
    /// well behind sequential, and across devices, where a zero-copy chunk's transfer takes SMs
    /// beside the next chunk's GEMM, chunk grain falls below sequential on the long GEMMs where
    /// stage grain does not (see BENCHMARKS.md); `Chunks(n)` goes between the two.
    pub grain: Option<HostGrain>,
    /// How the loop waits for its devices (None: spin on GPUs, block where any device is a CPU
    /// adapter, whose cores the spinning thread would take from the device itself).
    pub wait: Option<HostWait>,
    /// Threads each link's copies run on, its copy lane (None: [`default_copy_threads`]).
    pub copy_threads: Option<usize>,
    /// How chunks are handed between devices on zero-copy links (None: the fence).
    pub handoff: Option<Handoff>,
    /// What sends a GEMM's chunk to another device (None: [`SendTrigger::Host`]).
    pub trigger: Option<SendTrigger>,
}

impl HostOptions {
    /// Threads each of `links` copy lanes runs on: `copy_threads`, else the default.
    pub fn copy_threads(&self, links: usize) -> usize {
        self.copy_threads
            .unwrap_or_else(|| default_copy_threads(links))
    }
}

/// Threads each link's copies run on by default, with `links` lanes copying at once: 8, or the
/// host's cores if fewer (one thread copies at about a third of the rate that 4 or more reach),
/// the cores shared out among the lanes (at least one each), so many links do not start threads by
/// the hundred.
pub fn default_copy_threads(links: usize) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let share = (cores / links.max(1)).max(1);
    8.min(share)
}
