//! Fused mode: the device-side trigger, T3's transparency. One GEMM dispatch covers every rank's
//! staggered production (all ranks' buffers packed into one binding per role, so the whole plan is
//! one usage scope); the workgroup whose counter increment completes a chunk, a GEMM tile's or an
//! incoming transfer's, performs that chunk's transfer itself with update semantics
//! (shaders/epilogue/fused.wgsl). Nothing spin-waits.

use std::collections::HashMap;

use bytemuck::{Pod, Zeroable};

use super::{Mode, Run, System};
use crate::error::Result;
use crate::gemm::{self, GemmParams, Job};
use crate::plan::{Buf, ReduceVia};
use crate::schedule::Op;
use crate::timeline::Timeline;

pub struct Fused;

const NONE: u32 = u32::MAX;

/// Mirrors `Forward` in shaders/epilogue/fused.wgsl: keep in sync.
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
struct Forward {
    off: u32,
    len: u32,
    at0: u32,
    to0: u32,
    op0: u32,
    at1: u32,
    to1: u32,
    op1: u32,
}

/// The packed buffers and the one bind group, made on the first run and kept by the system.
pub struct FusedState {
    out: wgpu::Buffer,
    counters: wgpu::Buffer,
    bind: wgpu::BindGroup,
    total_wg: u32,
    /// Element offset of each (rank, chunk) in `out`.
    offsets: HashMap<(usize, usize), u64>,
    /// Packed operands and each rank's element offset in them.
    a: wgpu::Buffer,
    b: wgpu::Buffer,
    a_offs: Vec<u64>,
    b_offs: Vec<u64>,
    /// Device memory the packed buffers take.
    pub bytes: u64,
    /// Keeps the tables alive for the bind group.
    _keep: Vec<wgpu::Buffer>,
}

/// Copies every rank's A and B into the packed buffers (each run: the ranks' inputs may have changed).
/// Whole (16-byte padded) buffers, so every offset and size is a multiple of 16 bytes whatever the
/// dtype and shape.
fn pack(sys: &System, st: &FusedState, enc: &mut wgpu::CommandEncoder) {
    let e = sys.config.dtype.bytes() as u64;
    for (p, rb) in sys.ranks.ranks.iter().enumerate() {
        enc.copy_buffer_to_buffer(&rb.a, 0, &st.a, st.a_offs[p] * e, rb.a.size());
        enc.copy_buffer_to_buffer(&rb.b, 0, &st.b, st.b_offs[p] * e, rb.b.size());
    }
}

/// The forward table: for each (rank, chunk) counter, the counter values at which its outgoing steps
/// fire (local tiles plus the incoming steps that precede the step in the schedule).
fn forward_table(sys: &System) -> std::result::Result<Vec<Forward>, String> {
    let ch = &sys.chunking;
    let (m, n) = (sys.config.shape.m, sys.config.shape.n);
    let tile_n = sys.kernels.gemm.engine.tile_n();
    let nch = ch.count();
    let idx = |p: usize, x: usize| p * nch + x;
    let mut fwd: Vec<Forward> = (0..sys.config.ranks * nch)
        .map(|c| {
            let (p, x) = (c / nch, c % nch);
            Forward {
                off: (p * m * n + ch.rows(x).start * n) as u32,
                len: (ch.rows(x).len() * n) as u32,
                at0: 0,
                to0: NONE,
                op0: 0,
                at1: 0,
                to1: NONE,
                op1: 0,
            }
        })
        .collect();
    let mut received: HashMap<(usize, usize), u32> = HashMap::new();
    for st in &sys.schedule.steps {
        let base = if sys.schedule.produces(st.src, st.chunk) {
            gemm::tiles(ch.rows(st.chunk).len(), n, tile_n) as u32
        } else {
            0
        };
        let at = base + received.get(&(st.src, st.chunk)).copied().unwrap_or(0);
        let op = match st.op {
            Op::Reduce => 1,
            Op::Copy => 2,
        };
        let f = &mut fwd[idx(st.src, st.chunk)];
        if f.to0 == NONE {
            (f.at0, f.to0, f.op0) = (at, idx(st.dst, st.chunk) as u32, op);
        } else if f.to1 == NONE {
            (f.at1, f.to1, f.op1) = (at, idx(st.dst, st.chunk) as u32, op);
        } else {
            return Err(format!(
                "chunk {} of rank {} leaves more than twice",
                st.chunk, st.src
            ));
        }
        *received.entry((st.dst, st.chunk)).or_insert(0) += 1;
    }
    Ok(fwd)
}

