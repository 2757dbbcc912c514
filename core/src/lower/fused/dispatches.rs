//! Fused mode's dispatches: the GEMM's per run of ranks, the spares' and the finisher beside it,
//! and the mode's own sequential baseline.

use std::ops::Range;

use super::super::{
    Binding, Buffer, Command, Dispatch, Kernel, Lowered, Params, Pass, Recording, Resource, Span,
    Target,
};
use super::{
    alias_of, span, stub, Buffers, FusedTuning, JobSpan, OutLayout, RankRun, SpareCounts,
    SpareDispatch, Trigger,
};
use crate::kernels::gemm::GemmParams;
use crate::plan::Plan;

/// The watched GEMM's dispatches where each binds one run of ranks (`rank_runs`): one per span, each
/// with a binding of `params(its jobs, its workgroups)`.
pub(super) fn per_run_dispatches(
    l: &mut Lowered,
    (bufs, out): (Buffers, &OutLayout),
    (runs, operands): (&[RankRun], &[[Span; 2]]),
    spans: &[JobSpan],
    params: impl Fn(Range<usize>, u32) -> GemmParams,
) -> Vec<Dispatch> {
    let counters = bufs.counters;
    // View 1 of the output and counters is the spares' (below); a buffer's n-th dispatch (n > 0)
    // writes through view n + 1, its first through the buffer itself (so every buffer is bound
    // as itself by one dispatch, and wgpu orders its clear and copies against that one).
    let outs: Vec<Buffer> = bufs.outs().collect();
    let located: Vec<(usize, Range<u64>)> = spans
        .iter()
        .map(|(_, _, g)| out.locate(&runs[*g].out))
        .collect();
    for (k, &buf) in outs.iter().enumerate() {
        let dispatches = located.iter().filter(|(b, _)| *b == k).count();
        if let Buffer::Pool(i) = buf {
            l.pool[i].views = l.pool[i].views.max(dispatches);
        }
    }
    if let Buffer::Pool(i) = counters {
        l.pool[i].views = l.pool[i].views.max(spans.len());
    }
    let view = |buf: Buffer, n: usize| match buf {
        Buffer::Pool(i) if n > 0 => Buffer::View(i, n + 1),
        other => other,
    };
    // A buffer no run writes (the second holding inboxes alone) is bound as itself by the first
    // dispatch, in a window it never reaches.
    let unbound = (0..outs.len()).find(|&k| !located.iter().any(|(b, _)| *b == k));
    spans
        .iter()
        .enumerate()
        .map(|(d, (range, seg_wg, g))| {
            let [a, b] = operands[*g];
            // The run's outputs lie in one buffer (`rank_runs`). The tracked GEMM declares no
            // further window: 16 bytes of its own views stand in for them.
            let (k, at) = located[d].clone();
            let nth = located[..d].iter().filter(|(b, _)| *b == k).count();
            let buf = view(outs[k], nth);
            let rest = stub(buf, at.start);
            let idle = match unbound {
                Some(u) if d == 0 => stub(outs[u], 0),
                _ => rest,
            };
            l.bindings.push(bufs.binding(
                Params::Gemm(params(range.clone(), *seg_wg)),
                [Resource::Window(span(buf, &at)), rest, idle, rest],
                [
                    Resource::Window(a),
                    Resource::Window(b),
                    stub(b.buffer, b.offset),
                ],
                view(counters, d),
            ));
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
}

/// The timed pass's dispatches: the GEMM's, with the spares' own dispatch and the finisher where
/// the spares have a dispatch of their own.
pub(super) fn with_spares(
    l: &mut Lowered,
    bufs: Buffers,
    binding: usize,
    gemm: &[Dispatch],
    tuning: &FusedTuning,
    counts: SpareCounts,
) -> Vec<Dispatch> {
    let counters = bufs.counters;
    let watched = tuning.trigger == Trigger::Spares;
    let mut dispatches = gemm.to_vec();
    if tuning.spare_dispatch != SpareDispatch::Own || (counts.spares == 0 && !watched) {
        return dispatches;
    }
    // The same bindings, with what the GEMM writes (the packed output, the counters and the
    // queue) through second views of the same memory.
    let viewed: Vec<Buffer> = bufs.outs().chain([counters]).collect();
    for &b in &viewed {
        if let Buffer::Pool(i) = b {
            l.pool[i].views = l.pool[i].views.max(1);
        }
    }
    let view = |r: Resource| match r {
        Resource::Buffer(b) if viewed.contains(&b) => Resource::Buffer(alias_of(b)),
        Resource::Window(s) if viewed.contains(&s.buffer) => Resource::Window(Span {
            buffer: alias_of(s.buffer),
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
    let spares = Kernel::Spares {
        watch: watched,
        land: tuning.land,
    };
    if counts.spares > 0 {
        // First, nothing of theirs is cleared (they bind views of the output and counters),
        // but they also bind the packed A and B, copied on every run: the barrier wgpu records
        // before them for those is an execution dependency on every earlier copy and clear (the
        // GEMM's barriers, after them, wait only for copies); that the clears' memory is then
        // seen through the views rests on the driver, as src/alias.rs says of every view.
        let at = if tuning.spares_first { 0 } else { gemm.len() };
        dispatches.insert(
            at,
            Dispatch {
                kernel: spares,
                binding: spare_binding,
                workgroups: counts.spares,
            },
        );
    }
    if watched && counts.pieces > 0 {
        // The finisher: the spare pipeline again, after the GEMM and the spares (wgpu's barrier
        // between two dispatches that write the same views; the GEMM's writes are before it in
        // the same pass, and its memory is the views'). Where the spares beside the GEMM moved
        // everything it finds every piece done and leaves at once; where they gave up or never
        // ran, it triggers and moves what is left (shaders/fused/epilogue.wgsl, at the top).
        dispatches.push(Dispatch {
            kernel: spares,
            binding: spare_binding,
            workgroups: counts.movers,
        });
    }
    dispatches
}

/// This mode's own sequential run, the baseline of its efficiency: after `setup` (the packing and
/// clears), the watched GEMM (tracker only) over the same jobs, grid and bindings, then in a pass
/// of its own the finisher alone, which triggers and moves every transfer (the spare pipeline on
/// the GEMM's own buffers, so wgpu's barrier orders it after the GEMM). The same GEMM and
/// transfers, not overlapped.
pub(super) fn own_sequential(
    t: &Target,
    setup: &[Command],
    gemm: &[Dispatch],
    plan: &Plan,
    binding: usize,
    counts: SpareCounts,
    land: bool,
) -> Recording {
    let mut own = setup.to_vec();
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
    if counts.pieces > 0 {
        own.push(Command::Pass(Pass {
            ops,
            dispatches: vec![Dispatch {
                kernel: Kernel::Spares { watch: true, land },
                binding,
                workgroups: counts.movers,
            }],
        }));
    }
    Recording {
        device: t.device,
        label: "fused sequential",
        commands: own,
    }
}
