//! The ranks: R emulated peer GPUs on one wgpu device, each with its GEMM operands and, per chunk, its
//! own output buffer, receive buffer (when the plan lands chunks) and tracker buffer. One buffer per
//! (rank, chunk) because wgpu tracks whole buffers: disjoint buffers are what let a step and a GEMM
//! share a pass without a barrier. Also the inputs and the f64 reference of what each rank must hold.

use std::collections::HashMap;

use crate::error::Result;
use crate::gemm::Padding;
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
}

/// One rank's GEMM operands: A (its rows of the output, see [`a_rows`], by k) and B (k x n), padded
/// in their buffers as `padding` says.
pub struct RankBuffers {
    pub a: wgpu::Buffer,
    pub b: wgpu::Buffer,
    pub padding: Padding,
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
}

impl Ranks {
    /// The buffers of ranks `held` on `gpu`: operands of `dtype`, outputs of `out`.
    pub fn held(
        gpu: &Gpu,
        shape: Shape,
        (dtype, out): (Dtype, Dtype),
        collective: Collective,
        chunking: &Chunking,
        plan: &Plan,
        held: std::ops::Range<usize>,
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
        let mut ranks = Vec::new();
        for p in held.clone() {
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
            });
        }
        let mut locs = HashMap::new();
        let loc_order: Vec<Loc> = plan
            .locs()
            .into_iter()
            .filter(|l| held.contains(&l.rank))
            .collect();
        let ldc = Padding::ldc(shape.n, out);
        for &l in &loc_order {
            let elems = chunking.rows(l.chunk).len() * ldc;
            let name = format!("rank {} chunk {} {:?}", l.rank, l.chunk, l.buf);
            let slots = plan.slots[&key(l)] as u64;
            locs.insert(
                l,
                LocBuffers {
                    data: alloc(name.clone(), (elems * out.bytes()) as u64)?,
                    tracker: alloc(format!("{name} tracker"), slots * 4)?,
                },
            );
        }
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
            allocated,
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
            gpu.queue
                .write_buffer(&r.a, 0, &l.pack_a(self.dtype, &inputs.a[p], k));
            gpu.queue
                .write_buffer(&r.b, 0, &l.pack_b(self.dtype, &inputs.b[p], n));
        }
    }

    /// Fills every output and receive buffer with NaN, so an element no op writes fails the check:
    /// all ones, a NaN as an f32 and as each half of a packed word.
    pub fn poison(&self, gpu: &Gpu) {
        let max = self
            .locs
            .values()
            .map(|l| l.data.size() as usize / 4)
            .max()
            .unwrap_or(0);
        let nan = vec![u32::MAX; max];
        for l in self.locs.values() {
            gpu.queue.write_buffer(
                &l.data,
                0,
                bytemuck::cast_slice(&nan[..l.data.size() as usize / 4]),
            );
        }
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

/// Random operands of every rank, from one seed.
pub struct Inputs {
    pub a: Vec<Vec<f32>>,
    pub b: Vec<Vec<f32>>,
    pub seed: u64,
}

impl Inputs {
    /// Operands as `dtype` holds them (f16: rounded, so the reference sees what the device does).
    pub fn random(
        shape: Shape,
        dtype: Dtype,
        collective: Collective,
        chunking: &Chunking,
        seed: u64,
    ) -> Self {
        let mut rng = Rng::new(seed);
        let mut fill = |len: usize| -> Vec<f32> {
            rng.fill(len).into_iter().map(|v| dtype.round(v)).collect()
        };
        let r = chunking.shards;
        let a = (0..r)
            .map(|p| fill(a_rows(collective, chunking, p).len() * shape.k))
            .collect();
        // A row-split GEMM multiplies every shard by the same B.
        let b = if collective.row_split() {
            vec![fill(shape.k * shape.n); r]
        } else {
            (0..r).map(|_| fill(shape.k * shape.n)).collect()
        };
        Inputs { a, b, seed }
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
        self.row_sum(shape, collective, chunking, row, false)
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
        self.row_sum(shape, collective, chunking, row, true)
    }

    fn row_sum(
        &self,
        shape: Shape,
        collective: Collective,
        chunking: &Chunking,
        row: usize,
        magnitude: bool,
    ) -> Vec<f64> {
        let (n, k) = (shape.n, shape.k);
        let fits = |p: usize, rows: usize| {
            self.a.get(p).is_some_and(|a| a.len() == rows * k)
                && self.b.get(p).is_some_and(|b| b.len() == k * n)
        };
        if row >= chunking.total_rows()
            || !(0..chunking.shards).all(|p| fits(p, a_rows(collective, chunking, p).len()))
        {
            return Vec::new();
        }
        let mut out = vec![0f64; n];
        let mut add = |a_row: &[f32], b: &[f32]| {
            for (kk, &av) in a_row.iter().enumerate() {
                let av = av as f64;
                for (o, &bv) in out.iter_mut().zip(&b[kk * n..(kk + 1) * n]) {
                    let prod = av * bv as f64;
                    *o += if magnitude { prod.abs() } else { prod };
                }
            }
        };
        if collective.row_split() {
            let Some(s) = (0..chunking.shards).find(|&s| chunking.shard_rows(s).contains(&row))
            else {
                return Vec::new();
            };
            let local = row - chunking.shard_rows(s).start;
            add(&self.a[s][local * k..(local + 1) * k], &self.b[s]);
        } else {
            for p in 0..chunking.shards {
                add(&self.a[p][row * k..(row + 1) * k], &self.b[p]);
            }
        }
        out
    }
}

/// Which (rank, chunk) outputs hold a finished result at the end of the collective.
pub fn finished(collective: Collective, chunking: &Chunking) -> Vec<(usize, usize)> {
    let r = chunking.shards;
    match collective {
        Collective::ReduceScatter | Collective::DirectReduceScatter => (0..r)
            .flat_map(|c| chunking.chunks_of(c).map(move |x| (c, x)))
            .collect(),
        Collective::AllGather | Collective::AllReduce => (0..r)
            .flat_map(|p| (0..chunking.count()).map(move |x| (p, x)))
            .collect(),
    }
}
