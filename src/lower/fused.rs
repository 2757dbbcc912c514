//! Fused mode's lowering: every rank's operands packed into one buffer per role, the GEMM over all
//! ranks' staggered jobs in one pass (one dispatch, or one per stage and run of ranks), the forward
//! table its epilogue or spares trigger from, and the results handed back to the ranks' own buffers.

use super::{
    job_table, operands, Binding, Buffer, Command, Dispatch, Group, Kernel, Lowered, Params, Pass,
    Recording, Resource, Span, Target,
};
use crate::config::fused::{FusedOptions, Pieces, MAX_KNOB, MIN_WINDOW};
pub use crate::config::fused::{Help, SpareDispatch, Trigger};
use crate::config::Config;
use crate::error::Error;
use crate::gemm::{GemmParams, Job};
use crate::plan::{Buf, Plan, ReduceVia};
use crate::schedule::{Op, Schedule};
use crate::shapes::{buffer_bytes, fold, tiles, Chunking};
use crate::steps::{Link, STEP_WG};

/// `Forward` in shaders/epilogue/fused.wgsl: per (rank, chunk) counter, where its chunk sits in the
/// packed output, the counter values at which its (up to two) outgoing steps fire, the pieces each
/// is split into and each one's gate (the destination counter's value from which it may write the
/// destination chunk). The table ends with a header entry (see [`forward_table`]).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct Forward {
    pub off: u32,
    pub len: u32,
    pub at0: u32,
    pub to0: u32,
    pub op0: u32,
    pub pc0: u32,
    pub at1: u32,
    pub to1: u32,
    pub op1: u32,
    pub pc1: u32,
    pub g0: u32,
    pub g1: u32,
    /// A landed chunk's inbox entry (past the chunks' counters, [`landing`]): 1 + its landing
    /// state's first word in the counters (0: none), the counter of the chunk it lands in, and that
    /// chunk's tiles. The header: BM, BN, the output's columns and the first inbox entry (NONE:
    /// none); its `g0` is the GEMM's tile group (`Engine::tile_group`).
    pub land: u32,
    pub into: u32,
    pub tiles: u32,
    pub inboxes: u32,
}

impl Forward {
    /// An inbox entry's landing state, in u32 words of the counters: the claimed slots, the landed
    /// tiles, then a slot per tile (shaders/epilogue/fused.wgsl `land`); empty for other entries.
    fn landing_words(&self) -> std::ops::Range<usize> {
        if self.land == 0 {
            return 0..0;
        }
        let at = (self.land - 1) as usize;
        at..at + 2 + self.tiles as usize
    }
}

/// No action in a [`Forward`] slot.
const NONE: u32 = u32::MAX;

/// Elements one invocation of a piece moves where the link does not bound the pieces.
const PIECE_PER_INVOCATION: usize = 16;

/// Invocations of a spare workgroup of their own dispatch (shaders/spares.wgsl `INVOCATIONS`).
const SPARE_INVOCATIONS: u32 = 64;

/// Spares a multiprocessor the GEMM leaves free holds at once: 2048 resident invocations (NVIDIA
/// since Volta) of 64 each.
const SPARES_PER_FREE_SM: u32 = 2048 / SPARE_INVOCATIONS;

/// GEMM flops per byte the transfers move below which the cooperative GEMM's grid leaves an eighth
/// of the multiprocessors to the spares: beside a cooperative GEMM workgroup (61440 registers) only
/// two spares fit on its SM and move pieces at a fraction of the link's rate, so where the
/// transfers take about as long as the GEMM, whole SMs of spares pay for a GEMM an eighth slower;
/// where the GEMM weighs several times the transfers, the GEMM time they cost outweighs what they
/// save (the threshold lies between the f16 presets on either side of it: see BENCHMARKS.md).
const FREE_SMS_BELOW: f64 = 200.0;

/// How fused mode's transfers are split and drained, resolved for a device from the caller's
/// [`FusedOptions`] (the variants its benchmark compares, so that one device run can time them all).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct FusedTuning {
    /// Pieces per transfer: None = the link's workgroups (as a step of the other modes gets);
    /// Some(1) = one workgroup moves the whole chunk (the first fused mode).
    pub pieces: Option<u32>,
    /// Spare workgroups dispatched past the GEMM's to drain the transfers; None = ranks x pieces.
    pub spares: Option<u32>,
    /// Each spare's poll budget: how often it looks for new work once none is left to claim.
    pub polls: u32,
    /// An idle spare's pause between polls, in dependent reads of a word of its own at the device's
    /// point of coherence (shaders/epilogue/fused.wgsl `pause`): each waits out a round trip while
    /// issuing one instruction, so spares beside the GEMM poll less often without taking its issue
    /// slots (a pause that computes does, and slows the GEMM); 0: none.
    pub pause: u32,
    /// Bytes of the output's first window at most (None: the largest binding).
    pub window: Option<u32>,
    /// Where the spares run.
    pub spare_dispatch: SpareDispatch,
    /// Spares of their own dispatch encoded before the GEMM's (else after it): the hardware issues
    /// workgroups in dispatch order, so spares after a GEMM of a workgroup per tile get slots only
    /// in its last wave, and before it they take theirs first and the GEMM fills the rest.
    pub spares_first: bool,
    /// GEMM workgroups of a persistent grid (each loops over tiles), 0: one per tile.
    pub grid: u32,
    /// Whether GEMM workgroups move pieces of the transfers they publish (and any left unclaimed
    /// when they finish a tile).
    pub help: Help,
    /// What triggers a transfer whose source chunk the GEMM completes.
    pub trigger: Trigger,
    /// Whether a ring's last hop lands (only where the spares trigger): a copy into an inbox,
    /// added into its destination's own chunk tile by tile as the tiles are stored, instead of a
    /// reduce that waits for every tile of that chunk, the last its rank produces (shaders/epilogue/
    /// fused.wgsl `land`; [`landing`]).
    pub land: bool,
}

