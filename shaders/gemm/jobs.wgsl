// What every GEMM kernel (gemm.wgsl, gemm_coop.wgsl) shares: params, the job table, tile lookup, the
// entry point and guarded output rows. Composed before every GEMM kernel that
// src/compositions.rs declares (at run time by src/shaders.rs, at build time by build.rs).
//
// Tiles are grouped into jobs: a job is one chunk (a band of output rows [row0, row1)) and its tiles
// never straddle the band, so every tile belongs to exactly one chunk. Jobs are issued in the order of
// the job table, so the table's order is the stagger: the first job's tiles get the lowest workgroup ids.
//
// Bounds: every output index is guarded by the row/col tests below, and every operand read stays inside
// the padded operand layout (src/gemm.rs, `Padding`: the kernels read whole slices of whole tiles, which
// the padding holds), which is why the host may create these kernels without naga's runtime bounds
// checks (tests/gemm.rs covers every edge case).

// Host twin: `GemmParams` in src/gemm.rs (layouts compared through naga, src/reflect.rs).
struct GemmParams {
    m: u32,
    n: u32,
    k: u32,
    lda: u32,
    ldb: u32,
    ldc: u32,
    tiles_n: u32,
    job_base: u32,
    n_jobs: u32,
    total_wg: u32,
    dispatch_x: u32,
    // First element of B's second window (fused mode's packed B, shaders/fused/operands/*_b2.wgsl).
    b_split: u32,
    // A persistent grid (core/src/lower, `--gemm-grid`): this many workgroups compute, each taking tiles
    // w, w + grid_wg, ... so the GEMM stays resident on that many SMs and leaves the others to the
    // steps of its pass; 0: one workgroup per tile.
    grid_wg: u32,
    // First element of the packed output's second window, and in four windows each window's
    // elements (fused mode's watched GEMM, shaders/fused/put/plain_windows.wgsl,
    // plain_windows4.wgsl); other kernels never read it.
    c_split: u32,
}

// Host twin: `Job` in src/gemm.rs (layouts compared through naga).
// Offsets are per job so that one dispatch can cover several ranks' packed buffers (fused mode):
// output row r of the job is stored at c_off + (r - c_row_base) * ldc, its A row at
// a_off + (r - a_row_base) * lda.
struct Job {
    row0: u32,
    row1: u32,
    wg_start: u32,
    counter: u32,
    a_off: u32,
    b_off: u32,
    c_off: u32,
    a_row_base: u32,
    c_row_base: u32,
    // Fused mode's landed chunk (shaders/fused/epilogue.wgsl `land`): 1 + the first word of its
    // landing state in `counters`, where each tile records itself once stored (`tile_landed`);
    // 0: the chunk is not landed (every other job).
    land: u32,
    // Fused mode's packed B in two windows (shaders/fused/operands/f16_b2.wgsl): the window this job's
    // B lies in, 0 or 1, or 2 across both.
    b_window: u32,
    _pad2: u32,
}

@group(0) @binding(1) var<uniform> p: GemmParams;
@group(0) @binding(4) var<storage, read_write> counters: array<atomic<u32>>;
@group(0) @binding(5) var<storage, read> jobs: array<Job>;

// The tile's rows and columns, BM and BN, are the kernel's constants (128 x 128 SIMT, 128 x 256
// cooperative): build.rs reflects them, and the host counts tiles with them (`Engine::tile_n`).

var<workgroup> wg_job: u32;
// The linear workgroup of the tile in hand (invocation 0's, for `tile_landed`).
var<workgroup> wg_w: u32;

// Output elements (row, col..col+3) through `put`, the ones inside the matrix only.
fn put_row4(row: u32, col: u32, v: vec4<f32>, job: Job) {
    if (row >= job.row1) {
        return;
    }
    let base = job.c_off + (row - job.c_row_base) * p.ldc;
    if (col + 3u < p.n) {
        put(base + col, v.x);
        put(base + col + 1u, v.y);
        put(base + col + 2u, v.z);
        put(base + col + 3u, v.w);
    } else {
        if (col < p.n) { put(base + col, v.x); }
        if (col + 1u < p.n) { put(base + col + 1u, v.y); }
        if (col + 2u < p.n) { put(base + col + 2u, v.z); }
    }
}

