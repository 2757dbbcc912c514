//! The ranks: R emulated peer GPUs on one wgpu device, each with its GEMM operands and, per chunk, its
//! own output buffer, receive buffer (when the plan lands chunks) and tracker buffer. One buffer per
//! (rank, chunk) because wgpu tracks whole buffers: disjoint buffers are what let a step and a GEMM
//! share a pass without a barrier. Also the inputs and the f64 reference of what each rank must hold.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::error::Result;
use crate::gemm::{pack_rows, Padding};
use crate::gpu::Gpu;
use crate::plan::{key, Buf, Loc, Plan};
use crate::reference::Rng;
pub use crate::schedule::a_rows;
use crate::schedule::Collective;
use crate::shapes::{Chunking, Dtype, Shape};

/// A rank's buffer for one chunk and its tracker ([counter, done slots...]).
pub struct LocBuffers {
    pub data: wgpu::Buffer,
    pub tracker: wgpu::Buffer,
    /// Views of both over the same memory (src/alias.rs), where the ranks are `watched` and the
    /// device made them: what a send that waits for the GEMM writing them binds.
    pub watch: Option<(wgpu::Buffer, wgpu::Buffer)>,
}

/// One rank's GEMM operands: A (its rows of the output, see [`a_rows`], by k) and B (k x n), padded
/// in their buffers as `padding` says.
pub struct RankBuffers {
    pub a: wgpu::Buffer,
    pub b: wgpu::Buffer,
    pub padding: Padding,
    /// Which operands they are: what another system must need to adopt them ([`Ranks::held`]).
    pub holds: Operands,
}

/// Which operands a rank's buffers hold: the rank, its rows of A, the shape and the element type.
#[derive(Clone, Debug, PartialEq)]
pub struct Operands {
    pub rank: usize,
    pub rows: std::ops::Range<usize>,
    pub shape: Shape,
    pub dtype: Dtype,
}

/// The buffers of the ranks on one device (all of them on one device) for one shape, collective and
/// plan.
pub struct Ranks {
    pub shape: Shape,
    /// Element type of A and B.
    pub dtype: Dtype,
    /// Element type of the outputs and inboxes, rows `ldc` elements apart (`Padding::ldc`).
    pub out: Dtype,
    pub ldc: usize,
    pub chunking: Chunking,
    /// The ranks held here: `ranks[i]` is rank `held.start + i`.
    pub held: std::ops::Range<usize>,
    pub ranks: Vec<RankBuffers>,
    pub locs: HashMap<Loc, LocBuffers>,
    /// Order in which trackers are read back (checks).
    pub loc_order: Vec<Loc>,
    /// Device memory allocated, bytes.
    pub allocated: u64,
    /// Every held rank's operands were adopted from a system of the same point
    /// ([`Ranks::held`]'s `adopt`): they hold that system's inputs, and need no upload.
    pub adopted: bool,
    /// All ones (NaN as an f32 and as each half of a packed word), written once: [`Ranks::poison`]
    /// copies it over the outputs on the GPU instead of writing their bytes from the host each time.
    nan: Option<wgpu::Buffer>,
}

/// Most bytes of the poison source: larger outputs take several copies of it.
const POISON_SOURCE_BYTES: u64 = 8 << 20;