fn build(sys: &System) -> std::result::Result<FusedState, String> {
    if sys.config.via != ReduceVia::Update {
        return Err("fused mode realises every reduce as an update (T3's semantics); --reduce land and forward do not apply".into());
    }
    let gpu = sys.gpu;
    let (m, n) = (sys.config.shape.m, sys.config.shape.n);
    let tile_n = sys.kernels.gemm.engine.tile_n();
    let r = sys.config.ranks;
    let e = sys.config.dtype.bytes() as u64;
    // Each rank's operands at the element offset of its whole padded buffer.
    let offsets_of = |sizes: Vec<u64>| -> (Vec<u64>, u64) {
        let mut offs = Vec::new();
        let mut at = 0u64;
        for size in sizes {
            offs.push(at / e);
            at += size;
        }
        (offs, at)
    };
    let (a_offs, a_bytes) = offsets_of(sys.ranks.ranks.iter().map(|rb| rb.a.size()).collect());
    let (b_offs, b_bytes) = offsets_of(sys.ranks.ranks.iter().map(|rb| rb.b.size()).collect());
    for (what, bytes) in [
        ("packed A", a_bytes),
        ("packed B", b_bytes),
        ("packed outputs", (r * m * n * 4) as u64),
    ] {
        gpu.check_binding(what, bytes)
            .map_err(|e| format!("one dispatch must bind every rank: {e}"))?;
    }
    let fwd = forward_table(sys)?;
    let usage =
        wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::COPY_SRC;
    let mk = |label: &str, bytes: u64| gpu.buffer(label, bytes, usage).map_err(|e| e.to_string());
    let a = mk("fused A (all ranks)", a_bytes)?;
    let b = mk("fused B (all ranks)", b_bytes)?;
    let out = mk("fused outputs (all ranks)", (r * m * n * 4) as u64)?;
    let counters = mk("fused trackers (all ranks)", (fwd.len() * 4) as u64)?;
    // Jobs in stagger order: stage by stage, every rank's chunk of that stage.
    let nch = sys.chunking.count();
    let mut order: Vec<(usize, usize, usize)> = sys
        .schedule
        .production
        .iter()
        .enumerate()
        .flat_map(|(p, prod)| prod.iter().map(move |&(s, x)| (s, p, x)))
        .collect();
    order.sort();
    let mut jobs = Vec::new();
    let mut wg = 0u32;
    for (_, p, x) in order {
        let rows = sys.chunking.rows(x);
        jobs.push(Job {
            row0: rows.start as u32,
            row1: rows.end as u32,
            wg_start: wg,
            counter: (p * nch + x) as u32,
            a_off: a_offs[p] as u32,
            b_off: b_offs[p] as u32,
            c_off: (p * m * n) as u32,
            a_row_base: sys.ranks.ranks[p].a_row_base as u32,
            c_row_base: 0,
            ..Default::default()
        });
        wg += gemm::tiles(rows.len(), n, tile_n) as u32;
    }
    let layout = &sys.ranks.ranks[0].layout;
    let params = GemmParams::new(gpu, sys.config.shape, layout, tile_n, 0..jobs.len(), wg);
    let init = |label: &str, contents: &[u8], usage| gpu.init_buffer(label, contents, usage);
    let pbuf = init(
        "fused params",
        bytemuck::bytes_of(&params),
        wgpu::BufferUsages::UNIFORM,
    );
    let jbuf = init(
        "fused jobs",
        bytemuck::cast_slice(&jobs),
        wgpu::BufferUsages::STORAGE,
    );
    let fbuf = init(
        "fused forward table",
        bytemuck::cast_slice(&fwd),
        wgpu::BufferUsages::STORAGE,
    );
    let bind = crate::shaders::bind(
        gpu,
        "fused gemm",
        &sys.kernels.gemm.fused_layout,
        &[
            out.as_entire_binding(),
            pbuf.as_entire_binding(),
            a.as_entire_binding(),
            b.as_entire_binding(),
            counters.as_entire_binding(),
            jbuf.as_entire_binding(),
            fbuf.as_entire_binding(),
        ],
    );
    gpu.check("building fused mode")
        .map_err(|e| e.to_string())?;
    let offsets = (0..r * nch)
        .map(|c| ((c / nch, c % nch), fwd[c].off as u64))
        .collect();
    let bytes = a.size() + b.size() + out.size() + counters.size();
    Ok(FusedState {
        out,
        counters,
        bind,
        total_wg: wg,
        offsets,
        a,
        b,
        a_offs,
        b_offs,
        bytes,
        _keep: vec![pbuf, jbuf, fbuf],
    })
}

