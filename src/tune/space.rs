//! The space `t3 tune` searches: per mode, the values each knob may take on this point, as axes whose
//! product is the exhaustive grid and along which the search moves one knob at a time, axis by axis
//! in rounds ([`rounds`]).

use crate::config::{Config, ModeKind};
use crate::schedule::Order;

use super::knobs::Given;
use super::knobs::Knobs;
use super::model;

/// One value of one knob.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Chunks(usize),
    Reduce(&'static str),
    Grid(Option<u32>),
    Lead(Option<u32>),
    Link(Option<u32>),
    Arbitrate(Option<u32>),
    Grain(Option<&'static str>),
    Depth(Option<usize>),
    Spares(Option<u32>),
    Pieces(Option<u32>),
    Pause(Option<u32>),
    Collective(Option<&'static str>),
    Order(Option<&'static str>),
}

impl Value {
    /// Sets this knob in `k`.
    pub fn set(&self, k: &mut Knobs) {
        match self {
            Value::Chunks(n) => k.chunks = *n,
            Value::Reduce(r) => k.reduce = (*r).into(),
            Value::Grid(g) => k.gemm_grid = *g,
            Value::Lead(l) => k.step_lead = *l,
            Value::Link(w) => k.link_workgroups = *w,
            Value::Arbitrate(w) => k.arbitrate = *w,
            Value::Grain(g) => k.host_grain = g.map(str::to_string),
            Value::Depth(d) => k.host_depth = *d,
            Value::Spares(s) => k.fused_spares = *s,
            Value::Pieces(p) => k.fused_pieces = *p,
            Value::Pause(p) => k.fused_pause = *p,
            Value::Collective(c) => k.collective = c.map(str::to_string),
            Value::Order(o) => k.order = o.map(str::to_string),
        }
    }
}

impl Value {
    /// Whether this knob was given as a flag (`given`): its axis is then left out of the search, and
    /// the flag's value, already in the point's configuration, stands.
    pub fn given(&self, given: &Given) -> bool {
        match self {
            Value::Chunks(_) => given.chunks,
            Value::Reduce(_) => given.reduce,
            Value::Grid(_) => given.gemm_grid,
            Value::Lead(_) => given.step_lead,
            Value::Link(_) => given.link,
            Value::Arbitrate(_) => given.arbitrate,
            Value::Grain(_) => given.host_grain,
            Value::Depth(_) => given.host_depth,
            Value::Spares(_) => given.fused_spares,
            Value::Pieces(_) => given.fused_pieces,
            Value::Pause(_) => given.fused_pause,
            Value::Collective(_) => given.collective,
            Value::Order(_) => given.order,
        }
    }
}

/// The axes of `axes` whose knob was not given as a flag.
pub fn not_given(axes: Vec<Vec<Value>>, given: &Given) -> Vec<Vec<Value>> {
    axes.into_iter()
        .filter(|a| !a.first().is_some_and(|v| v.given(given)))
        .collect()
}

/// What the space depends on beyond the point's configuration.
#[derive(Clone, Copy, Debug)]
pub struct Context {
    /// Devices the ranks span.
    pub devices: usize,
    /// The GPU's multiprocessors, where known (a persistent grid is sized by them).
    pub sms: Option<u32>,
}

/// The axes of `mode`'s space at `base` (the chunk axis in the order `chunks` gives, best first),
/// each value one that `base`'s collective and the mode accept.
pub fn axes(mode: ModeKind, base: &Config, chunks: &[usize], ctx: Context) -> Vec<Vec<Value>> {
    let mut axes = Vec::new();
    let offered = |v: &Value| {
        let mut k = Knobs::of(base);
        v.set(&mut k);
        k.runnable(base, mode).is_some()
    };
    // The collective that leaves the same sums with no more bytes, where the mode runs it. The
    // search's rounds start from each of its values in turn rather than move along it: the other
    // knobs' best values differ with it. First, so that the grid measures one collective's
    // configurations before the other's (a system is built anew for each).
    if let Some(a) = base.collective.alternative(base.ranks) {
        let other = Value::Collective(Some(a.name()));
        if offered(&other) {
            axes.push(vec![Value::Collective(None), other]);
        }
    }
    axes.push(chunks.iter().map(|&n| Value::Chunks(n)).collect());
    // The GEMM's order, where the collective takes the chunk one (the ring's): offered whatever the
    // point's own chunk count, as the chunk order needs two (a configuration that cannot run is
    // not measured). Sequential runs its collective after its whole GEMM, in one pass, so the order
    // changes nothing there but the order of that pass's dispatches: not searched.
    if mode != ModeKind::Sequential && Order::Chunk.fits(base.collective) {
        axes.push(vec![
            Value::Order(None),
            Value::Order(Some(Order::Chunk.name())),
        ]);
    }
    let reduces: Vec<Value> = ["update", "forward", "land"]
        .into_iter()
        .map(Value::Reduce)
        .filter(offered)
        .collect();
    if reduces.len() > 1 {
        axes.push(reduces);
    }
    if mode == ModeKind::Host || mode == ModeKind::Encoded {
        if let Some(s) = ctx.sms {
            // The whole GPU, or just below it (room for the steps beside every GEMM workgroup).
            let below = model::grid_below(s);
            let mut grids = vec![Value::Grid(None), Value::Grid(Some(s))];
            if below < s {
                grids.push(Value::Grid(Some(below)));
            }
            axes.push(grids);
        }
        axes.push(vec![Value::Lead(None), Value::Lead(Some(0))]);
    }
    // Only a real link's budget is tuned: an emulated one's stands for the rate asked of it.
    if ctx.devices > 1 && mode != ModeKind::Fused {
        axes.push(vec![
            Value::Link(None),
            Value::Link(Some(64)),
            Value::Link(Some(256)),
        ]);
    }
    // Across devices, the link's kernels beside GEMM work share a budget of their own, arbitration's
    // (which caps the other steps beside GEMM work too): the default is the middle of what paid on
    // an H200 (BENCHMARKS.md, "The link beside a GEMM").
    if ctx.devices > 1 && mode == ModeKind::Host {
        axes.push(vec![
            Value::Arbitrate(None),
            Value::Arbitrate(Some(16)),
            Value::Arbitrate(Some(64)),
        ]);
    }
    if mode == ModeKind::Host {
        let mut grains = vec![Value::Grain(None), Value::Grain(Some("chunk"))];
        // Across devices a chunk's send lands only a submission after its sender's completes: a
        // stage in pieces of two chunks lets the first cross under the rest, with fewer
        // submissions than a chunk each (from 3 chunks per rank; at 1 or 2, 2 is stage grain).
        if ctx.devices > 1 && chunks.iter().any(|&c| c >= 3) {
            grains.push(Value::Grain(Some("2")));
        }
        axes.push(grains);
        axes.push(vec![
            Value::Depth(None),
            Value::Depth(Some(1)),
            Value::Depth(Some(4)),
        ]);
    }
    if mode == ModeKind::Fused {
        let r = base.ranks as u32;
        let mut spares = vec![Value::Spares(None), Value::Spares(Some(r))];
        if let Some(s) = ctx.sms {
            spares.push(Value::Spares(Some((s / 8).max(1))));
        }
        axes.push(spares);
        axes.push(vec![
            Value::Pieces(None),
            Value::Pieces(Some(1)),
            Value::Pieces(Some(4)),
        ]);
        axes.push(vec![Value::Pause(None), Value::Pause(Some(64))]);
    }
    axes
}

/// The other way to make room for the steps beside GEMM work, where `k` takes one of the two the
/// model's one-GPU defaults know and `axes` offer the other: a persistent GEMM grid (the last the
/// grid axis offers: just below the GPU where that is a value), or a step lead of 0 with no grid.
/// The model picks one by the GEMM kernel's kind, but which pays depends on the shape too, and the
/// two are two knobs apart, which moves of one knob from either never cross.
pub fn other_room(k: &Knobs, axes: &[Vec<Value>]) -> Option<Knobs> {
    let offers = |v: &Value| axes.iter().any(|a| a.contains(v));
    let grid = axes.iter().flatten().rev().find_map(|v| match v {
        Value::Grid(Some(g)) => Some(*g),
        _ => None,
    });
    let mut o = k.clone();
    match (k.gemm_grid, k.step_lead) {
        (Some(_), None) if offers(&Value::Grid(None)) && offers(&Value::Lead(Some(0))) => {
            (o.gemm_grid, o.step_lead) = (None, Some(0));
        }
        (None, Some(0)) if offers(&Value::Lead(None)) => {
            (o.gemm_grid, o.step_lead) = (Some(grid?), None);
        }
        _ => return None,
    }
    Some(o)
}

/// The knobs a search starts from: `base`'s, with the first value of every axis.
pub fn start(base: &Config, axes: &[Vec<Value>]) -> Knobs {
    let mut k = Knobs::of(base);
    for a in axes {
        if let Some(v) = a.first() {
            v.set(&mut k);
        }
    }
    k
}

/// Every point of the axes' product from `start` (the exhaustive grid), at most `limit`.
pub fn grid(start: &Knobs, axes: &[Vec<Value>], limit: usize) -> Vec<Knobs> {
    let mut out = vec![start.clone()];
    for a in axes {
        out = out
            .iter()
            .flat_map(|k| {
                a.iter().map(move |v| {
                    let mut k = k.clone();
                    v.set(&mut k);
                    k
                })
            })
            .take(limit)
            .collect();
    }
    out
}

/// The order in which the search visits the axes' values, `limits[a]` values of axis `a` (its first
/// ones): in rounds, each round the next value of every axis that has one. A search that a budget
/// cuts after a few measurements has then moved along every axis once (a step lead, a grid, a depth
/// may gain more than a second chunk count) before it tries any axis's second alternative.
pub fn rounds(limits: &[usize]) -> Vec<(usize, usize)> {
    let most = limits.iter().copied().max().unwrap_or(0);
    (0..most)
        .flat_map(|v| {
            limits
                .iter()
                .enumerate()
                .filter(move |&(_, &n)| v < n)
                .map(move |(a, _)| (a, v))
        })
        .collect()
}

/// Chunk counts for `mode` on `base`, the model's best at `costs` first, then the next finer count,
/// then the rest as the model ranks them. The model's pass cost is fitted at one chunk count and
/// cannot tell that finer chunks shorten a tail after the GEMM (a stage in pieces, the direct
/// all-reduce's last sends): a search cut to a few counts still measures one finer than its best.
pub fn chunk_order(mode: ModeKind, costs: &model::Costs, base: &Config) -> Vec<usize> {
    let mut v = model::ranked_chunks(mode, costs, base);
    let best = v.first().copied().unwrap_or(1);
    if let Some(n) = v.iter().copied().filter(|&n| n > best).min() {
        v.retain(|&m| m != n);
        v.insert(1, n);
    }
    v
}

/// The chunk counts `mode`'s search measures: [`chunk_order`]'s first `tries`, then, where the
/// mode's configuration as given has its own count (`own`: fused mode's own,
/// [`super::rig::Job::config`]), that count and the next finer one, so that the search can move on
/// from where a run without a table starts (the model's pass cost, fitted at the point's count,
/// cannot judge that one). Counts past the shard's rows are left out.
pub fn chunk_axis(
    mode: ModeKind,
    costs: &model::Costs,
    base: &Config,
    own: Option<usize>,
    tries: usize,
) -> Vec<usize> {
    let mut v = chunk_order(mode, costs, base);
    v.truncate(tries.max(1));
    if let Some(own) = own.filter(|&n| n <= model::max_chunks(base)) {
        let finer = model::CHUNKS
            .into_iter()
            .filter(|&n| n > own && n <= model::max_chunks(base))
            .min();
        for n in std::iter::once(own).chain(finer) {
            if !v.contains(&n) {
                v.push(n);
            }
        }
    }
    v
}