impl FusedTuning {
    /// The tuning `o` chooses for `target` and `link`: each knob as set, else its default. Where
    /// the multiprocessors are known (`Target::sms`, src/sms.rs) the defaults are the paying
    /// configuration ([`FusedTuning::paying`]) unless the trigger was set to the epilogue (or the
    /// spares to the GEMM's dispatch), else the link's pieces, ranks x pieces spares, 16384 polls
    /// or with their own dispatch 1048576 (either shrunk by a pause, [`paused_polls`]), the largest
    /// binding, the GEMM's dispatch, no grid, help always, the epilogue's trigger, no pause.
    /// `intensity`: the GEMM's flops per byte the transfers move (the paying defaults' grid follows
    /// it). A knob out of range, or a combination that cannot run here, is refused naming the
    /// environment variable that sets it (docs/environment.md).
    pub fn resolve(
        o: &FusedOptions,
        target: &Target,
        link: Link,
        intensity: f64,
    ) -> std::result::Result<Self, String> {
        let range = |name: &str, auto: &str, v: Option<u32>, min: u32, max: u32| match v {
            Some(n) if n < min || n > max => Err(format!(
                "{name}=\"{n}\": expected {auto} or a whole number {min}..={max}"
            )),
            _ => Ok(()),
        };
        let pieces = match o.pieces {
            Pieces::Count(n) => Some(n),
            _ => None,
        };
        range("T3_FUSED_PIECES", "link", pieces, 1, MAX_KNOB)?;
        range("T3_FUSED_SPARES", "auto", o.spares, 0, MAX_KNOB)?;
        range("T3_FUSED_POLLS", "default", o.polls, 0, MAX_KNOB)?;
        range("T3_FUSED_WINDOW", "default", o.window, MIN_WINDOW, u32::MAX)?;
        range("T3_FUSED_GRID", "off", o.grid, 0, MAX_KNOB)?;
        range("T3_FUSED_PAUSE", "auto", o.pause, 0, MAX_KNOB)?;
        // Not where the trigger was set to the epilogue: that configuration keeps its own defaults.
        let paying = target
            .sms
            .filter(|_| o.trigger != Some(Trigger::Epilogue))
            .map(|sms| Self::paying(sms, target.gemm_per_sm, link, intensity));
        let spare_dispatch = o
            .spare_dispatch
            .unwrap_or(paying.map_or(SpareDispatch::Gemm, |p| p.spare_dispatch));
        let own = spare_dispatch == SpareDispatch::Own;
        // Spares of their own dispatch start with the GEMM and poll until its last transfer is
        // done (they leave as soon as every piece is): a budget for the whole GEMM.
        let polls = match spare_dispatch {
            SpareDispatch::Gemm => 1 << 14,
            SpareDispatch::Own => OWN_POLLS,
        };
        let help = match o.help {
            Help::Never if !own || o.alias => {
                return Err(
                    "T3_FUSED_HELP=\"never\": expected always, idle, or never with T3_FUSED_SPARE_DISPATCH=own and T3_ALIAS=0 (the spares must run after the GEMM)".into()
                )
            }
            h => h,
        };
        let trigger = match o.trigger {
            // The paying trigger needs the spares' own dispatch (a knob may have set the other).
            None => paying
                .filter(|_| own)
                .map_or(Trigger::Epilogue, |p| p.trigger),
            Some(Trigger::Spares) if !own => {
                return Err(
                    "T3_FUSED_TRIGGER=\"spares\": expected epilogue, or spares with T3_FUSED_SPARE_DISPATCH=own (the watched GEMM has no spares in its dispatch)".into()
                )
            }
            Some(t) => t,
        };
        // A default: the paying one where the knob is unset and the paying trigger runs (a knob
        // that chose the GEMM's dispatch for the spares gets the epilogue's defaults).
        let paying = paying.filter(|_| trigger == Trigger::Spares);
        let spares_first = match o.spares_first {
            // Before the GEMM only on views of their own: on the GEMM's buffers wgpu's barrier would
            // hold the GEMM until the spares had spent their poll budget.
            None => paying.is_some_and(|p| p.spares_first) && o.alias,
            Some(false) => false,
            Some(true) if own && o.alias => true,
            Some(true) => {
                return Err(
                    "T3_FUSED_SPARES_AT=\"before\": expected after, or before with T3_FUSED_SPARE_DISPATCH=own and the aliased views (not T3_ALIAS=0)".into()
                )
            }
        };
        let pause = o.pause.unwrap_or(paying.map_or(0, |p| p.pause));
        let land = match o.land {
            // The paying defaults' where they apply (beside the SIMT GEMM), else wherever the
            // spares trigger.
            None => trigger == Trigger::Spares && paying.is_none_or(|p| p.land),
            Some(true) if trigger == Trigger::Spares => true,
            Some(false) => false,
            Some(true) => {
                return Err(
                    "T3_FUSED_LAND=\"on\": expected off, or on where the spares trigger (T3_FUSED_TRIGGER=spares: only they land)".into()
                )
            }
        };
        Ok(FusedTuning {
            land,
            trigger,
            spares_first,
            pieces: match o.pieces {
                Pieces::Auto => paying.and_then(|p| p.pieces),
                Pieces::Link => None,
                Pieces::Count(n) => Some(n),
            },
            spares: o.spares.or(paying.and_then(|p| p.spares)),
            polls: o.polls.unwrap_or(paused_polls(polls, pause)),
            pause,
            window: o.window,
            spare_dispatch,
            grid: o.grid.unwrap_or(paying.map_or(0, |p| p.grid)),
            help,
        })
    }

    /// The defaults where the GPU's `sms` multiprocessors are known, each holding `gemm_per_sm` GEMM
    /// workgroups: the configuration under which fused mode beats encoded mode on the TP-8 presets,
    /// f16 and f32, on an H200 and an H100 (see BENCHMARKS.md). The spares trigger
    /// (the GEMM only counts its tiles) from a dispatch of their own beside the GEMM, three per
    /// multiprocessor beside one GEMM workgroup (the cooperative kernel; more than about three add
    /// nothing), two beside two (the SIMT kernel at 120 registers leaves 4096 of an SM's 65536,
    /// room for two 64-invocation spares at <= 32: a third only waits, and slows the GEMM
    /// slightly). Beside the cooperative GEMM the GEMM runs on a persistent grid of every slot (a
    /// grid per tile leaves spares after it only the GEMM's last wave); beside the SIMT GEMM the spares are
    /// dispatched first and the GEMM a workgroup per tile after them (the tracked GEMM itself,
    /// faster than on the grid, and the spares take their two slots before it fills the rest;
    /// dispatched first beside the cooperative GEMM, its three spares per SM would leave it no room
    /// until they gave up). Each transfer runs on as many invocations as the link gives a step (its
    /// step workgroups' lanes, in spares' pieces). Beside the cooperative GEMM, where the transfers
    /// weigh about as much as the GEMM (`intensity`, its flops per byte moved, below
    /// [`FREE_SMS_BELOW`]), its grid leaves an eighth of the SMs to spares, a full SM of them each,
    /// two beside each GEMM workgroup. Idle spares pause between polls, 128 reads beside the SIMT
    /// GEMM, 32 beside the cooperative one: spinning spares take the GEMM's issue slots, and a
    /// longer pause delays publications. Beside the SIMT GEMM the ring's last hops land (the reduce
    /// into the chunk a rank produces last then need not wait for all of its tiles); beside the
    /// cooperative one they do not: there the transfers beside the GEMM lag the link already, and
    /// landing adds the inbox's traffic.
    pub fn paying(sms: u32, gemm_per_sm: u32, link: Link, intensity: f64) -> Self {
        let simt = gemm_per_sm >= 2;
        let free = if !simt && intensity < FREE_SMS_BELOW {
            sms / 8
        } else {
            0
        };
        let gemm_sms = sms - free;
        let pause = if simt { 128 } else { 32 };
        FusedTuning {
            pieces: match link {
                Link::Workgroups(w) => Some((w * STEP_WG / SPARE_INVOCATIONS).max(1)),
                Link::Unthrottled => None,
            },
            spares: Some(match (simt, free) {
                (true, _) => 2 * sms,
                (false, 0) => 3 * sms,
                (false, f) => 2 * gemm_sms + SPARES_PER_FREE_SM * f,
            }),
            polls: paused_polls(OWN_POLLS, pause),
            pause,
            window: None,
            spare_dispatch: SpareDispatch::Own,
            spares_first: simt,
            grid: if simt {
                0
            } else {
                gemm_sms * gemm_per_sm.max(1)
            },
            help: Help::Always,
            trigger: Trigger::Spares,
            land: simt,
        }
    }