impl Ranks {
    /// The buffers of ranks `held` on `gpu`: operands of `dtype`, outputs of `out`; where `watched`,
    /// each GEMM output and its tracker also through a view of its own ([`LocBuffers::watch`]).
    /// `adopt`: the held ranks' operands of another system of the same inputs, taken where each is
    /// the one its rank needs ([`Operands`]: the same shape, element type and rows of A; another
    /// chunk count, reduce or order leaves them so): the tuner's next layout of a point, which then
    /// costs no allocation and no upload of operands (gigabytes on the largest points).
    #[allow(clippy::too_many_arguments)]
    pub fn held(
        gpu: &Gpu,
        shape: Shape,
        (dtype, out): (Dtype, Dtype),
        collective: Collective,
        chunking: &Chunking,
        plan: &Plan,
        (held, watched): (std::ops::Range<usize>, bool),
        adopt: Vec<RankBuffers>,
    ) -> Result<Self> {
        let usage = wgpu::BufferUsages::STORAGE
            | wgpu::BufferUsages::COPY_DST
            | wgpu::BufferUsages::COPY_SRC;
        let mut allocated = 0u64;
        let mut alloc = |label: String, bytes: u64| -> Result<wgpu::Buffer> {
            let b = gpu.buffer(&label, bytes, usage)?;
            allocated += b.size();
            Ok(b)
        };
        let holds = |p: usize| Operands {
            rank: p,
            rows: a_rows(collective, chunking, p),
            shape,
            dtype,
        };
        let adopted = adopt.len() == held.len()
            && adopt
                .iter()
                .zip(held.clone())
                .all(|(r, p)| r.holds == holds(p));
        // Operands not taken are freed before the new ones are made.
        let (mut ranks, adopted_bytes) = if adopted {
            let bytes = adopt.iter().map(|r| r.a.size() + r.b.size()).sum::<u64>();
            (adopt, bytes)
        } else {
            drop(adopt);
            (Vec::new(), 0)
        };
        for p in held.clone().filter(|_| !adopted) {
            let rows = a_rows(collective, chunking, p);
            let padding = Padding::new(rows.len(), shape.k, shape.n);
            let (a_bytes, b_bytes) = padding.bytes(dtype);
            ranks.push(RankBuffers {
                a: alloc(
                    format!("rank {p} A ({} x {} {})", rows.len(), shape.k, dtype.name()),
                    a_bytes,
                )?,
                b: alloc(
                    format!("rank {p} B ({} x {} {})", shape.k, shape.n, dtype.name()),
                    b_bytes,
                )?,
                padding,
                holds: holds(p),
            });
        }
        let mut locs = HashMap::new();
        let loc_order: Vec<Loc> = plan
            .locs()
            .into_iter()
            .filter(|l| held.contains(&l.rank))
            .collect();
        let ldc = Padding::ldc(shape.n, out);
        let mut viewed = 0u64;
        for &l in &loc_order {
            let elems = chunking.rows(l.chunk).len() * ldc;
            let name = format!("rank {} chunk {} {:?}", l.rank, l.chunk, l.buf);
            let slots = plan.slots[&key(l)] as u64;
            let bytes = ((elems * out.bytes()) as u64, slots * 4);
            let views = |label: &str, bytes: u64| {
                // SAFETY: both views are cleared or written before they are read (trackers reset
                // before every run, outputs written by their GEMM), and what orders a watching
                // send's reads after the GEMM's writes is shaders/step.wgsl's `WATCH` protocol.
                (watched && l.buf == Buf::Out)
                    .then(|| unsafe { crate::alias::views(&gpu.device, label, bytes, usage, 2) })
                    .flatten()
            };
            let tracker_name = format!("{name} tracker");
            let bufs = match (views(&name, bytes.0), views(&tracker_name, bytes.1)) {
                (Some(mut d), Some(mut t)) => {
                    viewed += d[0].size() + t[0].size();
                    let (dw, tw) = (d.pop().expect("two views"), t.pop().expect("two views"));
                    LocBuffers {
                        data: d.pop().expect("two views"),
                        tracker: t.pop().expect("two views"),
                        watch: Some((dw, tw)),
                    }
                }
                _ => LocBuffers {
                    data: alloc(name.clone(), bytes.0)?,
                    tracker: alloc(tracker_name, bytes.1)?,
                    watch: None,
                },
            };
            locs.insert(l, bufs);
        }
        let biggest = locs.values().map(|l| l.data.size() / 4 * 4).max();
        let nan = match biggest.filter(|&b| b > 0) {
            Some(b) => {
                let bytes = b.min(POISON_SOURCE_BYTES);
                let src = alloc("poison source (NaN)".into(), bytes)?;
                gpu.queue.write_buffer(&src, 0, &vec![0xFF; bytes as usize]);
                Some(src)
            }
            None => None,
        };
        gpu.check("allocating the ranks' buffers")?;
        Ok(Ranks {
            shape,
            dtype,
            out,
            ldc,
            chunking: chunking.clone(),
            held,
            ranks,
            locs,
            loc_order,
            allocated: allocated + viewed + adopted_bytes,
            adopted,
            nan,
        })
    }

    /// Rank p's operands (a rank held here).
    pub fn rank(&self, p: usize) -> &RankBuffers {
        &self.ranks[p - self.held.start]
    }

