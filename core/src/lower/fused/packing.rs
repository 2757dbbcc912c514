//! Fused mode's packing: where each rank's operands sit in the packed buffers, and the windows and
//! runs of ranks those buffers are bound through.

use super::super::{operands, Buffer, Command, Lowered, Resource, Span};
use crate::config::Config;
use crate::error::Error;
use crate::lower::Target;
use crate::shapes::{buffer_bytes, Chunking};

/// A pool buffer of `bytes` bound as two windows: the first at most `window` bytes, the second the
/// rest. Where it fits the first, the second is a small range past it that the shader never reads:
/// disjoint from the first, as WebGPU refuses two writable bindings of one buffer that overlap in a
/// dispatch (Vulkan does not check). 256 bytes: the largest storage offset alignment wgpu allows.
/// Returns the buffer and its two windows.
pub(super) fn windows(
    l: &mut Lowered,
    label: &'static str,
    bytes: u64,
    window: u64,
) -> (Buffer, Resource, Resource) {
    windows_from(l, label, bytes, window, window)
}

/// [`windows`] with the second window from byte `second` (a 256-byte boundary, at most `window`) on:
/// read-only bindings only where it is below `window`, as the two then overlap.
pub(super) fn windows_from(
    l: &mut Lowered,
    label: &'static str,
    bytes: u64,
    window: u64,
    second: u64,
) -> (Buffer, Resource, Resource) {
    let spare_at = bytes.next_multiple_of(256);
    let fits = bytes <= window;
    let alloc = if fits { spare_at + 256 } else { bytes };
    let buffer = l.pool_buffer(label, alloc, None);
    if let Buffer::Pool(i) = buffer {
        l.pool[i].windowed = true;
    }
    let window_of = |at: std::ops::Range<u64>| Resource::Window(span(buffer, &at));
    if fits {
        (buffer, window_of(0..bytes), stub(buffer, spare_at))
    } else {
        (buffer, window_of(0..window), window_of(second..bytes))
    }
}

/// Bytes `at` of `buffer`.
pub(super) fn span(buffer: Buffer, at: &std::ops::Range<u64>) -> Span {
    Span {
        buffer,
        offset: at.start,
        bytes: at.end - at.start,
    }
}

/// 16 bytes of `buffer` from `at`: a binding the shader declares and never reads (or a second
/// window it never reaches).
pub(super) fn stub(buffer: Buffer, at: u64) -> Resource {
    Resource::Window(Span {
        buffer,
        offset: at,
        bytes: 16,
    })
}

/// Bytes of a window of fused mode's packed output (the first of two, its second starting there,
/// or each of four): the largest binding, or `--fused window` bytes where smaller (tests split small outputs with it), aligned
/// for a binding offset (256 bytes covers every adapter's min_storage_buffer_offset_alignment).
pub(super) fn fused_window(max_binding: u64, knob: Option<u32>) -> u64 {
    let w = knob.map_or(max_binding, |k| max_binding.min(u64::from(k)));
    (w / 256 * 256).max(256)
}

/// Where fused mode's packed output lies: each rank's output from element `bases[p]` (`bases[r]`:
/// where the inboxes start), split into bindings every `window` bytes. In two windows of one buffer,
/// or (`four`) in four of two buffers, the second from byte 2 x `window` on: no rank's output
/// crosses into it (a rank that would starts there), so each chunk and each run of ranks lies in
/// one buffer and copies and views of one buffer reach it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct OutLayout {
    pub(super) window: u64,
    pub(super) bases: Vec<usize>,
    pub(super) four: bool,
}

impl OutLayout {
    /// `ranks` outputs of `rank_elems` elements one after another.
    pub(super) fn two(ranks: usize, rank_elems: usize, window: u64) -> Self {
        OutLayout {
            window,
            bases: (0..=ranks).map(|p| p * rank_elems).collect(),
            four: false,
        }
    }