    /// The configuration in words (the report's `fused` line).
    pub fn describe(&self) -> String {
        let trigger = match self.trigger {
            Trigger::Epilogue => "the GEMM's epilogue",
            Trigger::Spares => "the spares",
        };
        let dispatch = match self.spare_dispatch {
            SpareDispatch::Gemm => "in the GEMM's dispatch",
            SpareDispatch::Own if self.spares_first => "of their own dispatch before the GEMM's",
            SpareDispatch::Own => "of their own dispatch",
        };
        let or = |v: Option<u32>, none: &str| v.map_or(none.to_string(), |n| n.to_string());
        format!(
            "trigger {trigger}; spares {} {dispatch}; GEMM grid {}; pieces per transfer {}; help {}",
            or(self.spares, "auto"),
            if self.grid == 0 {
                "off (a workgroup per tile)".to_string()
            } else {
                self.grid.to_string()
            },
            or(self.pieces, "link"),
            format!("{:?}", self.help).to_lowercase()
        ) + &if self.pause > 0 {
            format!("; idle spares pause {} reads between polls", self.pause)
        } else {
            String::new()
        } + if self.land {
            "; last hops landed tile by tile"
        } else {
            ""
        }
    }

    /// Pieces of a transfer of `len` elements over `link`.
    fn pieces(self, link: Link, len: usize) -> u32 {
        let need = len.div_ceil(STEP_WG as usize * PIECE_PER_INVOCATION).max(1) as u32;
        match (self.pieces, link) {
            (Some(p), _) => p.min(need.max(1)),
            (None, Link::Workgroups(w)) => need.min(w.max(1)),
            (None, Link::Unthrottled) => need,
        }
    }
}

/// A poll budget of `polls` rounds for spares that pause `pause` reads after an idle one: fewer
/// rounds as the pause grows, so that a spare's whole life stays about as long as without it (a
/// GEMM left no room by the spares waits for them to give up; the bound is what the top of
/// shaders/epilogue/fused.wgsl rests on). A round costs about [`PAUSE_ROUND`] reads' time itself.
fn paused_polls(polls: u32, pause: u32) -> u32 {
    let scaled =
        u64::from(polls) * u64::from(PAUSE_ROUND) / (u64::from(PAUSE_ROUND) + u64::from(pause));
    (scaled as u32).max(1)
}

/// The poll budget of spares of their own dispatch without a pause: they start with the GEMM and
/// poll until its last transfer is done, so it outlasts the GEMM (the presets' longest, f32
/// gpt3-fc2's, included).
const OWN_POLLS: u32 = 1 << 20;

/// About a spare's round (a watch of every counter and a scan of the queue) in round trips to the
/// point of coherence: the unit an idle pause's reads are weighed in ([`paused_polls`]).
const PAUSE_ROUND: u32 = 16;

/// A pool buffer of `bytes` bound as two windows: the first at most `window` bytes, the second the
/// rest. Where it fits the first, the second is a small range past it that the shader never reads:
/// disjoint from the first, as WebGPU refuses two writable bindings of one buffer that overlap in a
/// dispatch (Vulkan does not check). 256 bytes: the largest storage offset alignment wgpu allows.
/// Returns the buffer and its two windows.
fn windows(
    l: &mut Lowered,
    label: &'static str,
    bytes: u64,
    window: u64,
) -> (Buffer, Resource, Resource) {
    let spare_at = bytes.next_multiple_of(256);
    let fits = bytes <= window;
    let alloc = if fits { spare_at + 256 } else { bytes };
    let buffer = l.pool_buffer(label, alloc, None);
    if let Buffer::Pool(i) = buffer {
        l.pool[i].windowed = true;
    }
    let span = |offset: u64, bytes: u64| {
        Resource::Window(Span {
            buffer,
            offset,
            bytes,
        })
    };
    if fits {
        (buffer, span(0, bytes), span(spare_at, 16))
    } else {
        (buffer, span(0, window), span(window, bytes - window))
    }
}

/// Bytes of the first window of fused mode's packed output (its second starts there): the largest
/// binding, or `T3_FUSED_WINDOW` bytes where smaller (tests split small outputs with it), aligned
/// for a binding offset (256 bytes covers every adapter's min_storage_buffer_offset_alignment).
fn fused_window(max_binding: u64, knob: Option<u32>) -> u64 {
    let w = knob.map_or(max_binding, |k| max_binding.min(u64::from(k)));
    (w / 256 * 256).max(256)
}

/// u32 words of fused mode's counters buffer for `nc` (rank, chunk) counters: the counters, each
/// action's claims, done pieces and conditions met, tail, head, pieces done and spares alive, and
/// the live list (the layout in shaders/epilogue/fused.wgsl).
fn counter_words(nc: usize) -> usize {
    9 * nc + 4 + PAUSE_WORDS
}

/// Words past the live list that idle spares read in their pause (`pause_at` in
/// shaders/epilogue/fused.wgsl): 64 slots 128 bytes apart, so that the pauses of many spares do not
/// all queue at one L2 slice, and one word more (a read's address is the slot's plus 0 or 1).
const PAUSE_WORDS: usize = 64 * 32 + 1;

/// [`forward_table`]'s table and what its landed hops add past the ranks' own: the packed output's
/// elements (whole vec4s; the inboxes after every rank's output), the counters' u32 words (the
/// landing states after the counters' layout) and the elements the inboxes hold.
struct Table {
    fwd: Vec<Forward>,
    out_elems: usize,
    counter_words: usize,
    inbox_elems: u64,
}

