//! What the GEMM kernels read, as the host lays it out: the tile bounds operands are padded to, the
//! params block, the job table's entries, the padding of A and B in their buffers, and the store modes.

use bytemuck::{Pod, Zeroable};

use crate::shapes::{Dtype, Shape, TILE};

/// The widest tile any engine uses: B's rows are padded to it ([`Padding`]); a test checks it
/// against every GEMM kernel's reflected BN (src/reflect.rs).
pub const TILE_N_MAX: usize = 256;

/// K depth of the cooperative-matrix kernel's slices (its BK, the deepest): operand rows are padded
/// to it (see [`Padding`]); a test checks it against every GEMM kernel's reflected BK.
pub const K_SLICE: usize = 32;

/// `GemmParams` in shaders/gemm/jobs.wgsl (its layout checked against naga's reflection: src/reflect.rs).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct GemmParams {
    pub m: u32,
    pub n: u32,
    pub k: u32,
    pub lda: u32,
    pub ldb: u32,
    pub ldc: u32,
    pub tiles_n: u32,
    pub job_base: u32,
    pub n_jobs: u32,
    pub total_wg: u32,
    pub dispatch_x: u32,
    /// Fused mode's packed B past one binding: elements from this index on are read from its second
    /// window (`b_hi`, shaders/fused/operands/*_b2.wgsl); other kernels never read it.
    pub b_split: u32,
    /// A persistent grid: this many workgroups compute, each looping over tiles (0: one per tile;
    /// `Config::gemm_grid`, shaders/gemm/jobs.wgsl `tile_stride`). Only with the GRID pipeline: the
    /// others would skip the tiles past it.
    pub grid_wg: u32,
    /// Fused mode's packed output past one binding: elements from this index on are stored in its
    /// second window, and in four windows each window's elements (the watched GEMM,
    /// shaders/fused/put/plain_windows.wgsl, plain_windows4.wgsl); other kernels never read it.
    pub c_split: u32,
}

impl GemmParams {
    /// Params of a dispatch over `shape` (per rank) with operands padded as `padding`, tiles `tile_n` wide,
    /// covering entries `jobs` of the job table in `total_wg` workgroups, folded into a grid at most
    /// `max_per_dim` wide.
    pub fn new(
        shape: Shape,
        padding: &Padding,
        tile_n: usize,
        jobs: std::ops::Range<usize>,
        total_wg: u32,
        max_per_dim: u32,
    ) -> Self {
        GemmParams {
            m: shape.m as u32,
            n: shape.n as u32,
            k: shape.k as u32,
            lda: padding.lda as u32,
            ldb: padding.ldb as u32,
            ldc: shape.n as u32,
            tiles_n: shape.n.div_ceil(tile_n) as u32,
            job_base: jobs.start as u32,
            n_jobs: jobs.len() as u32,
            total_wg,
            dispatch_x: crate::shapes::fold(total_wg, max_per_dim).0,
            ..Default::default()
        }
    }
}

/// How one rank's A (`rows` x K) and B (K x N) sit in their buffers: A rows `lda` apart, B rows
/// `ldb` apart, zero past each edge. K is padded to whole [`K_SLICE`] slices, N to whole tiles of
/// the widest engine ([`TILE_N_MAX`]), and A has one tile of spare rows past its last, so the
/// cooperative-matrix kernel reads whole slices of whole tiles without a bounds test: guarded
/// loads slow it markedly and, with the scalar path of unaligned shapes beside them, keep the
/// driver on its slow build.
/// The SIMT kernel reads it unguarded too: faster and two registers fewer (121 -> 119, 122 -> 120
/// on the grid), so two of its workgroups leave an SM room for fused mode's spares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Padding {
    pub lda: usize,
    pub ldb: usize,
    pub a_rows: usize,
    pub b_rows: usize,
}

impl Padding {
    pub fn new(rows: usize, k: usize, n: usize) -> Self {
        Padding {
            lda: k.next_multiple_of(K_SLICE),
            ldb: n.next_multiple_of(TILE_N_MAX),
            a_rows: rows + TILE,
            b_rows: k.next_multiple_of(K_SLICE),
        }
    }