impl Mode for Fused {
    fn name(&self) -> &'static str {
        "fused"
    }

    fn skip_reason(&self, sys: &System) -> Option<String> {
        let mut cache = sys.fused.borrow_mut();
        if cache.is_none() {
            *cache = Some(build(sys));
        }
        cache.as_ref().and_then(|s| s.as_ref().err().cloned())
    }

    fn run(&self, sys: &System) -> Result<Run> {
        if let Some(reason) = self.skip_reason(sys) {
            return Err(crate::Error::invalid(
                "mode",
                "fused",
                format!("a mode this configuration supports ({reason})"),
            ));
        }
        let cache = sys.fused.borrow();
        let st = cache
            .as_ref()
            .and_then(|s| s.as_ref().ok())
            .expect("built above");
        let gpu = sys.gpu;
        sys.timer.reset();
        let mut enc = gpu
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("fused"),
            });
        pack(sys, st, &mut enc);
        enc.clear_buffer(&st.out, 0, None);
        enc.clear_buffer(&st.counters, 0, None);
        {
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("fused gemm + collective"),
                timestamp_writes: sys.timer.writes(),
            });
            let (x, y) = gpu.fold(st.total_wg);
            pass.set_pipeline(&sys.kernels.gemm.fused);
            pass.set_bind_group(0, &st.bind, &[]);
            pass.dispatch_workgroups(x, y, 1);
        }
        // Outside the timed pass: hand results and counters to the ranks' own buffers, where the
        // checks (and dumps) read every mode's results.
        let nch = sys.chunking.count();
        for (loc, lb) in &sys.ranks.locs {
            if loc.buf != Buf::Out {
                continue;
            }
            let off = st.offsets[&(loc.rank, loc.chunk)] * 4;
            enc.copy_buffer_to_buffer(&st.out, off, &lb.data, 0, (lb.elems * 4) as u64);
            enc.copy_buffer_to_buffer(
                &st.counters,
                ((loc.rank * nch + loc.chunk) * 4) as u64,
                &lb.tracker,
                0,
                4,
            );
        }
        let host_s = sys.submit_wait("fused", enc)?;
        let t = sys.timer.read(gpu)?;
        let (start, end, grain) = match t.first() {
            Some(&(a, b)) => (a, b, "dispatch (one fused dispatch holds every tile, trigger and transfer; WGSL has no clock to split it)"),
            None => (0.0, host_s * 1e6, "submission (host clock)"),
        };
        let all: Vec<usize> = (0..sys.plan.ops.len()).collect();
        Ok(Run {
            total_us: end - start,
            gemm_us: None,
            comm_us: None,
            timeline: Timeline {
                mode: self.name().into(),
                grain: grain.into(),
                ranks: sys.config.ranks,
                events: sys.pass_events(&all, start, end, Some(0)),
            },
            trigger_latency_us: vec![],
            op_spans: vec![(start, end); sys.plan.ops.len()],
        })
    }
}