    /// The same in four windows of `window` bytes: the rank that would cross the second buffer's
    /// start begins there.
    pub(super) fn four(ranks: usize, rank_elems: usize, window: u64) -> Self {
        let second = (2 * window / 4) as usize;
        let mut at = 0;
        let mut bases = Vec::with_capacity(ranks + 1);
        for _ in 0..ranks {
            if at < second && at + rank_elems > second {
                at = second;
            }
            bases.push(at);
            at += rank_elems;
        }
        bases.push(at);
        OutLayout {
            window,
            bases,
            four: true,
        }
    }

    /// The first byte of the second buffer, where there is one.
    pub(super) fn second(&self) -> Option<u64> {
        self.four.then_some(2 * self.window)
    }

    /// Bytes `at` of the packed output as (buffer 0 or 1, its bytes): the second buffer's from
    /// [`OutLayout::second`] on. `at` lies in one buffer (the caller's ranges do).
    pub(super) fn locate(&self, at: &std::ops::Range<u64>) -> (usize, std::ops::Range<u64>) {
        match self.second() {
            Some(s) if at.start >= s => (1, at.start - s..at.end - s),
            _ => (0, at.clone()),
        }
    }
}

/// A run of consecutive ranks whose packed outputs, Bs and As are each bound as one window: the
/// byte ranges of the packed output, of packed B and of packed A it binds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct RankRun {
    pub(super) ranks: std::ops::Range<usize>,
    pub(super) out: std::ops::Range<u64>,
    pub(super) b: std::ops::Range<u64>,
    pub(super) a: std::ops::Range<u64>,
}