    /// Elements between two rows of an output chunk stored as `out`: N, made even for 2-byte
    /// elements so that no u32 word holds elements of two rows. Tiles start at even columns and an
    /// invocation stores its columns in pairs from an even one, so each word has one writer
    /// (shaders/put/packed.wgsl).
    pub fn ldc(n: usize, out: Dtype) -> usize {
        if out.bytes() == 2 {
            n.next_multiple_of(2)
        } else {
            n
        }
    }

    /// Bytes of A's and B's buffers for operands of `dtype`.
    pub fn bytes(&self, dtype: Dtype) -> (u64, u64) {
        let e = dtype.bytes() as u64;
        (
            (self.a_rows * self.lda) as u64 * e,
            (self.b_rows * self.ldb) as u64 * e,
        )
    }

    /// A (`rows` x `k`, row-major) in its buffer layout, as `dtype`.
    pub fn pack_a(&self, dtype: Dtype, a: &[f32], k: usize) -> Vec<u8> {
        pack(dtype, a, self.a_layout(k))
    }

    /// B (`k` x `n`, row-major) in its buffer layout, as `dtype`.
    pub fn pack_b(&self, dtype: Dtype, b: &[f32], n: usize) -> Vec<u8> {
        pack(dtype, b, self.b_layout(n))
    }

    /// A's layout for [`pack`]: rows of `k`, in rows of `lda`, `a_rows` of them.
    pub fn a_layout(&self, k: usize) -> (usize, usize, usize) {
        (k, self.lda, self.a_rows)
    }

    /// B's layout for [`pack`]: rows of `n`, in rows of `ldb`, `b_rows` of them.
    pub fn b_layout(&self, n: usize) -> (usize, usize, usize) {
        (n, self.ldb, self.b_rows)
    }
}

/// `v` (rows of `cols`) as `rows` rows of `ld` elements of `dtype`, zero past each row's end and
/// past `v`'s last row, padded to a multiple of 4 bytes (`layout` is `(cols, ld, rows)`).
pub fn pack(dtype: Dtype, v: &[f32], layout: (usize, usize, usize)) -> Vec<u8> {
    let (cols, ld, rows) = layout;
    let mut out = vec![0; (ld * rows * dtype.bytes()).next_multiple_of(4)];
    pack_rows(dtype, v, (cols, ld), 0, &mut out);
    out
}

/// [`pack`]'s rows from row `first` on into `out`, zeroed: as many as it holds whole (a last word's
/// pad excepted). Pieces of one packing, each its own `out`, can be made on several threads.
pub fn pack_rows(
    dtype: Dtype,
    v: &[f32],
    (cols, ld): (usize, usize),
    first: usize,
    out: &mut [u8],
) {
    let (row, elems) = (ld * dtype.bytes(), cols * dtype.bytes());
    for (i, dst) in out.chunks_mut(row).enumerate() {
        let r = first + i;
        match v.get(r * cols..(r + 1) * cols) {
            Some(src) if dst.len() >= elems => dtype.encode_into(src, &mut dst[..elems]),
            _ => break,
        }
    }
}

/// `Job` in shaders/gemm/jobs.wgsl (layout checked as `GemmParams`'s). One chunk's tiles: rows [row0, row1),
/// first linear workgroup `wg_start`, tracker counter index `counter`; output row r is stored at
/// `c_off + (r - c_row_base) * ldc` and reads A row `a_off + (r - a_row_base) * lda`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct Job {
    pub row0: u32,
    pub row1: u32,
    pub wg_start: u32,
    pub counter: u32,
    pub a_off: u32,
    pub b_off: u32,
    pub c_off: u32,
    pub a_row_base: u32,
    pub c_row_base: u32,
    /// Fused mode's landed chunk: 1 + the first word of its landing state in the counters, where
    /// each tile records itself once stored (0: not landed; core/src/lower/fused/table.rs `landing`).
    pub land: u32,
    /// Fused mode's packed B in two windows: the window this job's B lies in, 0 or 1, or 2 across
    /// both (each word read from its own; core/src/lower/fused/packing.rs `Packing::split_b`).
    pub b_window: u32,
    pub _pad: u32,
}

/// How the GEMM writes its output.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StoreMode {
    /// Plain stores.
    Store,
    /// Accumulate into the output (update semantics: f32 atomic add, or the CAS fallback).
    Update,
    /// Plain stores with the tracker epilogue compiled out (the baseline of tracker overhead).
    Untracked,
}
