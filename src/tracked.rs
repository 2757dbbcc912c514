//! A standalone tracked GEMM over one output buffer (tests and benchmarks): its buffers, job table
//! and bind group made once, so that a run only encodes and submits.

use crate::error::{Error, Result};
use crate::gemm::{GemmKernel, GemmParams, Job, Padding, StoreMode};
use crate::gpu::Gpu;
use crate::lower::job_table;
use crate::lower::Group;
use crate::shaders;
use crate::shapes::{tiles, Chunking, Dtype, Shape};
use crate::timestamps::{time_series, Timestamps};

/// A standalone tracked GEMM: A, B, C, the tracker and the job table of one shape and chunk order,
/// all made once so that `run` only encodes and submits.
pub struct TrackedGemm {
    pub dtype: Dtype,
    pub shape: Shape,
    pub padding: Padding,
    pub chunking: Chunking,
    pub a: wgpu::Buffer,
    pub b: wgpu::Buffer,
    pub c: wgpu::Buffer,
    pub counters: wgpu::Buffer,
    /// Host-side thresholds: tiles per chunk.
    pub thresholds: Vec<u32>,
    pub total_wg: u32,
    bind_group: wgpu::BindGroup,
    /// The tracked store on a persistent grid ([`TrackedGemm::on_grid`]): its workgroups and bind
    /// group (params with `grid_wg` set), for [`StoreMode::Store`] only.
    grid: Option<(u32, wgpu::BindGroup)>,
}

impl TrackedGemm {
    /// `chunks` row bands produced in `order` (a permutation of 0..chunks; `None` = ascending).
    pub fn new(
        gpu: &Gpu,
        kernel: &GemmKernel,
        shape: Shape,
        chunks: usize,
        order: Option<Vec<usize>>,
    ) -> Result<Self> {
        Self::build(gpu, kernel, shape, chunks, order, None)
    }

    /// As [`TrackedGemm::new`], its tracked store ([`StoreMode::Store`]) on a persistent grid of
    /// `grid` workgroups looping over the tiles (as `--gemm-grid` runs an op; at most one per tile,
    /// and no fewer than keep a workgroup's loops inside the driver's cap): the grid's cost against
    /// a workgroup per tile, with no steps beside it. The other modes keep a workgroup per tile.
    pub fn on_grid(
        gpu: &Gpu,
        kernel: &GemmKernel,
        shape: Shape,
        chunks: usize,
        grid: u32,
    ) -> Result<Self> {
        if grid == 0 {
            return Err(Error::invalid("GEMM grid", grid, "at least 1 workgroup"));
        }
        Self::build(gpu, kernel, shape, chunks, None, Some(grid))
    }

