//! Fused mode's forward table and counter words: for every (rank, chunk) counter, where its chunk
//! sits and the steps it fires, as the WGSL reads them, built from the schedule and checked.

use super::*;

/// `Forward` in shaders/fused/epilogue.wgsl: per (rank, chunk) counter, where its chunk sits in the
/// packed output, the counter values at which its (up to two) outgoing steps fire, the pieces each
/// is split into and each one's gate (the destination counter's value from which it may write the
/// destination chunk). The table's [`ForwardHeader`] comes before the entries.
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
    /// chunk's tiles; a chunk's entry: its own tiles (the progress log's mark).
    pub land: u32,
    pub into: u32,
    pub tiles: u32,
    pub inboxes: u32,
}

impl Forward {
    /// An inbox entry's landing state, in u32 words of the counters: the claimed slots, the landed
    /// tiles, then a slot per tile (shaders/fused/epilogue.wgsl `land`); empty for other entries.
    fn landing_words(&self) -> std::ops::Range<usize> {
        if self.land == 0 {
            return 0..0;
        }
        let at = (self.land - 1) as usize;
        at..at + 2 + self.tiles as usize
    }
}

/// `ForwardHeader` in shaders/fused/epilogue.wgsl, the forward table's first bytes (layouts compared
/// through naga): what every entry shares.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct ForwardHeader {
    /// Pieces of all transfers and landed tiles: the count at which every piece is done.
    pub pieces: u32,
    /// The spares' poll budget.
    pub polls: u32,
    pub chunks_per_rank: u32,
    /// Elements of the output's first window, or of each of its four
    /// (shaders/fused/put/cas_windows.wgsl, store_windows4.wgsl).
    pub window: u32,
    /// Whether GEMM workgroups help move pieces ([`Help`]'s code).
    pub helping: u32,
    /// An idle spare's pause, in reads (0: none).
    pub pause: u32,
    /// The GEMM's tile rows (BM) and columns (BN), and the output's columns.
    pub bm: u32,
    pub bn: u32,
    pub cols: u32,
    /// The first inbox entry (NONE: no chunk lands).
    pub inboxes: u32,
    /// The GEMM's tile group (`Engine::tile_group`; 0: row-major tile order).
    pub tile_group: u32,
    /// The progress log's first word in the counters (0: none, [`Table::add_progress`]).
    pub log_at: u32,
}

/// No action in a [`Forward`] slot.
pub(super) const NONE: u32 = u32::MAX;

/// [`forward_table`]'s table and what its landed hops add past the ranks' own: the packed output's
/// elements (whole vec4s; the inboxes after every rank's output), the counters' u32 words (the
/// landing states after the counters' layout) and the elements the inboxes hold.
pub(super) struct Table {
    pub(super) header: ForwardHeader,
    pub(super) fwd: Vec<Forward>,
    pub(super) out_elems: usize,
    pub(super) counter_words: usize,
    pub(super) inbox_elems: u64,
}