/// The forward table: for each (rank, chunk) counter, the counter values at which its outgoing steps
/// fire (local tiles plus the incoming steps that precede the step in the schedule), their pieces and
/// their gates (the destination's tiles plus the steps into it that precede this one: every write of
/// a chunk is exclusive, in the schedule's order); then an inbox entry per landed hop ([`landing`]);
/// then the header: off = pieces of all transfers and landed tiles,
/// len = the spares' poll budget, at0 = chunks per rank, at1 = elements of the output's first
/// `window` bytes, pc0 = an idle spare's pause in reads. With it, the sizes the table implies
/// ([`Table`]).
fn forward_table(
    config: &Config,
    chunking: &Chunking,
    schedule: &Schedule,
    (tile_n, tile_group): (usize, usize),
    tuning: FusedTuning,
    lands: &[usize],
    window: u64,
) -> std::result::Result<Table, String> {
    let (m, n) = (config.shape.m, config.shape.n);
    let nch = chunking.count();
    let idx = |p: usize, x: usize| p * nch + x;
    let mut fwd: Vec<Forward> = (0..config.ranks * nch)
        .map(|c| {
            let (p, x) = (c / nch, c % nch);
            Forward {
                off: (p * m * n + chunking.rows(x).start * n) as u32,
                len: (chunking.rows(x).len() * n) as u32,
                to0: NONE,
                to1: NONE,
                ..Default::default()
            }
        })
        .collect();
    let mut received = vec![0u32; fwd.len()];
    let own_tiles = |p: usize, x: usize| {
        if schedule.produces(p, x) {
            tiles(chunking.rows(x).len(), n, tile_n) as u32
        } else {
            0
        }
    };
    // Landed hops (`lands`, steps' indices): each a copy into an inbox entry past the chunks'
    // counters, whose landing state follows the counters' layout (`counter_words`) and whose inbox
    // follows the ranks' outputs.
    let chunks = fwd.len();
    let mut state = counter_words(chunks + lands.len());
    let mut inbox = (config.ranks * m * n).next_multiple_of(4);
    let mut landed_tiles = 0u32;
    let mut inbox_elems = 0u64;
    for (s, st) in schedule.steps.iter().enumerate() {
        let at = own_tiles(st.src, st.chunk) + received[idx(st.src, st.chunk)];
        let mut gate = own_tiles(st.dst, st.chunk) + received[idx(st.dst, st.chunk)];
        let mut op = match st.op {
            Op::Reduce => 1,
            Op::Copy => 2,
        };
        let mut to = idx(st.dst, st.chunk) as u32;
        if lands.contains(&s) {
            let len = (chunking.rows(st.chunk).len() * n) as u32;
            let tl = own_tiles(st.dst, st.chunk);
            fwd.push(Forward {
                off: inbox as u32,
                len,
                to0: NONE,
                to1: NONE,
                land: 1 + state as u32,
                into: to,
                tiles: tl,
                ..Default::default()
            });
            (to, op, gate) = ((fwd.len() - 1) as u32, 2, 0);
            state += 2 + tl as usize;
            inbox = (inbox + len as usize).next_multiple_of(4);
            landed_tiles += tl;
            inbox_elems += u64::from(len);
        }
        let f = &mut fwd[idx(st.src, st.chunk)];
        let pc = tuning.pieces(config.link, f.len as usize);
        if f.to0 == NONE {
            (f.at0, f.to0, f.op0, f.pc0, f.g0) = (at, to, op, pc, gate);
        } else if f.to1 == NONE {
            (f.at1, f.to1, f.op1, f.pc1, f.g1) = (at, to, op, pc, gate);
        } else {
            return Err(format!(
                "chunk {} of rank {} leaves more than twice",
                st.chunk, st.src
            ));
        }
        received[idx(st.dst, st.chunk)] += 1;
    }
    let pieces: u32 = fwd
        .iter()
        .flat_map(|f| [(f.to0, f.pc0), (f.to1, f.pc1)])
        .filter(|&(to, _)| to != NONE)
        .map(|(_, pc)| pc)
        .sum::<u32>()
        + landed_tiles;
    check_table(&fwd, inbox, state)?;
    fwd.push(Forward {
        off: pieces,
        len: tuning.polls,
        op0: tuning.help.code(),
        pc0: tuning.pause,
        at0: nch as u32,
        at1: (window / 4) as u32,
        to0: NONE,
        to1: NONE,
        land: crate::shapes::TILE as u32,
        into: tile_n as u32,
        tiles: n as u32,
        inboxes: if lands.is_empty() {
            NONE
        } else {
            chunks as u32
        },
        g0: tile_group as u32,
        ..Default::default()
    });
    Ok(Table {
        fwd,
        out_elems: inbox,
        counter_words: state,
        inbox_elems,
    })
}

/// The steps that land (with `T3_FUSED_LAND` on): each reduce that is the only transfer into its
/// destination's chunk, a chunk its destination produces at its last stage: the ring's last hop,
/// into the chunk its destination produces last, which as a reduce would wait for every tile of it
/// and so run after the GEMM (in f32, most of fused mode's exposed time: see BENCHMARKS.md). The
/// direct reduce-scatter's several reduces into one chunk keep their gates.
fn landing(schedule: &Schedule) -> Vec<usize> {
    let mut into = std::collections::HashMap::new();
    for s in &schedule.steps {
        *into.entry((s.dst, s.chunk)).or_insert(0usize) += 1;
    }
    let last = |p: usize, x: usize| {
        let prod = &schedule.production[p];
        let end = prod.iter().map(|&(s, _)| s).max();
        prod.iter().any(|&(s, c)| c == x && Some(s) == end)
    };
    schedule
        .steps
        .iter()
        .enumerate()
        .filter(|(_, s)| s.op == Op::Reduce && into[&(s.dst, s.chunk)] == 1 && last(s.dst, s.chunk))
        .map(|(i, _)| i)
        .collect()
}

/// Every index the (trusted, unchecked) fused kernel takes from the forward table is in bounds: each
/// chunk inside the packed output of `out_elems` elements, each action's destination a counter, its
/// op a reduce or a copy, and at least one piece; each inbox's landing state inside the counters'
/// `words` and the chunk it lands in a counter.
fn check_table(fwd: &[Forward], out_elems: usize, words: usize) -> std::result::Result<(), String> {
    let nc = fwd.len() as u32;
    for (c, f) in fwd.iter().enumerate() {
        let state = f.landing_words();
        if f.land != 0 && (f.into >= nc || f.tiles == 0 || state.end > words) {
            return Err(format!(
                "forward table: inbox {c} lands in counter {} ({} tiles, state at word {}) out of range (counters {nc}, {words} words)",
                f.into, f.tiles, state.start
            ));
        }
        if u64::from(f.off) + u64::from(f.len) > out_elems as u64 {
            return Err(format!(
                "forward table: counter {c}'s chunk [{}, +{}) past the packed output's {out_elems} elements",
                f.off, f.len
            ));
        }
        for (to, op, pc) in [(f.to0, f.op0, f.pc0), (f.to1, f.op1, f.pc1)] {
            if to != NONE && (to >= nc || !(1..=2).contains(&op) || pc == 0) {
                return Err(format!(
                    "forward table: counter {c}'s action to {to} (op {op}, {pc} pieces) out of range (counters {nc}, ops 1..=2, pieces >= 1)"
                ));
            }
        }
    }
    Ok(())
}

/// The spares' poll budget where the driver caps an invocation's loop iterations in all (`limit`,
/// llvmpipe): `polls` at most, and well inside the cap. The cap counts per group of invocations the
/// driver runs as one vector: the group of invocation 0 (whose scans of the live list iterate, the
/// others' do not) reaches it first, its loops end and it leaves the shader while the rest of the
/// workgroup goes on reading broadcasts nobody writes any more, moving pieces again (lavapipe, direct
/// reduce-scatter on 8 ranks with 52 spares: 7 of 40 runs wrong before this cap, 0 of 180 after).
/// Per poll invocation 0 loops at most 2 + 2 nc times (the poll, the claim, a scan of the live list
/// of `counters` chunks' actions), and where it `watch`es at most 2 nc more (a counter, and the
/// counters of its chunk on every rank), and `pause` more where idle; half the cap is left for the
/// pieces the spare moves.
fn polls_within(
    limit: Option<u32>,
    polls: u32,
    counters: usize,
    watching: bool,
    pause: u32,
) -> u32 {
    match limit {
        Some(limit) => {
            let nc = u32::try_from(counters).unwrap_or(u32::MAX / 8);
            let per_poll = (2 + 2 * nc + if watching { 2 * nc } else { 0 }).saturating_add(pause);
            polls.min(limit / 2 / per_poll)
        }
        None => polls,
    }
}

/// A persistent grid of `grid` workgroups over `tiles` tiles where the driver caps an invocation's
/// loop iterations in all (`limit`, llvmpipe): raised until each workgroup's share of tiles stays
/// within half the cap. Per tile invocation 0 loops about K times (the K loop's slices and their
/// inner steps) and scans the live list of `counters` chunks' actions a few times as it claims pieces
/// (`tile_done`); a grid of 1 over the 84 tiles of 7 ranks x 12 chunks ran past the cap on lavapipe
/// and lost tiles (as the fused property test found).
fn grid_within(limit: Option<u32>, grid: u32, tiles: u32, counters: usize, k: usize) -> u32 {
    match limit {
        Some(limit) if grid > 0 => {
            let nc = u32::try_from(counters).unwrap_or(u32::MAX / 16);
            let per_tile = (4 * (2 + 2 * nc)).saturating_add(u32::try_from(k).unwrap_or(u32::MAX));
            let share = (limit / 2 / per_tile.max(1)).max(1);
            grid.max(tiles.div_ceil(share))
        }
        _ => grid,
    }
}