// The same four as one 16-byte `put4` where they are whole and aligned (every row when N is a
// multiple of 4). The cooperative-matrix kernel's epilogue is a fifth of a 4096³ GEMM with scalar
// stores; the SIMT kernel compiles slower with this branch in it.
fn put_row4_vec(row: u32, col: u32, v: vec4<f32>, job: Job) {
    let i = job.c_off + (row - job.c_row_base) * p.ldc + col;
    if (row < job.row1 && col + 3u < p.n && (i & 3u) == 0u) {
        put4(i >> 2u, v);
    } else {
        put_row4(row, col, v, job);
    }
}

// One output element through `put`, if it is inside the matrix.
fn put_one(row: u32, col: u32, v: f32, job: Job) {
    if (row < job.row1 && col < p.n) {
        put(job.c_off + (row - job.c_row_base) * p.ldc + col, v);
    }
}

// After `tile_done` (whose barrier releases the tile's stores): a tile of a landed chunk marks its
// slot of the landing state stored (slots in issue order, so the spares that land the chunk take
// the tiles about as they complete; they know the kernel's tile order, core/src/lower/fused.rs). Only
// invocation 0, from what it kept in workgroup memory at `tile_of`, so that nothing stays live
// across the K loop: a register more takes the room of the SIMT kernel's spares beside it.
fn tile_landed(t: u32) {
    if (t == 0u) {
        let job = jobs[wg_job];
        if (job.land != 0u) {
            atomicStore(&counters[job.land + 1u + (wg_w - job.wg_start)], 1u);
        }
    }
}

// Pipeline-overridable: true builds the persistent grid's GEMM (`--gemm-grid`), whose workgroups loop
// over tiles; false, a workgroup per tile (no loop in the build: see `main` below).
override GRID: bool = false;

// Workgroups that compute tiles: one per tile, or a persistent grid's, each taking tiles w, w + stride,
// ... below total_wg. Workgroups past them are spares (fused mode's transfer workgroups).
fn tile_stride() -> u32 {
    return select(p.total_wg, p.grid_wg, p.grid_wg != 0u);
}

// The job holding linear workgroup `w`: the last job whose wg_start <= w (binary search).
fn find_job(w: u32) -> u32 {
    var lo = p.job_base;
    var hi = p.job_base + p.n_jobs - 1u;
    while (lo < hi) {
        let mid = (lo + hi + 1u) / 2u;
        if (jobs[mid].wg_start <= w) {
            lo = mid;
        } else {
            hi = mid - 1u;
        }
    }
    return lo;
}

// The tile linear workgroup `w` computes: its job, first row and first column. Invocation 0 searches
// the job table once for the whole workgroup; call from uniform control flow.
struct Tile {
    job: Job,
    row0: u32,
    col0: u32,
}

fn tile_of(w: u32, t: u32) -> Tile {
    if (t == 0u) {
        wg_job = find_job(w);
        wg_w = w;
    }
    let job = jobs[workgroupUniformLoad(&wg_job)];
    let local = w - job.wg_start;
    return Tile(job, job.row0 + (local / p.tiles_n) * BM, (local % p.tiles_n) * BN);
}

// Every GEMM kernel's entry point. The kernel defines INVOCATIONS (per workgroup) and `compute_tile(w, t)`:
// tile w, stored and counted. One tile per workgroup, or on the GRID pipeline a persistent grid's
// share (`tile_stride`): the tile loop is only in the pipeline that needs it (a loop in every
// pipeline, even one that ends after a tile, slows the cooperative kernel at 4096³ and 8192³).
// A tile's last reads of workgroup memory are behind a barrier, so the next
// tile's stores cannot overtake them.
@compute @workgroup_size(INVOCATIONS)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) t: u32) {
    let w0 = wid.x + wid.y * p.dispatch_x;
    if (w0 >= tile_stride()) {
        spare_wg(t, w0 - tile_stride());
        return;
    }
    if (GRID) {
        for (var w = w0; w < p.total_wg; w += tile_stride()) {
            compute_tile(w, t);
        }
    } else {
        compute_tile(w0, t);
    }
}