    /// Writes the held ranks' operands from `inputs`.
    pub fn upload(&self, gpu: &Gpu, inputs: &Inputs) {
        let (k, n) = (self.shape.k, self.shape.n);
        for (p, r) in self.held.clone().zip(&self.ranks) {
            let l = r.padding;
            let a = pack_on_cores(self.dtype, &inputs.a[p], l.a_layout(k));
            gpu.queue.write_buffer(&r.a, 0, &a);
            let b = pack_on_cores(self.dtype, &inputs.b[p], l.b_layout(n));
            gpu.queue.write_buffer(&r.b, 0, &b);
        }
    }

    /// Fills every output and receive buffer with NaN, so an element no op writes fails the check:
    /// all ones, a NaN as an f32 and as each half of a packed word.
    pub fn poison(&self, gpu: &Gpu) {
        let Some(nan) = &self.nan else { return };
        let mut enc = gpu
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("poison outputs"),
            });
        for l in self.locs.values() {
            let size = l.data.size() / 4 * 4;
            let mut at = 0;
            while at < size {
                let n = (size - at).min(nan.size());
                enc.copy_buffer_to_buffer(nan, 0, &l.data, at, n);
                at += n;
            }
        }
        gpu.queue.submit([enc.finish()]);
    }

    /// Every tracker's counter, read back now.
    pub fn read_counters(&self, gpu: &Gpu) -> Result<HashMap<Loc, u32>> {
        let spans: Vec<_> = self
            .loc_order
            .iter()
            .map(|l| (&self.locs[l].tracker, 0, 4))
            .collect();
        let enc = gpu.device.create_command_encoder(&Default::default());
        let bytes = gpu.read_spans("trackers", enc, &spans)?;
        let vals: Vec<u32> = bytemuck::pod_collect_to_vec(&bytes);
        Ok(self.loc_order.iter().copied().zip(vals).collect())
    }

    /// Rows `rows` (relative to the chunk) of rank p's output chunk x.
    pub fn read_rows(
        &self,
        gpu: &Gpu,
        p: usize,
        x: usize,
        rows: std::ops::Range<usize>,
    ) -> Result<Vec<f32>> {
        let mut got = self.read_rows_of(gpu, &[(p, x, rows)])?;
        Ok(got.pop().expect("one span asked, one read"))
    }

    /// Rows of several (rank p, chunk x, rows relative to the chunk) outputs held here, in the order
    /// asked: copied into one staging buffer per submission, so a sample of rows costs one round
    /// trip, not one per row (more only where the rows exceed the staging pool's budget).
    pub fn read_rows_of(
        &self,
        gpu: &Gpu,
        want: &[(usize, usize, std::ops::Range<usize>)],
    ) -> Result<Vec<Vec<f32>>> {
        // Bytes of a stored row: `ldc` elements, even for 2-byte ones, so every span is whole words.
        let row = (self.ldc * self.out.bytes()) as u64;
        // (buffer, byte offset, bytes) of each ask, checked before anything is read.
        let mut spans = Vec::with_capacity(want.len());
        for (p, x, rows) in want {
            let buffer = self.out_buffer(*p, *x, rows)?;
            spans.push((buffer, rows.start as u64 * row, rows.len() as u64 * row));
        }
        // Batches that fit the pool's budget, so that their staging buffer is kept for the next
        // check.
        let mut batches: Vec<std::ops::Range<usize>> = Vec::new();
        let mut bytes = 0;
        for (i, s) in spans.iter().enumerate() {
            match batches.last_mut() {
                Some(b) if bytes + s.2 <= crate::readback::STAGING_BUDGET => b.end = i + 1,
                _ => {
                    batches.push(i..i + 1);
                    bytes = 0;
                }
            }
            bytes += s.2;
        }
        let mut out = Vec::with_capacity(want.len());
        for b in batches {
            let what = match &want[b.clone()] {
                [(p, x, _)] => format!("rank {p} chunk {x}"),
                many => format!("{} output row spans", many.len()),
            };
            // A span of no rows has nothing to copy.
            let copies: Vec<_> = spans[b.clone()]
                .iter()
                .filter(|s| s.2 > 0)
                .copied()
                .collect();
            let got = if copies.is_empty() {
                Vec::new()
            } else {
                let enc = gpu.device.create_command_encoder(&Default::default());
                gpu.read_spans(&what, enc, &copies)?
            };
            let all = self.out.decode(&got);
            let (n, ldc) = (self.shape.n, self.ldc);
            let mut vals = &all[..];
            for s in &spans[b] {
                let (rows, rest) = vals.split_at((s.2 / row) as usize * ldc);
                // The pad columns of each row dropped.
                out.push(rows.chunks(ldc).flat_map(|r| &r[..n]).copied().collect());
                vals = rest;
            }
        }
        Ok(out)
    }

    /// The output buffer of rank p's chunk x, checked to hold `rows` (relative to the chunk).
    fn out_buffer(
        &self,
        p: usize,
        x: usize,
        rows: &std::ops::Range<usize>,
    ) -> Result<&wgpu::Buffer> {
        let loc = Loc {
            rank: p,
            chunk: x,
            buf: Buf::Out,
        };
        let l = self.locs.get(&loc).ok_or_else(|| {
            crate::Error::invalid(
                "rank/chunk",
                format!("rank {p} chunk {x}"),
                format!("an output the plan writes on ranks {:?}", self.held),
            )
        })?;
        let len = self.chunking.rows(x).len();
        if rows.start > rows.end || rows.end > len {
            return Err(crate::Error::invalid(
                "rows",
                format!("{rows:?}"),
                format!("within the chunk's {len} rows"),
            ));
        }
        Ok(&l.data)
    }

    /// Bytes of device memory per role, for reports.
    pub fn output_bytes(&self) -> u64 {
        self.locs.values().map(|l| l.data.size()).sum()
    }
}