/// A run of consecutive ranks whose packed outputs and Bs are each bound as one window: the byte
/// ranges of the packed output and of packed B it binds.
#[derive(Clone, Debug, PartialEq, Eq)]
struct RankRun {
    ranks: std::ops::Range<usize>,
    out: std::ops::Range<u64>,
    b: std::ops::Range<u64>,
}

/// The ranks in runs, as long as each run's outputs (`out_rank` bytes a rank, `out_bytes` in all)
/// and Bs (at `b_offs`, `b_sizes` bytes) each fit `window` bytes; None where one rank's alone does not. A run's windows start at the
/// 256-byte boundary at or below its first rank's (every adapter's binding offset alignment) and end
/// at a whole vec4 past its last (the kernels bind the output as vec4s).
fn rank_runs(
    out_rank: u64,
    out_bytes: u64,
    b_offs: &[u64],
    b_sizes: &[u64],
    window: u64,
) -> Option<Vec<RankRun>> {
    let run = |ranks: std::ops::Range<usize>| {
        let (p0, p1) = (ranks.start, ranks.end);
        let out = (p0 as u64 * out_rank) / 256 * 256
            ..(p1 as u64 * out_rank).next_multiple_of(16).min(out_bytes);
        let b = b_offs[p0] / 256 * 256..b_offs[p1 - 1] + b_sizes[p1 - 1];
        let fits = out.end - out.start <= window && b.end - b.start <= window;
        (RankRun { ranks, out, b }, fits)
    };
    let mut runs: Vec<RankRun> = Vec::new();
    for p in 0..b_offs.len() {
        if let Some(last) = runs.last_mut() {
            let (longer, fits) = run(last.ranks.start..p + 1);
            if fits {
                *last = longer;
                continue;
            }
        }
        let (alone, fits) = run(p..p + 1);
        if !fits {
            return None;
        }
        runs.push(alone);
    }
    Some(runs)
}

/// View 1 of pool buffer `b`, the spares' (src/alias.rs).
fn alias_of(b: Buffer) -> Buffer {
    match b {
        Buffer::Pool(i) => Buffer::View(i, 1),
        other => other,
    }
}

/// Fused mode: every rank's operands packed into one buffer per role, the GEMM over all ranks'
/// staggered jobs in one pass (and the spares' own dispatch where they have one), and the results handed back to
/// the ranks' own buffers (where checks and dumps read every mode's results). Tuned by
/// `config.fused` ([`FusedTuning::resolve`]).
pub(super) fn lower_fused(
    l: &mut Lowered,
    config: &Config,
    chunking: &Chunking,
    schedule: &Schedule,
    plan: &Plan,
) -> std::result::Result<Recording, String> {
    let intensity = config.shape.flops() * config.ranks as f64 / plan.step_bytes().max(1) as f64;
    let tuning = FusedTuning::resolve(&config.fused, &l.target, config.link, intensity)?;
    let rec = lower_fused_with(l, config, chunking, schedule, plan, tuning)?;
    l.fused_tuning = Some(tuning);
    Ok(rec)
}

