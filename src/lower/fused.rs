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

mod table;
mod tuning;

use table::*;
pub use table::{Forward, FusedLog, ProgressLog};
pub use tuning::FusedTuning;
use tuning::*;

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
/// binding, or `--fused window` bytes where smaller (tests split small outputs with it), aligned
/// for a binding offset (256 bytes covers every adapter's min_storage_buffer_offset_alignment).
fn fused_window(max_binding: u64, knob: Option<u32>) -> u64 {
    let w = knob.map_or(max_binding, |k| max_binding.min(u64::from(k)));
    (w / 256 * 256).max(256)
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
    if config.out_dtype != crate::shapes::Dtype::F32 {
        return Err(format!(
            "fused mode moves f32 outputs only (its puts add f32 words); these are {}: \
             --out-dtype f32 runs it",
            config.out_dtype.name()
        ));
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
    let mut table = forward_table(
        config,
        chunking,
        schedule,
        (t.tile_n, t.tile_group),
        tuning,
        &lands,
        window,
    )?;
    // The progress log where a timeline is asked for (the epilogue ticks its clock per tile; where
    // the spares trigger, their watchers tick it as they see the counters grow).
    let log = config
        .fused
        .timeline
        .then(|| table.add_progress(chunking.count()));
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
            return Err("--fused help=never needs spares that run after the GEMM (--fused spare-dispatch=own, --fused alias=off)".into());
        }
        if spares == 0 {
            return Err("--fused help=never leaves every piece to the spares, and there are none (--fused spares=0)".into());
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
    l.fused_log = log.map(|log| FusedLog {
        counters,
        forward,
        switch_at: (std::mem::size_of_val(&fwd[..fwd.len() - 1])
            + std::mem::offset_of!(Forward, g1)) as u64,
        log,
        first: None,
    });
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