/// Random operands of every rank, from one seed, and the reference rows computed from them so far.
pub struct Inputs {
    pub a: Vec<Vec<f32>>,
    pub b: Vec<Vec<f32>>,
    pub seed: u64,
    /// Rows of the reference already computed, for every check of these inputs to share: a check
    /// per mode and per configuration tuned would otherwise redo the same f64 sums.
    known: Mutex<HashMap<RowKey, Arc<ReferenceRow>>>,
}

/// One output row's reference: its exact sum and the magnitude of what it sums
/// ([`Inputs::expected_row`], [`Inputs::magnitude_row`]).
pub struct ReferenceRow {
    pub want: Vec<f64>,
    pub scale: Vec<f64>,
}

/// A reference row's key: the row and what its sum depends on besides the inputs.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct RowKey {
    row: usize,
    mnk: (usize, usize, usize),
    collective: Collective,
    shards: usize,
}

/// [`crate::gemm::pack`] on the host's cores, a block of rows each: the largest points upload
/// gigabytes of operands, which one core pads and encodes in seconds.
fn pack_on_cores(dtype: Dtype, v: &[f32], layout: (usize, usize, usize)) -> Vec<u8> {
    let (cols, ld, rows) = layout;
    let row = ld * dtype.bytes();
    let mut out = vec![0; (row * rows).next_multiple_of(4)];
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let per = rows.div_ceil(cores).max(1) * row;
    let pieces: Vec<(usize, &mut [u8])> = out
        .chunks_mut(per)
        .enumerate()
        .map(|(i, piece)| (i * per / row, piece))
        .collect();
    on_cores(pieces, |(first, piece)| {
        pack_rows(dtype, v, (cols, ld), first, piece)
    });
    out
}

/// Runs `f` on each item on the host's cores (in order on one where threads are not available: the
/// browser), results in the items' order.
fn on_cores<T: Send, R: Send>(items: Vec<T>, f: impl Fn(T) -> R + Sync) -> Vec<R> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    if cores < 2 || items.len() < 2 || cfg!(target_arch = "wasm32") {
        return items.into_iter().map(f).collect();
    }
    let per = items.len().div_ceil(cores);
    let mut groups: Vec<Vec<T>> = Vec::new();
    for (i, item) in items.into_iter().enumerate() {
        if i % per == 0 {
            groups.push(Vec::with_capacity(per));
        }
        groups.last_mut().expect("pushed above").push(item);
    }
    std::thread::scope(|s| {
        let f = &f;
        let handles: Vec<_> = groups
            .into_iter()
            .map(|g| s.spawn(move || g.into_iter().map(f).collect::<Vec<R>>()))
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("a host thread panicked"))
            .collect()
    })
}

/// Values each host core fills at once (a piece of one operand).
const FILL_PIECE: usize = 1 << 20;

impl Inputs {
    /// Operands `a` and `b` given as they are (tests that choose their values).
    pub fn new(a: Vec<Vec<f32>>, b: Vec<Vec<f32>>, seed: u64) -> Self {
        Inputs {
            a,
            b,
            seed,
            known: Mutex::new(HashMap::new()),
        }
    }