/// The ranks in runs, as long as each run's outputs (each rank's `rank_elems` from `out`'s bases,
/// `out_bytes` in all), Bs and As (`packing`'s) each fit `out.window` bytes and its outputs one
/// buffer; None where one rank's alone do not. A run's windows start at the 256-byte boundary at or
/// below its first rank's (every adapter's binding offset alignment) and end at a whole vec4 past
/// its last (the kernels bind the output as vec4s).
pub(super) fn rank_runs(
    out: &OutLayout,
    rank_elems: usize,
    out_bytes: u64,
    packing: &Packing,
) -> Option<Vec<RankRun>> {
    let window = out.window;
    let (a_sizes, b_sizes) = (packing.a_sizes(), packing.b_sizes());
    let (a_offs, b_offs) = (&packing.a_offs, &packing.b_offs);
    let run = |ranks: std::ops::Range<usize>| {
        let (p0, p1) = (ranks.start, ranks.end);
        let outs = (out.bases[p0] as u64 * 4) / 256 * 256
            ..((out.bases[p1 - 1] + rank_elems) as u64 * 4)
                .next_multiple_of(16)
                .min(out_bytes);
        let b = b_offs[p0] / 256 * 256..b_offs[p1 - 1] + b_sizes[p1 - 1];
        let a = a_offs[p0] / 256 * 256..a_offs[p1 - 1] + a_sizes[p1 - 1];
        let one_buffer = out
            .second()
            .is_none_or(|s| outs.end <= s || outs.start >= s);
        let fits = one_buffer && [&outs, &b, &a].iter().all(|r| r.end - r.start <= window);
        (
            RankRun {
                ranks,
                out: outs,
                b,
                a,
            },
            fits,
        )
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
pub(super) fn alias_of(b: Buffer) -> Buffer {
    match b {
        Buffer::Pool(i) => Buffer::View(i, 1),
        other => other,
    }
}

/// Every rank's operands packed one after another: each at the offset of its whole padded buffer.
pub(super) struct Packing {
    /// Each rank's (A, B) bytes.
    pub(super) sizes: Vec<(u64, u64)>,
    pub(super) a_offs: Vec<u64>,
    pub(super) a_bytes: u64,
    pub(super) b_offs: Vec<u64>,
    pub(super) b_bytes: u64,
    /// Where B's second window starts, where it has one ([`Packing::split_b`]).
    pub(super) b_second: Option<u64>,
    /// The window each rank's B is read through (`Job::b_window`).
    pub(super) b_window: Vec<u32>,
}

impl Packing {
    pub(super) fn new(config: &Config, chunking: &Chunking) -> Self {
        let sizes: Vec<(u64, u64)> = (0..config.ranks)
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
        Packing {
            sizes,
            a_offs,
            a_bytes,
            b_window: vec![0; b_offs.len()],
            b_offs,
            b_bytes,
            b_second: None,
        }
    }

    /// Each rank's A bytes.
    pub(super) fn a_sizes(&self) -> Vec<u64> {
        self.sizes.iter().map(|s| s.0).collect()
    }

    /// Each rank's B bytes.
    pub(super) fn b_sizes(&self) -> Vec<u64> {
        self.sizes.iter().map(|s| s.1).collect()
    }

    /// Binds B as two windows where it passes `window` (one dispatch binding every rank's): sets
    /// `b_second`, the second's first byte, and `b_window`, the window each rank's B is read through
    /// (`Job::b_window`: 0 the first, 1 the second, 2 across both). The second starts at the first
    /// rank whose B passes the first window if every rank from there on fits `max_binding`, so that
    /// each tile reads one window (a choice of window per load slows the cooperative GEMM by a third
    /// or more); else at the first window's end, the rank across it reading each word from its own.
    pub(super) fn split_b(&mut self, window: u64, max_binding: u64) {
        let sizes = self.b_sizes();
        let Some(first_past) = (0..sizes.len()).find(|&p| self.b_offs[p] + sizes[p] > window)
        else {
            return;
        };
        let at_rank = self.b_offs[first_past] / 256 * 256;
        let second = if self.b_bytes - at_rank <= max_binding {
            at_rank
        } else {
            window
        };
        let of = |p: usize| match (
            self.b_offs[p] + sizes[p] <= window,
            self.b_offs[p] >= second,
        ) {
            (true, _) => 0,
            (false, true) => 1,
            (false, false) => 2,
        };
        self.b_window = (0..sizes.len()).map(of).collect();
        self.b_second = Some(second);
    }

    /// The copies that pack every rank's A and B into its run's spans of them (`operands`, per
    /// run). Whole (16-byte padded) buffers, so every offset and size is a multiple of 16 bytes
    /// whatever the dtype and shape.
    pub(super) fn copies(&self, runs: &[RankRun], operands: &[[Span; 2]]) -> Vec<Command> {
        let mut commands = Vec::new();
        for (run, &[a, b]) in runs.iter().zip(operands) {
            for p in run.ranks.clone() {
                let (sa, sb) = self.sizes[p];
                for (src, bytes, dst, off) in [
                    (Buffer::A(p), sa, a, self.a_offs[p] - run.a.start),
                    (Buffer::B(p), sb, b, self.b_offs[p] - run.b.start),
                ] {
                    commands.push(Command::Copy {
                        src: Span {
                            buffer: src,
                            offset: 0,
                            bytes,
                        },
                        dst: dst.buffer,
                        dst_offset: dst.offset + off,
                    });
                }
            }
        }
        commands
    }
}

/// [`Error::check_size`] of what a window of `window` bytes and one binding after it hold (one
/// binding alone where `window` is 0): past them, their reach said as the sum it is, not as the
/// adapter's binding limit.
pub(super) fn check_windows(
    what: &str,
    bytes: u64,
    t: &Target,
    window: u64,
) -> std::result::Result<(), String> {
    let reach = window + t.max_binding;
    if window > 0 && bytes <= t.max_buffer && bytes > reach {
        return Err(format!(
            "{what} needs {bytes} bytes, over the {reach} bytes that a window of {window} and a \
             binding of the adapter's max_storage_buffer_binding_size ({}) reach; try a smaller \
             shape (--shape, or --scale with a preset)",
            t.max_binding
        ));
    }
    Error::check_size(what, bytes, t.max_buffer, reach).map_err(|e| e.to_string())
}
