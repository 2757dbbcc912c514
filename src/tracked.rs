//! A standalone tracked GEMM over one output buffer (tests and benchmarks): lowered to a recording
//! (core's `lower_tracked_gemm`) that the executor binds once and encodes, as every GPU dispatch is.

use std::ops::Range;

use crate::error::{Error, Result};
use crate::executor::{Executor, KernelSet, Part};
use crate::gemm::{GemmKernel, StoreMode};
use crate::gpu::Gpu;
use crate::lower::{lower_tracked_gemm, TrackedGemmSpec, TrackedLowering};
use crate::reference::Rng;
use crate::shapes::{Dtype, Shape};
use crate::timestamps::{time_series, Timestamps};

/// A standalone tracked GEMM: A, B, C, the tracker and the job table of one shape and chunk order,
/// bound once by its executor so that a run only encodes and submits.
pub struct TrackedGemm<'a> {
    pub dtype: Dtype,
    pub shape: Shape,
    /// Its buffers, thresholds, workgroups and recordings.
    pub lowering: TrackedLowering,
    gpu: &'a Gpu,
    exec: Executor<'a>,
}

impl<'a> TrackedGemm<'a> {
    /// `chunks` row bands produced in `order` (a permutation of 0..chunks; `None` = ascending), run
    /// through `kernel`'s pipelines.
    pub fn new(
        gpu: &'a Gpu,
        kernel: &'a GemmKernel,
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
        gpu: &'a Gpu,
        kernel: &'a GemmKernel,
        shape: Shape,
        chunks: usize,
        grid: u32,
    ) -> Result<Self> {
        Self::build(gpu, kernel, shape, chunks, None, Some(grid))
    }

    fn build(
        gpu: &'a Gpu,
        kernel: &'a GemmKernel,
        shape: Shape,
        chunks: usize,
        order: Option<Vec<usize>>,
        grid: Option<u32>,
    ) -> Result<Self> {
        // Its output buffer and readback are f32's (rows N apart).
        if kernel.out != Dtype::F32 {
            return Err(Error::invalid(
                "GEMM kernel",
                format!("one storing {} outputs", kernel.out.name()),
                "one storing f32 outputs (the standalone tracked GEMM reads f32)",
            ));
        }
        let spec = TrackedGemmSpec {
            shape,
            dtype: kernel.dtype,
            chunks,
            order,
            grid,
        };
        let lowering = lower_tracked_gemm(&spec, crate::executor::target(gpu, kernel.engine, 0))?;
        let exec = Executor::pooled(
            gpu,
            KernelSet::Gemm(kernel),
            &lowering.lowered,
            Default::default(),
        )?;
        gpu.check("creating the tracked GEMM")?;
        Ok(TrackedGemm {
            dtype: kernel.dtype,
            shape,
            lowering,
            gpu,
            exec,
        })
    }

    /// Workgroups of the tracked store's persistent grid, where it has one.
    pub fn grid_wg(&self) -> Option<u32> {
        self.lowering.grid_wg
    }

    /// Uploads A and B (as the kernel's dtype: f16 operands are rounded to nearest).
    pub fn upload(&self, a: &[f32], b: &[f32]) -> Result<()> {
        let s = self.shape;
        if a.len() != s.m * s.k || b.len() != s.k * s.n {
            return Err(Error::invalid(
                "operand length",
                format!("A {} / B {}", a.len(), b.len()),
                format!("A {} / B {}", s.m * s.k, s.k * s.n),
            ));
        }
        let (l, d) = (&self.lowering, self.dtype);
        self.exec.write_pool(l.a, 0, &l.padding.pack_a(d, a, s.k))?;
        self.exec.write_pool(l.b, 0, &l.padding.pack_b(d, b, s.n))
    }

    /// Fills C with `value` (NaN to poison, 0 before updates).
    pub fn fill_c(&self, value: f32) -> Result<()> {
        let v = vec![value; self.shape.m * self.shape.n];
        self.exec
            .write_pool(self.lowering.c, 0, bytemuck::cast_slice(&v))
    }

    /// Encodes one run through `mode`'s pipeline (the tracker cleared first when `reset`; the
    /// tracked store on the grid where there is one), its pass timestamped by `timestamps`: what a
    /// timed series (the benches' clock) records.
    pub fn encode(
        &mut self,
        enc: &mut wgpu::CommandEncoder,
        mode: StoreMode,
        reset: bool,
        timestamps: Option<wgpu::ComputePassTimestampWrites<'_>>,
    ) -> Result<()> {
        let l = &self.lowering;
        let commands = l.commands(mode, reset);
        self.exec
            .record(enc, &l.lowered, "tracked gemm", commands, timestamps)
    }

