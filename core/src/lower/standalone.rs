//! Standalone work lowered over pool buffers (a step's one end may be a host link slot's), so that
//! tests, benchmarks and the link calibrations run it through the executor as the modes run theirs:
//! the tracked GEMM (one shape's operands, output, tracker and job table) and the step at several
//! puts and link budgets, between pool buffers or a pool buffer and a host link slot's.

use super::ops::capped;
use super::{grid_workgroups, job_table, Binding, Buffer, Command, Dispatch, Group};
use super::{Kernel, LinkBox, Lowered, Params, Pass, Recording, Resource, Target, Wait};
use crate::error::{Error, Result};
use crate::kernels::gemm::{GemmParams, Job, Padding, StoreMode};
use crate::kernels::step::{Link, StepParams};
use crate::kernels::Put;
use crate::shapes::{fold, tiles, Chunking, Dtype, Shape};

/// What a standalone tracked GEMM computes and how.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrackedGemmSpec {
    pub shape: Shape,
    /// Operand type (A's and B's buffers); the output is f32.
    pub dtype: Dtype,
    /// Row bands, one counter each.
    pub chunks: usize,
    /// The order the chunks are produced in: a permutation of 0..chunks (None: ascending).
    pub order: Option<Vec<usize>>,
    /// Workgroups asked for the tracked store's persistent grid (None: a workgroup per tile).
    pub grid: Option<u32>,
}

/// A standalone tracked GEMM as data: its buffers (all in `lowered.pool`) and one recording per store
/// mode, each opening with the tracker's clear.
#[derive(Clone, Debug)]
pub struct TrackedLowering {
    /// Its bindings and pool; no plan op or plan recording.
    pub lowered: Lowered,
    pub chunking: Chunking,
    pub padding: Padding,
    pub a: Buffer,
    pub b: Buffer,
    /// The f32 output, rows N apart.
    pub c: Buffer,
    /// One counter per chunk.
    pub tracker: Buffer,
    /// Host-side thresholds: tiles per chunk.
    pub thresholds: Vec<u32>,
    /// Workgroups of the per-tile dispatch (the tiles).
    pub total_wg: u32,
    /// Workgroups of the tracked store's persistent grid, where it has one.
    pub grid_wg: Option<u32>,
    /// Store, update, untracked.
    recordings: [Recording; 3],
}

impl TrackedLowering {
    /// The commands of one run through `mode`'s pipeline: the tracker's clear first where `reset`
    /// (else its counters keep counting from the last run, as update mode's accumulation checks).
    pub fn commands(&self, mode: StoreMode, reset: bool) -> &[Command] {
        let r = &self.recordings[match mode {
            StoreMode::Store => 0,
            StoreMode::Update => 1,
            StoreMode::Untracked => 2,
        }];
        &r.commands[usize::from(!reset)..]
    }
}

/// `order` checked as a permutation of 0..chunks (None: ascending).
fn chunk_order(order: Option<&[usize]>, chunks: usize) -> Result<Vec<usize>> {
    let Some(order) = order else {
        return Ok((0..chunks).collect());
    };
    let mut seen = vec![false; chunks];
    let permutes = order.len() == chunks
        && order
            .iter()
            .all(|&x| x < chunks && !std::mem::replace(&mut seen[x], true));
    if !permutes {
        return Err(Error::invalid(
            "chunk order",
            format!("{order:?}"),
            format!("a permutation of 0..{chunks}"),
        ));
    }
    Ok(order.to_vec())
}

/// Lowers `spec` for `target`: the job table of its chunks in their order (the one builder every
/// GEMM dispatch's table comes from), its params, and a binding per dispatch (the persistent grid's
/// its own, as a plan's grid dispatch is).
pub fn lower_tracked_gemm(spec: &TrackedGemmSpec, target: Target) -> Result<TrackedLowering> {
    let (shape, chunks) = (spec.shape, spec.chunks);
    if chunks == 0 || chunks > shape.m {
        return Err(Error::invalid(
            "chunk count",
            chunks,
            format!("between 1 and the {} output rows", shape.m),
        ));
    }
    if spec.grid == Some(0) {
        return Err(Error::invalid("GEMM grid", 0, "at least 1 workgroup"));
    }
    let order = chunk_order(spec.order.as_deref(), chunks)?;
    let chunking = Chunking::new(shape.m, 1, chunks)?;
    let padding = Padding::new(shape.m, shape.k, shape.n);
    let tile_n = target.tile_n;
    let (jobs, total_wg) = job_table(
        order.iter().map(|&x| {
            let rows = chunking.rows(x);
            Job {
                row0: rows.start as u32,
                row1: rows.end as u32,
                counter: x as u32,
                ..Default::default()
            }
        }),
        shape.n,
        tile_n,
    );
    let thresholds = (0..chunks)
        .map(|x| tiles(chunking.rows(x).len(), shape.n, tile_n) as u32)
        .collect();
    let params = GemmParams::new(
        shape,
        &padding,
        tile_n,
        0..jobs.len(),
        total_wg,
        target.max_workgroups_per_dim,
    );
    let mut l = Lowered::blank(target);
    let (a_bytes, b_bytes) = padding.bytes(spec.dtype);
    let a = l.pool_buffer("gemm A", a_bytes, None);
    let b = l.pool_buffer("gemm B", b_bytes, None);
    let c_bytes = (shape.m * shape.n * 4) as u64;
    let c = l.pool_buffer("gemm C (tracked output)", c_bytes, None);
    let tracker = l.pool_buffer("gemm tracker", (chunks * 4) as u64, None);
    let table = bytemuck::cast_slice(&jobs).to_vec();
    let jobs = l.pool_buffer("gemm jobs", table.len() as u64, Some(table));
    let buf = Resource::Buffer;
    l.bindings.push(Binding::new(
        Group::Gemm,
        Params::Gemm(params),
        &[
            ("dst", buf(c)),
            ("p", Resource::Params),
            ("a", buf(a)),
            ("b", buf(b)),
            ("counters", buf(tracker)),
            ("jobs", buf(jobs)),
        ],
    ));
    let per_tile = |store| Dispatch {
        kernel: Kernel::Gemm(store),
        binding: 0,
        workgroups: total_wg,
    };
    // At most a workgroup per tile: more would only loop over nothing.
    let grid = spec.grid.map(|g| {
        let g = grid_workgroups(g, total_wg, shape.k, target.loop_limit).min(total_wg);
        capped(&mut l, per_tile(StoreMode::Store), g)
    });
    let record = |label, dispatch| Recording {
        device: target.device,
        label,
        commands: vec![
            Command::Clear(tracker),
            Command::Pass(Pass {
                ops: Vec::new(),
                dispatches: vec![dispatch],
            }),
        ],
    };
    let recordings = [
        record(
            "tracked gemm (store)",
            grid.unwrap_or(per_tile(StoreMode::Store)),
        ),
        record("tracked gemm (update)", per_tile(StoreMode::Update)),
        record("tracked gemm (untracked)", per_tile(StoreMode::Untracked)),
    ];
    Ok(TrackedLowering {
        lowered: l,
        chunking,
        padding,
        a,
        b,
        c,
        tracker,
        thresholds,
        total_wg,
        grid_wg: grid.map(|d| d.workgroups),
        recordings,
    })
}