    /// Operands as `dtype` holds them (f16: rounded, so the reference sees what the device does):
    /// one generator's values in order (each rank's A, then each B), filled on the host's cores by
    /// pieces, each piece's generator moved to its place.
    pub fn random(
        shape: Shape,
        dtype: Dtype,
        collective: Collective,
        chunking: &Chunking,
        seed: u64,
    ) -> Self {
        let r = chunking.shards;
        let a_lens: Vec<usize> = (0..r)
            .map(|p| a_rows(collective, chunking, p).len() * shape.k)
            .collect();
        // A row-split GEMM multiplies every shard by the same B.
        let b_count = if collective.row_split() { 1 } else { r };
        let lens: Vec<usize> = a_lens
            .iter()
            .copied()
            .chain(std::iter::repeat_n(shape.k * shape.n, b_count))
            .collect();
        let mut all: Vec<Vec<f32>> = lens.iter().map(|&n| vec![0f32; n]).collect();
        // Each piece with its place in the generator's sequence.
        let mut pieces: Vec<(u64, &mut [f32])> = Vec::new();
        let mut at = 0u64;
        for v in &mut all {
            let len = v.len() as u64;
            for (j, piece) in v.chunks_mut(FILL_PIECE).enumerate() {
                pieces.push((at + (j * FILL_PIECE) as u64, piece));
            }
            at += len;
        }
        on_cores(pieces, |(from, piece)| {
            let mut rng = Rng::new(seed);
            rng.skip(from);
            for x in piece {
                *x = dtype.round(rng.next_f32());
            }
        });
        let b_all = all.split_off(r);
        let b = if collective.row_split() {
            vec![b_all[0].clone(); r]
        } else {
            b_all
        };
        Inputs::new(all, b, seed)
    }

    /// The reference of each of `rows` ([`ReferenceRow`]), those not yet known computed on the host's
    /// cores.
    pub fn reference_rows(
        &self,
        shape: Shape,
        collective: Collective,
        chunking: &Chunking,
        rows: &[usize],
    ) -> Vec<Arc<ReferenceRow>> {
        let key = |row| RowKey {
            row,
            mnk: (shape.m, shape.n, shape.k),
            collective,
            shards: chunking.shards,
        };
        let mut missing: Vec<usize> = {
            let known = self.known.lock().unwrap_or_else(|e| e.into_inner());
            rows.iter()
                .copied()
                .filter(|&r| !known.contains_key(&key(r)))
                .collect()
        };
        missing.sort_unstable();
        missing.dedup();
        let made = self.row_sums(shape, collective, chunking, &missing);
        let mut known = self.known.lock().unwrap_or_else(|e| e.into_inner());
        for (row, r) in missing.into_iter().zip(made) {
            known.insert(key(row), Arc::new(r));
        }
        rows.iter().map(|&r| known[&key(r)].clone()).collect()
    }

    /// The f64 value output row `row` must end with on any rank that holds it finished (empty for a
    /// row outside the output or inputs of another shape).
    pub fn expected_row(
        &self,
        shape: Shape,
        collective: Collective,
        chunking: &Chunking,
        row: usize,
    ) -> Vec<f64> {
        self.reference_rows(shape, collective, chunking, &[row])[0]
            .want
            .clone()
    }

    /// [`Inputs::expected_row`] with every product's magnitude (sum of |a||b|): the scale f32
    /// rounding errors follow, however much the row's sums cancel.
    pub fn magnitude_row(
        &self,
        shape: Shape,
        collective: Collective,
        chunking: &Chunking,
        row: usize,
    ) -> Vec<f64> {
        self.reference_rows(shape, collective, chunking, &[row])[0]
            .scale
            .clone()
    }

    /// Each of `rows`' sums and magnitudes ([`Inputs::row_sums_by`]), in blocks of columns whose
    /// sums stay within a core's own cache (each block's pass adds into all of them for every
    /// element of B), at least as many blocks as cores.
    fn row_sums(
        &self,
        shape: Shape,
        collective: Collective,
        chunking: &Chunking,
        rows: &[usize],
    ) -> Vec<ReferenceRow> {
        // 256 KiB: a core's own (L2) cache on common hosts; at least 16 columns, so that the pass
        // along a block's row part stays a loop long enough to vectorize.
        let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
        let in_cache = 256 * 1024 / (16 * rows.len().max(1));
        let width = in_cache.min(shape.n.div_ceil(cores)).max(16);
        self.row_sums_by(shape, collective, chunking, rows, width)
    }