    fn build(
        gpu: &Gpu,
        kernel: &GemmKernel,
        shape: Shape,
        chunks: usize,
        order: Option<Vec<usize>>,
        grid: Option<u32>,
    ) -> Result<Self> {
        // Its output buffer and readback are f32's (rows N apart).
        if kernel.out != crate::shapes::Dtype::F32 {
            return Err(Error::invalid(
                "GEMM kernel",
                format!("one storing {} outputs", kernel.out.name()),
                "one storing f32 outputs (the standalone tracked GEMM reads f32)",
            ));
        }
        if chunks == 0 || chunks > shape.m {
            return Err(Error::invalid(
                "chunk count",
                chunks,
                format!("between 1 and the {} output rows", shape.m),
            ));
        }
        let chunking = Chunking::new(shape.m, 1, chunks)?;
        let order = order.unwrap_or_else(|| (0..chunks).collect());
        let mut seen = vec![false; chunks];
        for &x in &order {
            if x >= chunks || std::mem::replace(&mut seen[x], true) {
                return Err(Error::invalid(
                    "chunk order",
                    format!("{order:?}"),
                    format!("a permutation of 0..{chunks}"),
                ));
            }
        }
        if order.len() != chunks {
            return Err(Error::invalid(
                "chunk order",
                format!("{order:?}"),
                format!("a permutation of 0..{chunks}"),
            ));
        }
        let bytes = |r: usize, c: usize, e: usize| (r * c * e) as u64;
        let storage = wgpu::BufferUsages::STORAGE
            | wgpu::BufferUsages::COPY_DST
            | wgpu::BufferUsages::COPY_SRC;
        let padding = Padding::new(shape.m, shape.k, shape.n);
        let (a_bytes, b_bytes) = padding.bytes(kernel.dtype);
        let a = gpu.buffer("gemm A", a_bytes, storage)?;
        let b = gpu.buffer("gemm B", b_bytes, storage)?;
        let c = gpu.buffer(
            "gemm C (tracked output)",
            bytes(shape.m, shape.n, 4),
            storage,
        )?;
        let counters = gpu.buffer("gemm tracker", (chunks * 4) as u64, storage)?;
        let tile_n = kernel.engine.tile_n();
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
            gpu.max_workgroups_per_dim,
        );
        let pbuf = gpu.init_buffer(
            "gemm params",
            bytemuck::bytes_of(&params),
            wgpu::BufferUsages::UNIFORM,
        );
        let jbuf = gpu.init_buffer(
            "gemm jobs",
            bytemuck::cast_slice(&jobs),
            wgpu::BufferUsages::STORAGE,
        );
        let bind = |label: &str, pbuf: &wgpu::Buffer| {
            shaders::bind(
                gpu,
                label,
                &kernel.layout,
                Group::Gemm.roles(),
                &[
                    ("dst", c.as_entire_binding()),
                    ("p", pbuf.as_entire_binding()),
                    ("a", a.as_entire_binding()),
                    ("b", b.as_entire_binding()),
                    ("counters", counters.as_entire_binding()),
                    ("jobs", jbuf.as_entire_binding()),
                ],
            )
        };
        let bind_group = bind("gemm bind group", &pbuf);
        let grid = grid.map(|g| {
            let limit = crate::executor::loop_limit(gpu);
            let grid_wg = crate::lower::grid_workgroups(g, total_wg, shape.k, limit).min(total_wg);
            let params = GemmParams {
                grid_wg,
                dispatch_x: gpu.fold(grid_wg).0,
                ..params
            };
            let pbuf = gpu.init_buffer(
                "gemm params (grid)",
                bytemuck::bytes_of(&params),
                wgpu::BufferUsages::UNIFORM,
            );
            (grid_wg, bind("gemm bind group (grid)", &pbuf))
        });
        gpu.check("creating the tracked GEMM")?;
        Ok(TrackedGemm {
            dtype: kernel.dtype,
            shape,
            padding,
            chunking,
            a,
            b,
            c,
            counters,
            thresholds,
            total_wg,
            bind_group,
            grid,
        })
    }

    /// Workgroups of the tracked store's persistent grid, where it has one.
    pub fn grid_wg(&self) -> Option<u32> {
        self.grid.as_ref().map(|g| g.0)
    }

    /// Uploads A and B (as the kernel's dtype: f16 operands are rounded to nearest).
    pub fn upload(&self, gpu: &Gpu, a: &[f32], b: &[f32]) -> Result<()> {
        let s = self.shape;
        if a.len() != s.m * s.k || b.len() != s.k * s.n {
            return Err(Error::invalid(
                "operand length",
                format!("A {} / B {}", a.len(), b.len()),
                format!("A {} / B {}", s.m * s.k, s.k * s.n),
            ));
        }
        let l = self.padding;
        gpu.queue
            .write_buffer(&self.a, 0, &l.pack_a(self.dtype, a, s.k));
        gpu.queue
            .write_buffer(&self.b, 0, &l.pack_b(self.dtype, b, s.n));
        Ok(())
    }

    /// Fills C with `value` (NaN to poison, 0 before updates).
    pub fn fill_c(&self, gpu: &Gpu, value: f32) {
        let v = vec![value; self.shape.m * self.shape.n];
        gpu.queue.write_buffer(&self.c, 0, bytemuck::cast_slice(&v));
    }

    /// Encodes: clear the tracker (when `reset`), then the GEMM (the tracked store on the grid where
    /// there is one), optionally with pass timestamps.
    pub fn encode(
        &self,
        gpu: &Gpu,
        kernel: &GemmKernel,
        enc: &mut wgpu::CommandEncoder,
        mode: StoreMode,
        reset: bool,
        timestamps: Option<wgpu::ComputePassTimestampWrites<'_>>,
    ) {
        if reset {
            enc.clear_buffer(&self.counters, 0, None);
        }
        let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("tracked gemm"),
            timestamp_writes: timestamps,
        });
        match (&self.grid, mode) {
            (Some((grid_wg, bg)), StoreMode::Store) => {
                gpu.dispatch(&mut pass, kernel.grid_pipeline(), bg, *grid_wg)
            }
            _ => kernel.dispatch(gpu, &mut pass, mode, &self.bind_group, self.total_wg),
        }
    }

    /// Runs once and waits (bounded), untimed. Through the one timed series on a timer without
    /// timestamps rather than the executor: a recording names a lowered plan's ranks and pool, and
    /// this GEMM has neither (its own buffers, one output, no plan), and it runs GEMM kernels the
    /// executor's kernel set refuses (coopmat2); [`TrackedGemm::encode`] is what a timed series (the
    /// benches' clock) records.
    pub fn run(&self, gpu: &Gpu, kernel: &GemmKernel, mode: StoreMode, reset: bool) -> Result<()> {
        let s = self.shape;
        time_series(
            gpu,
            &mut Timestamps::host_clock(),
            &format!("tracked gemm {s}"),
            1,
            gpu.timeout_for(s.flops(), 0.0),
            |enc, ts| {
                self.encode(gpu, kernel, enc, mode, reset, ts);
                Ok(())
            },
        )?;
        Ok(())
    }

    pub fn read_c(&self, gpu: &Gpu) -> Result<Vec<f32>> {
        gpu.read_f32("gemm C", &self.c, 0, self.shape.m * self.shape.n)
    }

    pub fn read_counters(&self, gpu: &Gpu) -> Result<Vec<u32>> {
        gpu.read_u32("gemm tracker", &self.counters, 0, self.chunking.count())
    }
}