/// Where a standalone step reads or writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepEnd {
    /// A pool buffer of the step's own lowering, as long as the step (the executor makes it, or
    /// binds a caller's buffer in its place).
    Pool,
    /// A host link slot's buffer, which the executor is handed.
    Link(LinkBox),
}

/// A standalone step: `bytes` (whole 16-byte units) from `src` to `dst`, through each of `puts` at
/// each of `links`, with no tracker bump and no second source (what the link calibrations, the host
/// link's included, and the step benchmark time).
#[derive(Clone, Copy, Debug)]
pub struct StepSpec<'s> {
    pub label: &'static str,
    pub dst: StepEnd,
    pub src: StepEnd,
    pub bytes: u64,
    pub puts: &'s [Put],
    pub links: &'s [Link],
}

/// A standalone step as data.
#[derive(Clone, Debug)]
pub struct StepLowering {
    pub lowered: Lowered,
    /// What the step reads and writes: its pool buffers, or the link buffers its spec named.
    pub src: Buffer,
    pub dst: Buffer,
    /// The counters the step binds (a pool buffer, never bumped): steps that run side by side each
    /// bind their own, since two dispatches binding one writable buffer are ordered.
    pub counters: Buffer,
    /// One recording per (put, budget), puts outermost: one pass of one dispatch.
    pub recordings: Vec<Recording>,
}

impl StepLowering {
    /// The recording of the `put`-th put at the `link`-th budget of its spec.
    pub fn recording(&self, put: usize, link: usize) -> &Recording {
        let links = self.lowered.bindings.len();
        assert!(link < links, "budget {link} of {links}");
        &self.recordings[put * links + link]
    }
}

/// Lowers `spec`: a binding per budget, shared by its puts' dispatches.
pub fn lower_step(spec: &StepSpec, target: Target) -> StepLowering {
    let mut l = Lowered::blank(target);
    let bytes = spec.bytes;
    let mut end = |end, label| match end {
        StepEnd::Pool => l.pool_buffer(label, bytes, None),
        StepEnd::Link(k) => Buffer::Link(k),
    };
    let src = end(spec.src, "step src");
    let dst = end(spec.dst, "step dst");
    let counters = l.pool_buffer("step counters", 16, None);
    let len4 = (bytes / 16) as u32;
    let buf = Resource::Buffer;
    let mut dispatches = Vec::new();
    for link in spec.links {
        let n_wg = link.workgroups(len4);
        let params = StepParams {
            len4,
            n_wg,
            dispatch_x: fold(n_wg, target.max_workgroups_per_dim).0,
            ..Default::default()
        };
        l.bindings.push(Binding::new(
            Group::Step,
            Params::Step(params),
            &[
                ("dst", buf(dst)),
                ("p", Resource::Params),
                ("src", buf(src)),
                ("counters", buf(counters)),
                // Unread (`has_acc` 0), bound to a buffer the layout accepts.
                ("acc", buf(src)),
            ],
        ));
        dispatches.push((l.bindings.len() - 1, n_wg));
    }
    let recordings = spec
        .puts
        .iter()
        .flat_map(|&put| {
            dispatches
                .iter()
                .map(move |&(binding, workgroups)| Recording {
                    device: target.device,
                    label: spec.label,
                    commands: vec![Command::Pass(Pass {
                        ops: Vec::new(),
                        dispatches: vec![Dispatch {
                            kernel: Kernel::Step {
                                put,
                                acc: false,
                                wait: Wait::No,
                            },
                            binding,
                            workgroups,
                        }],
                    })],
                })
        })
        .collect();
    StepLowering {
        lowered: l,
        src,
        dst,
        counters,
        recordings,
    }
}