    /// Its tracked store's pass (the tracker not cleared) as one executor's part of a pass shared
    /// with other work on the device (`executor::record_one_pass`).
    pub fn part(&mut self) -> Part<'_, 'a> {
        let l = &self.lowering;
        Part {
            exec: &mut self.exec,
            lowered: &l.lowered,
            commands: l.commands(StoreMode::Store, false),
        }
    }

    /// Runs once and waits (bounded), untimed: the one timed series on a timer without timestamps.
    pub fn run(&mut self, mode: StoreMode, reset: bool) -> Result<()> {
        let (gpu, s) = (self.gpu, self.shape);
        time_series(
            gpu,
            &mut Timestamps::host_clock(),
            &format!("tracked gemm {s}"),
            1,
            gpu.timeout_for(s.flops(), 0.0),
            |enc, ts| self.encode(enc, mode, reset, ts),
        )?;
        Ok(())
    }

    pub fn read_c(&self) -> Result<Vec<f32>> {
        self.read_rows(0..self.shape.m)
    }

    /// Rows `rows` of C (bounded wait).
    pub fn read_rows(&self, rows: Range<usize>) -> Result<Vec<f32>> {
        let row = (self.shape.n * 4) as u64;
        let bytes = self.exec.read_pool(
            "gemm C",
            self.lowering.c,
            rows.start as u64 * row,
            rows.len() as u64 * row,
        )?;
        Ok(bytemuck::pod_collect_to_vec(&bytes))
    }

    pub fn read_counters(&self) -> Result<Vec<u32>> {
        let l = &self.lowering;
        let bytes =
            self.exec
                .read_pool("gemm tracker", l.tracker, 0, l.thresholds.len() as u64 * 4)?;
        Ok(bytemuck::pod_collect_to_vec(&bytes))
    }

    /// A GEMM timed beside other work (`what` names it in errors), with its first and last rows'
    /// exact values: operands of small integers over 8 (exact in f16 and bf16, and every partial
    /// sum exact in f32 for K up to 2^18), so that [`TrackedGemm::check_exact`] compares exactly.
    pub fn exact(
        gpu: &'a Gpu,
        kernel: &'a GemmKernel,
        shape: Shape,
        what: &'static str,
    ) -> Result<(Self, Vec<ExactRow>)> {
        if shape.k > 1 << 18 {
            return Err(Error::invalid(
                what,
                format!("K = {}", shape.k),
                "at most 262144 (its exact check)",
            ));
        }
        let g = TrackedGemm::new(gpu, kernel, shape, 1, None)?;
        let mut rng = Rng::new(0xbe51de);
        let mut v =
            |n: usize| -> Vec<f32> { (0..n).map(|_| (rng.below(16) as f32 - 8.0) / 8.0).collect() };
        let (a, b) = (v(shape.m * shape.k), v(shape.k * shape.n));
        g.upload(&a, &b)?;
        let (k, n) = (shape.k, shape.n);
        let expected = [0, shape.m - 1]
            .into_iter()
            .map(|row| {
                let exact = (0..n)
                    .map(|j| {
                        (0..k)
                            .map(|kk| a[row * k + kk] as f64 * b[kk * n + j] as f64)
                            .sum()
                    })
                    .collect();
                (row, exact)
            })
            .collect();
        Ok((g, expected))
    }

    /// Its rows against the exact values [`TrackedGemm::exact`] gave (`during` names the run).
    pub fn check_exact(&self, expected: &[ExactRow], during: &str) -> Result<()> {
        for (row, want) in expected {
            let got = self.read_rows(*row..row + 1)?;
            if let Some((j, (&v, &w))) = got
                .iter()
                .zip(want)
                .enumerate()
                .find(|(_, (&v, &w))| v as f64 != w)
            {
                return Err(Error::Gpu {
                    during: during.into(),
                    message: format!("C[{row}][{j}] = {v}, the exact product {w}"),
                });
            }
        }
        Ok(())
    }
}

/// A row of a GEMM's output and its exact values ([`TrackedGemm::exact`]).
pub type ExactRow = (usize, Vec<f64>);