    /// Each of `rows`' sums and magnitudes, on the host's cores a block of `width` columns each:
    /// every row of a block reads B's rows once between them (a row at a time, B read per row,
    /// streams gigabytes per row on the largest points), each sum in the order one row alone adds
    /// it (rank by rank, along k). Rows outside the output, or every row where the inputs are of
    /// another shape, are empty.
    fn row_sums_by(
        &self,
        shape: Shape,
        collective: Collective,
        chunking: &Chunking,
        rows: &[usize],
        width: usize,
    ) -> Vec<ReferenceRow> {
        let (n, k) = (shape.n, shape.k);
        let fits = |p: usize, rows: usize| {
            self.a.get(p).is_some_and(|a| a.len() == rows * k)
                && self.b.get(p).is_some_and(|b| b.len() == k * n)
        };
        let shaped = (0..chunking.shards).all(|p| fits(p, a_rows(collective, chunking, p).len()));
        // Per rank, the rows its B sums into (their index in `rows`) and each one's A row.
        let mut terms: Vec<Vec<(usize, &[f32])>> = vec![Vec::new(); chunking.shards];
        let mut inside = vec![false; rows.len()];
        for (i, &row) in rows.iter().enumerate() {
            if !shaped || row >= chunking.total_rows() {
                continue;
            }
            if collective.row_split() {
                let Some(s) = (0..chunking.shards).find(|&s| chunking.shard_rows(s).contains(&row))
                else {
                    continue;
                };
                let local = row - chunking.shard_rows(s).start;
                terms[s].push((i, &self.a[s][local * k..(local + 1) * k]));
            } else {
                for (p, t) in terms.iter_mut().enumerate() {
                    t.push((i, &self.a[p][row * k..(row + 1) * k]));
                }
            }
            inside[i] = true;
        }
        let empty = || ReferenceRow {
            want: Vec::new(),
            scale: Vec::new(),
        };
        if !inside.contains(&true) {
            return rows.iter().map(|_| empty()).collect();
        }
        let width = width.clamp(1, n.max(1));
        let blocks: Vec<std::ops::Range<usize>> = (0..n)
            .step_by(width)
            .map(|j| j..(j + width).min(n))
            .collect();
        let sums = on_cores(blocks.clone(), |cols| {
            let w = cols.len();
            let (mut want, mut scale) = (vec![0f64; rows.len() * w], vec![0f64; rows.len() * w]);
            for (t, b) in terms.iter().zip(&self.b).filter(|(t, _)| !t.is_empty()) {
                for kk in 0..k {
                    let b_row = &b[kk * n + cols.start..kk * n + cols.end];
                    for &(i, a) in t {
                        let av = a[kk] as f64;
                        let (o, m) = (
                            &mut want[i * w..(i + 1) * w],
                            &mut scale[i * w..(i + 1) * w],
                        );
                        for ((o, m), &bv) in o.iter_mut().zip(m.iter_mut()).zip(b_row) {
                            let prod = av * bv as f64;
                            *o += prod;
                            *m += prod.abs();
                        }
                    }
                }
            }
            (want, scale)
        });
        (0..rows.len())
            .map(|i| {
                let mut r = empty();
                if inside[i] {
                    for (cols, (want, scale)) in blocks.iter().zip(&sums) {
                        let w = cols.len();
                        r.want.extend_from_slice(&want[i * w..(i + 1) * w]);
                        r.scale.extend_from_slice(&scale[i * w..(i + 1) * w]);
                    }
                }
                r
            })
            .collect()
    }
}

/// Which (rank, chunk) outputs hold a finished result at the end of the collective.
pub fn finished(collective: Collective, chunking: &Chunking) -> Vec<(usize, usize)> {
    let r = chunking.shards;
    match collective {
        Collective::ReduceScatter | Collective::DirectReduceScatter => (0..r)
            .flat_map(|c| chunking.chunks_of(c).map(move |x| (c, x)))
            .collect(),
        Collective::AllGather | Collective::AllReduce | Collective::DirectAllReduce => (0..r)
            .flat_map(|p| (0..chunking.count()).map(move |x| (p, x)))
            .collect(),
    }
}

#[cfg(test)]
mod tests;