/// [`lower_fused`] under `tuning`.
pub(super) fn lower_fused_with(
    l: &mut Lowered,
    config: &Config,
    chunking: &Chunking,
    schedule: &Schedule,
    plan: &Plan,
    tuning: FusedTuning,
) -> std::result::Result<Recording, String> {
    if config.via != ReduceVia::Update {
        return Err("fused mode realises every reduce as an update (T3's semantics); --reduce land and forward do not apply".into());
    }
    let t = l.target;
    let (m, n) = (config.shape.m, config.shape.n);
    let r = config.ranks;
    let e = config.dtype.bytes() as u64;
    // Each rank's operands at the element offset of its whole padded buffer.
    let sizes: Vec<(u64, u64)> = (0..r)
        .map(|p| {
            let (a, b) = operands(config, chunking, p).0.bytes(config.dtype);
            (buffer_bytes(a), buffer_bytes(b))
        })
        .collect();
    let offsets = |sizes: Vec<u64>| -> (Vec<u64>, u64) {
        let mut at = 0u64;
        let offs = sizes
            .iter()
            .map(|s| {
                at += s;
                at - s
            })
            .collect();
        (offs, at)
    };
    let (a_offs, a_bytes) = offsets(sizes.iter().map(|s| s.0).collect());
    let (b_offs, b_bytes) = offsets(sizes.iter().map(|s| s.1).collect());
    // Only the spares that watch land (nothing else adds an inbox in).
    let tuning = FusedTuning {
        land: tuning.land && tuning.trigger == Trigger::Spares,
        ..tuning
    };
    let lands = if tuning.land {
        landing(schedule)
    } else {
        Vec::new()
    };
    let tuning = FusedTuning {
        polls: polls_within(
            t.loop_limit,
            tuning.polls,
            r * chunking.count() + lands.len(),
            tuning.trigger == Trigger::Spares,
            tuning.pause,
        ),
        ..tuning
    };
    // The output and B are bound as two windows of one buffer each; A in one (a ninth storage binding
    // would pass WebGPU's default limit of eight per stage).
    let window = fused_window(t.max_binding, tuning.window);
    let table = forward_table(
        config,
        chunking,
        schedule,
        (t.tile_n, t.tile_group),
        tuning,
        &lands,
        window,
    )?;
    let fwd = table.fwd;
    // Whole vec4s: the coherent put binds the output as array<vec4<f32>>.
    let out_bytes = table.out_elems as u64 * 4;
    for (what, bytes, max_binding) in [
        ("packed A", a_bytes, t.max_binding),
        ("packed B", b_bytes, window + t.max_binding),
        ("packed outputs", out_bytes, window + t.max_binding),
    ] {
        Error::check_size(what, bytes, t.max_buffer, max_binding)
            .map_err(|e| format!("one dispatch must bind every rank: {e}"))?;
    }
    // Each landed hop writes its inbox and the adds read it again.
    l.fused_extra_bytes = 2 * 4 * table.inbox_elems;
    // The counters' entries only: the header's pc0 is the pause.
    let busiest = fwd[..fwd.len() - 1]
        .iter()
        .map(|f| f.pc0.max(f.pc1))
        .max()
        .unwrap_or(1);
    let auto_spares = (r as u32 * busiest).min(1024);
    let spares = tuning.spares.unwrap_or(auto_spares);
    // The finisher's workgroups (the spare pipeline alone moving whatever is left): the mode's own
    // spares where they are the spare pipeline's; spares in the GEMM's dispatch are GEMM workgroups,
    // a few filling a grid's free slots (far too few to move a preset's transfers in good time), so
    // there, and where there are none, as many as the busiest step's pieces on every rank.
    let movers = match tuning.spare_dispatch {
        SpareDispatch::Own if spares > 0 => spares,
        _ => auto_spares,
    };
    let pieces = fwd[fwd.len() - 1].off;
    if tuning.help == Help::Never && tuning.trigger == Trigger::Epilogue && pieces > 0 {
        if tuning.spare_dispatch != SpareDispatch::Own {
            return Err("T3_FUSED_HELP=never needs spares that run after the GEMM (T3_FUSED_SPARE_DISPATCH=own, T3_ALIAS=0)".into());
        }
        if spares == 0 {
            return Err("T3_FUSED_HELP=never leaves every piece to the spares, and there are none (T3_FUSED_SPARES=0)".into());
        }
    }
    // Jobs in stagger order: stage by stage, every rank's chunk of that stage.
    let nch = chunking.count();
    let mut order: Vec<(usize, usize, usize)> = schedule
        .production
        .iter()
        .enumerate()
        .flat_map(|(p, prod)| prod.iter().map(move |&(s, x)| (s, p, x)))
        .collect();
    order.sort();
    // The watched GEMM a workgroup per tile is the tracked GEMM itself (the windowed stores' code
    // slows the f32 SIMT GEMM), in dispatches that each bind one run of
    // ranks' outputs and Bs (`rank_runs`): one dispatch where every rank's fit one binding, else one
    // per stage and run in stagger order (the hardware issues dispatches in order), each writing
    // through views of its own so that wgpu puts no barrier between them (so only where the views
    // are made). Elsewhere, and where one rank's output or B alone exceeds a binding, one dispatch
    // over every job through the windows.
    let b_sizes: Vec<u64> = sizes.iter().map(|s| s.1).collect();
    let runs = (tuning.trigger == Trigger::Spares && tuning.grid == 0 && config.fused.alias)
        .then(|| rank_runs((m * n * 4) as u64, out_bytes, &b_offs, &b_sizes, window))
        .flatten();
    let per_run = runs.is_some();
    let runs = runs.unwrap_or_else(|| {
        vec![RankRun {
            ranks: 0..r,
            out: 0..out_bytes,
            b: 0..b_bytes,
        }]
    });
    let run_of = |p: usize| runs.iter().position(|g| g.ranks.contains(&p)).unwrap_or(0);
    // (stage, run) of each dispatch and its jobs' (rank, chunk).
    type Segment = ((usize, usize), Vec<(usize, usize)>);
    let mut segments: Vec<Segment> = Vec::new();
    for (stage, p, x) in order {
        let key = if runs.len() == 1 {
            (0, 0)
        } else {
            (stage, run_of(p))
        };
        match segments.last_mut() {
            Some((k, jobs)) if *k == key => jobs.push((p, x)),
            _ => segments.push((key, vec![(p, x)])),
        }
    }
    // One job table, each dispatch's segment numbering its workgroups from 0; offsets into its run's
    // windows.
    let mut jobs = Vec::new();
    let mut spans = Vec::new();
    for ((_, g), seg) in &segments {
        let run = &runs[*g];
        let (seg_jobs, seg_wg) = job_table(
            seg.iter().map(|&(p, x)| {
                let rows = chunking.rows(x);
                Job {
                    row0: rows.start as u32,
                    row1: rows.end as u32,
                    counter: (p * nch + x) as u32,
                    a_off: (a_offs[p] / e) as u32,
                    b_off: ((b_offs[p] - run.b.start) / e) as u32,
                    c_off: ((p * m * n) as u64 - run.out.start / 4) as u32,
                    a_row_base: operands(config, chunking, p).1 as u32,
                    c_row_base: 0,
                    // Not the header's (its `land` and `into` are the tile's rows and columns).
                    land: fwd[..fwd.len() - 1]
                        .iter()
                        .find(|f| f.land != 0 && f.into as usize == p * nch + x)
                        .map_or(0, |f| f.land),
                    ..Default::default()
                }
            }),
            n,
            t.tile_n,
        );
        spans.push((jobs.len()..jobs.len() + seg_jobs.len(), seg_wg, *g));
        jobs.extend(seg_jobs);
    }
    let wg: u32 = spans.iter().map(|s| s.1).sum();
    let padding = operands(config, chunking, 0).0;
    // Elements of B from the second window's start on are read from it (never, where B fits one).
    let b_split = if b_bytes <= window {
        u32::MAX
    } else {
        (window / e) as u32
    };
    // The GEMM's workgroups: a grid no larger than its tiles, or one per tile. Spares in the GEMM's
    // dispatch follow them (ids past the grid, or past `total_wg`).
    let grid = grid_within(t.loop_limit, tuning.grid, wg, r * nch, config.shape.k).min(wg);
    let computing = if grid > 0 { grid } else { wg };
    let in_gemm = match tuning.spare_dispatch {
        SpareDispatch::Gemm => spares,
        SpareDispatch::Own => 0,
    };
    let params = GemmParams {
        dispatch_x: fold(computing + in_gemm, t.max_workgroups_per_dim).0,
        b_split,
        c_split: (window / 4) as u32,
        grid_wg: grid,
        ..GemmParams::new(
            config.shape,
            &padding,
            t.tile_n,
            0..jobs.len(),
            wg,
            t.max_workgroups_per_dim,
        )
    };
    let a = l.pool_buffer("fused A (all ranks)", a_bytes, None);
    let (b, b_lo, b_hi) = windows(l, "fused B (all ranks)", b_bytes, window);
    let (out, lo, hi) = windows(l, "fused outputs (all ranks)", out_bytes, window);
    let counters = l.pool_buffer(
        "fused trackers and transfer queue (all ranks)",
        (table.counter_words * 4) as u64,
        None,
    );
    let job_bytes = bytemuck::cast_slice(&jobs).to_vec();
    let jobs = l.pool_buffer("fused jobs", job_bytes.len() as u64, Some(job_bytes));
    let fwd_bytes = bytemuck::cast_slice(&fwd).to_vec();
    let forward = l.pool_buffer(
        "fused forward table",
        fwd_bytes.len() as u64,
        Some(fwd_bytes),
    );
    let resources = |out_at: Resource, b_at: Resource, counters: Buffer, hi, b_hi| {
        vec![
            out_at,
            Resource::Params,
            Resource::Buffer(a),
            b_at,
            Resource::Buffer(counters),
            Resource::Buffer(jobs),
            Resource::Buffer(forward),
            hi,
            b_hi,
        ]
    };
    l.bindings.push(Binding {
        group: Group::Fused,
        params: Params::Gemm(params),
        resources: resources(lo, b_lo, counters, hi, b_hi),
    });
    let binding = l.bindings.len() - 1;
    let watched = tuning.trigger == Trigger::Spares;
    let gemm: Vec<Dispatch> = if !per_run {
        vec![Dispatch {
            kernel: Kernel::Fused {
                split_b: b_split != u32::MAX,
                split_c: out_bytes > window,
                grid: grid > 0,
                watched,
            },
            binding,
            workgroups: computing + in_gemm,
        }]
    } else {
        // View 1 of the output and counters is the spares' (below); dispatch d > 0 writes through
        // view d + 1, the first through the buffers themselves.
        for buf in [out, counters] {
            if let Buffer::Pool(i) = buf {
                l.pool[i].views = l.pool[i].views.max(spans.len());
            }
        }
        spans
            .iter()
            .enumerate()
            .map(|(d, (range, seg_wg, g))| {
                let run = &runs[*g];
                let view = |buf: Buffer| match buf {
                    Buffer::Pool(i) if d > 0 => Buffer::View(i, d + 1),
                    other => other,
                };
                let span_of = |buffer, at: &std::ops::Range<u64>| {
                    Resource::Window(Span {
                        buffer,
                        offset: at.start,
                        bytes: at.end - at.start,
                    })
                };
                let stub = |buffer, at: u64| {
                    Resource::Window(Span {
                        buffer,
                        offset: at,
                        bytes: 16,
                    })
                };
                l.bindings.push(Binding {
                    group: Group::Fused,
                    params: Params::Gemm(GemmParams {
                        b_split: u32::MAX,
                        c_split: u32::MAX,
                        ..GemmParams::new(
                            config.shape,
                            &padding,
                            t.tile_n,
                            range.clone(),
                            *seg_wg,
                            t.max_workgroups_per_dim,
                        )
                    }),
                    // The tracked GEMM declares neither second window: 16 bytes of its own
                    // views stand in for them.
                    resources: resources(
                        span_of(view(out), &run.out),
                        span_of(b, &run.b),
                        view(counters),
                        stub(view(out), run.out.start),
                        stub(b, run.b.start),
                    ),
                });
                Dispatch {
                    kernel: Kernel::Fused {
                        split_b: false,
                        split_c: false,
                        grid: false,
                        watched: true,
                    },
                    binding: l.bindings.len() - 1,
                    workgroups: *seg_wg,
                }
            })
            .collect()
    };
    let mut dispatches = gemm.clone();
    if tuning.spare_dispatch == SpareDispatch::Own && (spares > 0 || watched) {
        // The same bindings, with what the GEMM writes (the packed output, the counters and the
        // queue) through second views of the same memory.
        for b in [out, counters] {
            if let Buffer::Pool(i) = b {
                l.pool[i].views = l.pool[i].views.max(1);
            }
        }
        let view = |r: Resource| match r {
            Resource::Buffer(b) if b == out || b == counters => Resource::Buffer(alias_of(b)),
            Resource::Window(s) if s.buffer == out => Resource::Window(Span {
                buffer: alias_of(out),
                ..s
            }),
            r => r,
        };
        let spare_binding = Binding {
            resources: l.bindings[binding]
                .resources
                .iter()
                .map(|&r| view(r))
                .collect(),
            ..l.bindings[binding].clone()
        };
        l.bindings.push(spare_binding);
        let spare_binding = l.bindings.len() - 1;
        if spares > 0 {
            // First, nothing of theirs is cleared (they bind views of the output and counters),
            // but they also bind the packed A and B, copied on every run: the barrier wgpu records
            // before them for those is an execution dependency on every earlier copy and clear (the
            // GEMM's barriers, after them, wait only for copies); that the clears' memory is then
            // seen through the views rests on the driver, as src/alias.rs says of every view.
            let at = if tuning.spares_first { 0 } else { gemm.len() };
            dispatches.insert(
                at,
                Dispatch {
                    kernel: Kernel::Spares {
                        watch: watched,
                        land: tuning.land,
                    },
                    binding: spare_binding,
                    workgroups: spares,
                },
            );
        }
        if watched && pieces > 0 {
            // The finisher: the spare pipeline again, after the GEMM and the spares (wgpu's barrier
            // between two dispatches that write the same views; the GEMM's writes are before it in
            // the same pass, and its memory is the views'). Where the spares beside the GEMM moved
            // everything it finds every piece done and leaves at once; where they gave up or never
            // ran, it triggers and moves what is left (shaders/epilogue/fused.wgsl, at the top).
            dispatches.push(Dispatch {
                kernel: Kernel::Spares {
                    watch: watched,
                    land: tuning.land,
                },
                binding: spare_binding,
                workgroups: movers,
            });
        }
    }
    // The ranks' inputs may change between runs: packed on every run. Whole (16-byte padded)
    // buffers, so every offset and size is a multiple of 16 bytes whatever the dtype and shape.
    let mut commands = Vec::new();
    for (p, &(sa, sb)) in sizes.iter().enumerate() {
        for (src, bytes, dst, off) in [
            (Buffer::A(p), sa, a, a_offs[p]),
            (Buffer::B(p), sb, b, b_offs[p]),
        ] {
            commands.push(Command::Copy {
                src: Span {
                    buffer: src,
                    offset: 0,
                    bytes,
                },
                dst,
                dst_offset: off,
            });
        }
    }
    // Cleared through the buffers themselves, as the copies of the previous run read them (a clear
    // through a view would not be ordered after those reads).
    commands.extend([Command::Clear(out), Command::Clear(counters)]);
    // This mode's own sequential run, the baseline of its efficiency: the watched GEMM (tracker
    // only) over the same jobs, grid and bindings, then in a pass of its own the finisher alone,
    // which triggers and moves every transfer (the spare pipeline on the GEMM's own buffers, so
    // wgpu's barrier orders it after the GEMM). The same GEMM and transfers, not overlapped.
    let mut own = commands.clone();
    let ops: Vec<usize> = (0..plan.ops.len()).collect();
    own.push(Command::Pass(Pass {
        ops: ops.clone(),
        dispatches: gemm
            .iter()
            .map(|&d| match d.kernel {
                Kernel::Fused {
                    split_b,
                    split_c,
                    grid,
                    ..
                } => Dispatch {
                    kernel: Kernel::Fused {
                        split_b,
                        split_c,
                        grid,
                        watched: true,
                    },
                    ..d
                },
                _ => d,
            })
            .collect(),
    }));
    if pieces > 0 {
        own.push(Command::Pass(Pass {
            ops,
            dispatches: vec![Dispatch {
                kernel: Kernel::Spares {
                    watch: true,
                    land: tuning.land,
                },
                binding,
                workgroups: movers,
            }],
        }));
    }
    l.fused_sequential = Recording {
        device: t.device,
        label: "fused sequential",
        commands: own,
    };
    commands.push(Command::Pass(Pass {
        ops: (0..plan.ops.len()).collect(),
        dispatches,
    }));
    // Outside the timed pass: results and counters back to the ranks' own buffers.
    for loc in l.locs.iter().filter(|loc| loc.buf == Buf::Out) {
        let c = loc.rank * nch + loc.chunk;
        commands.push(Command::Copy {
            src: Span {
                buffer: out,
                offset: u64::from(fwd[c].off) * 4,
                bytes: u64::from(fwd[c].len) * 4,
            },
            dst: Buffer::Data(*loc),
            dst_offset: 0,
        });
        commands.push(Command::Copy {
            src: Span {
                buffer: counters,
                offset: (c * 4) as u64,
                bytes: 4,
            },
            dst: Buffer::Tracker(*loc),
            dst_offset: 0,
        });
    }
    Ok(Recording {
        device: t.device,
        label: "fused",
        commands,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transfers_split_into_the_links_pieces_and_the_header_counts_them() {
        let t = |pieces| FusedTuning {
            pieces,
            spares: None,
            polls: 7,
            pause: 0,
            window: None,
            spare_dispatch: SpareDispatch::Gemm,
            spares_first: false,
            grid: 0,
            help: Help::Always,
            trigger: Trigger::Epilogue,
            land: false,
        };
        let big = STEP_WG as usize * PIECE_PER_INVOCATION * 100;
        assert_eq!(t(None).pieces(Link::Workgroups(16), big), 16);
        assert_eq!(t(None).pieces(Link::Unthrottled, big), 100);
        assert_eq!(t(Some(1)).pieces(Link::Workgroups(16), big), 1);
        // Never more pieces than a chunk has work for, never none.
        assert_eq!(t(Some(64)).pieces(Link::Workgroups(16), 5), 1);
        assert_eq!(t(None).pieces(Link::Unthrottled, 1), 1);
        assert_eq!(counter_words(4), 40 + PAUSE_WORDS);
        assert_eq!(fused_window(1 << 31, None), 1 << 31);
        assert_eq!(fused_window(1 << 31, Some(1000)), 768);
        assert_eq!(fused_window(100, Some(1000)), 256);
    }

    #[test]
    fn known_multiprocessors_give_the_paying_configuration() {
        // An H100's 132 SMs, the cooperative kernel (one per SM), the 150 GB/s link's 16 workgroups:
        // the paying configuration (64 pieces of 64 invocations = 16 step workgroups of 256).
        let p = FusedTuning::paying(132, 1, Link::Workgroups(16), 300.0);
        assert_eq!(
            (p.trigger, p.spare_dispatch, p.grid, p.spares, p.pieces),
            (
                Trigger::Spares,
                SpareDispatch::Own,
                132,
                Some(396),
                Some(64)
            )
        );
        // The SIMT kernel holds two per SM: the registers they leave hold two spares per SM,
        // dispatched first, and the GEMM a workgroup per tile after them.
        let simt = FusedTuning::paying(132, 2, Link::Workgroups(16), 300.0);
        assert_eq!(
            (simt.grid, simt.spares, simt.spares_first, p.spares_first),
            (0, Some(264), true, false)
        );
        assert!(simt
            .describe()
            .contains("spares 264 of their own dispatch before the GEMM's; GEMM grid off"));
        assert_eq!(
            (p.pause, simt.pause),
            (32, 128),
            "idle spares pause between polls"
        );
        // Their poll budget shrinks with the pause, so that a spare's whole life (rounds and
        // pauses, in round trips) stays within the unpaused budget's.
        for t in [p, simt] {
            let life = u64::from(t.polls) * u64::from(PAUSE_ROUND + t.pause);
            assert!(life <= (1u64 << 20) * u64::from(PAUSE_ROUND), "{t:?}");
            assert!(t.polls >= (1 << 20) / 10, "{t:?}");
        }
        assert_eq!(paused_polls(1 << 20, 0), 1 << 20);
        assert_eq!(paused_polls(3, 1 << 20), 1);
        // Transfers that weigh about as much as the GEMM: an eighth of the SMs left to spares
        // beside the cooperative GEMM (a full SM of them each, two beside each GEMM workgroup); the
        // SIMT GEMM's configuration does not follow the intensity.
        let light = FusedTuning::paying(132, 1, Link::Workgroups(16), 101.0);
        assert_eq!((light.grid, light.spares), (116, Some(2 * 116 + 32 * 16)));
        assert_eq!(
            FusedTuning::paying(132, 2, Link::Workgroups(16), 101.0),
            simt
        );
        assert_eq!(
            FusedTuning::paying(4, 1, Link::Unthrottled, 300.0).pieces,
            None
        );
        assert_eq!(
            FusedTuning::paying(4, 1, Link::Workgroups(1), 300.0).pieces,
            Some(4)
        );
        // The host's spare width is the shader's.
        let src = crate::reflect::source("spares.wgsl").unwrap();
        assert!(
            src.contains(&format!("const INVOCATIONS: u32 = {SPARE_INVOCATIONS}u;")),
            "spares.wgsl's INVOCATIONS is not {SPARE_INVOCATIONS}"
        );
        let d = p.describe();
        assert!(
            d.contains("trigger the spares")
                && d.contains("spares 396 of their own dispatch")
                && d.contains("GEMM grid 132")
                && d.contains("pieces per transfer 64"),
            "{d}"
        );
    }

    #[test]
    fn spares_poll_well_inside_a_drivers_loop_cap() {
        assert_eq!(polls_within(None, 1 << 14, 96, true, 9), 1 << 14);
        let capped = polls_within(Some(65535), 1 << 14, 96, false, 0);
        // Polls at their longest (every scan over the whole live list) spend half the cap at most,
        // and watching the counters as well.
        assert!(capped > 0 && capped * (2 + 2 * 96) <= 65535 / 2, "{capped}");
        let watching = polls_within(Some(65535), 1 << 14, 96, true, 0);
        assert!(
            watching > 0 && watching * (2 + 4 * 96) <= 65535 / 2,
            "{watching}"
        );
        // An idle spare's pause reads are loop iterations too.
        let pausing = polls_within(Some(65535), 1 << 14, 96, true, 100);
        assert!(
            pausing > 0 && pausing * (2 + 4 * 96 + 100) <= 65535 / 2,
            "{pausing}"
        );
        assert_eq!(polls_within(Some(65535), 3, 96, true, 100), 3);
    }

    #[test]
    fn a_persistent_grid_stays_within_a_drivers_loop_cap() {
        assert_eq!(grid_within(None, 1, 84, 84, 49), 1);
        assert_eq!(
            grid_within(Some(65535), 0, 84, 84, 49),
            0,
            "one per tile: no grid"
        );
        // 7 ranks x 12 chunks: 729 iterations a tile, 44 tiles a workgroup at most.
        let g = grid_within(Some(65535), 1, 84, 84, 49);
        assert_eq!(g, 2);
        assert!(84u32.div_ceil(g) * (4 * (2 + 2 * 84) + 49) <= 65535 / 2);
        assert_eq!(grid_within(Some(65535), 24, 84, 84, 49), 24);
    }

    #[test]
    fn only_a_lone_reduce_into_a_chunk_produced_last_lands() {
        use crate::schedule::{Collective, Step};
        let step = |src, dst, chunk, op| Step {
            stage: 1,
            src,
            dst,
            chunk,
            op,
        };
        let s = Schedule {
            collective: Collective::ReduceScatter,
            ranks: 3,
            // Each rank produces chunk 0, then chunk 1.
            production: vec![vec![(0, 0), (1, 1)]; 3],
            steps: vec![
                // Two reduces into rank 0's chunk 1: neither lands (two landings would add into one
                // tile at once).
                step(1, 0, 1, Op::Reduce),
                step(2, 0, 1, Op::Reduce),
                // The lone reduce into rank 1's chunk 1, produced last: lands.
                step(0, 1, 1, Op::Reduce),
                // Into chunk 0, produced first: keeps its gate; a copy never lands.
                step(0, 2, 0, Op::Reduce),
                step(1, 2, 1, Op::Copy),
            ],
        };
        assert_eq!(landing(&s), [2]);
    }

    #[test]
    fn a_table_index_out_of_bounds_is_refused() {
        let chunk = |off, len, to0| Forward {
            off,
            len,
            at0: 1,
            to0,
            op0: 1,
            pc0: 1,
            to1: NONE,
            ..Default::default()
        };
        let good = [chunk(0, 8, 1), chunk(8, 8, NONE)];
        assert!(check_table(&good, 16, 0).is_ok());
        let e = check_table(&good, 15, 0).unwrap_err();
        assert!(e.contains("counter 1") && e.contains("15 elements"), "{e}");
        let e = check_table(&[chunk(0, 8, 2), chunk(8, 8, NONE)], 16, 0).unwrap_err();
        assert!(e.contains("to 2"), "{e}");
        let mut no_pieces = good;
        no_pieces[0].pc0 = 0;
        assert!(check_table(&no_pieces, 16, 0).is_err());
        // An inbox whose landing state (2 words, then a slot per tile) passes the counters' words,
        // or that lands in no counter.
        let inbox = Forward {
            land: 1 + 10,
            into: 0,
            tiles: 3,
            ..chunk(8, 8, NONE)
        };
        let landed = [chunk(0, 8, 1), inbox];
        assert!(check_table(&landed, 16, 15).is_ok());
        let e = check_table(&landed, 16, 14).unwrap_err();
        assert!(e.contains("inbox 1") && e.contains("14 words"), "{e}");
        let astray = Forward { into: 2, ..inbox };
        assert!(check_table(&[chunk(0, 8, 1), astray], 16, 15).is_err());
    }
}