/// The forward table: for each (rank, chunk) counter, the counter values at which its outgoing steps
/// fire (local tiles plus the incoming steps that precede the step in the schedule), their pieces and
/// their gates (the destination's tiles plus the steps into it that precede this one: every write of
/// a chunk is exclusive, in the schedule's order); then an inbox entry per landed hop ([`landing`]);
/// and the [`ForwardHeader`] before them, the packed output laid out as `out` says. With it, the sizes
/// the table implies ([`Table`]).
pub(super) fn forward_table(
    config: &Config,
    chunking: &Chunking,
    schedule: &Schedule,
    (tile_n, tile_group): (usize, usize),
    tuning: FusedTuning,
    lands: &[usize],
    out: &OutLayout,
) -> std::result::Result<Table, String> {
    let n = config.shape.n;
    let nch = chunking.count();
    let idx = |p: usize, x: usize| p * nch + x;
    let mut fwd: Vec<Forward> = (0..config.ranks * nch)
        .map(|c| {
            let (p, x) = (c / nch, c % nch);
            Forward {
                off: (out.bases[p] + chunking.rows(x).start * n) as u32,
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
    for (c, f) in fwd.iter_mut().enumerate() {
        f.tiles = own_tiles(c / nch, c % nch);
    }
    // Landed hops (`lands`, steps' indices): each a copy into an inbox entry past the chunks'
    // counters, whose landing state follows the counters' layout (`counter_words`) and whose inbox
    // follows the ranks' outputs.
    let chunks = fwd.len();
    let mut state = counter_words(chunks + lands.len());
    let mut inbox = out.bases[config.ranks].next_multiple_of(4);
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
    let header = ForwardHeader {
        pieces,
        polls: tuning.polls,
        helping: tuning.help.code(),
        pause: tuning.pause,
        chunks_per_rank: nch as u32,
        window: (out.window / 4) as u32,
        bm: crate::shapes::TILE as u32,
        bn: tile_n as u32,
        cols: n as u32,
        inboxes: if lands.is_empty() {
            NONE
        } else {
            chunks as u32
        },
        tile_group: tile_group as u32,
        log_at: 0,
    };
    Ok(Table {
        header,
        fwd,
        out_elems: inbox,
        counter_words: state,
        inbox_elems,
    })
}

/// Fused mode's progress log as the host reads it back (shaders/fused/epilogue.wgsl `log_at`): where
/// it sits in the counters buffer and what its slots mean.
#[derive(Clone, Debug, PartialEq)]
pub struct ProgressLog {
    /// The log's first u32 word in the counters buffer.
    pub word: usize,
    pub chunks_per_rank: usize,
    /// Each counter entry's own tiles (inbox entries past the ranks' chunks: 0).
    pub tiles: Vec<u32>,
    /// Action 2c + k (entry c's k-th outgoing transfer): its destination entry and whether it
    /// reduces (else copies); None where entry c has no such transfer.
    pub actions: Vec<Option<(usize, bool)>>,
}

/// Fused mode's progress log in a lowering: its buffers, its layout, and what its first run saw
/// (only that run keeps the log: the kernel skips it once the header's `log_at` is 0, so timed runs pay
/// nothing for it).
#[derive(Clone, Debug, PartialEq)]
pub struct FusedLog {
    /// The counters buffer (the log past their words) and the forward table.
    pub counters: Buffer,
    pub forward: Buffer,
    /// The byte in the forward table of the header's `log_at` (the log's first word; 0 turns it
    /// off).
    pub switch_at: u64,
    pub log: ProgressLog,
    /// The log's words as its first run left them.
    pub first: Option<Vec<u32>>,
}

impl ProgressLog {
    /// Its u32 words: the clock, each entry's completion, each of its two actions' first claim and
    /// last end, each entry's counter as the spares' watchers last saw it.
    pub fn words(&self) -> usize {
        1 + 6 * self.tiles.len()
    }
}

impl Table {
    /// Puts the progress log past the counters' words (the header's `log_at` names its first word)
    /// and says how to read it back.
    pub(super) fn add_progress(&mut self, nch: usize) -> ProgressLog {
        self.header.log_at = self.counter_words as u32;
        let entries = &self.fwd;
        let log = ProgressLog {
            word: self.counter_words,
            chunks_per_rank: nch,
            tiles: entries
                .iter()
                .map(|f| if f.land == 0 { f.tiles } else { 0 })
                .collect(),
            // A landed hop copies into an inbox entry that the spares then add into the chunk it
            // lands in: drawn as the reduce into that chunk it stands for.
            actions: entries
                .iter()
                .flat_map(|f| [(f.to0, f.op0), (f.to1, f.op1)])
                .map(|(to, op)| {
                    (to != NONE).then(|| match entries.get(to as usize) {
                        Some(inbox) if inbox.land != 0 => (inbox.into as usize, true),
                        _ => (to as usize, op == 1),
                    })
                })
                .collect(),
        };
        self.counter_words += log.words();
        log
    }
}

/// The steps that land (with `--fused land` on): each reduce that is the only transfer into its
/// destination's chunk, a chunk its destination produces at its last stage: the ring's last hop,
/// into the chunk its destination produces last, which as a reduce would wait for every tile of it
/// and so run after the GEMM (in f32, most of fused mode's exposed time: see BENCHMARKS.md). The
/// direct reduce-scatter's several reduces into one chunk keep their gates.
pub(super) fn landing(schedule: &Schedule) -> Vec<usize> {
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
pub(super) fn check_table(
    fwd: &[Forward],
    out_elems: usize,
    words: usize,
) -> std::result::Result<(), String> {
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
