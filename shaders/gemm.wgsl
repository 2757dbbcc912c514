// Tracked tiled GEMM: C = A·B, f32, row-major, any M, N, K >= 1.
//
// A workgroup of 16x16 invocations computes a 128x128 tile of C, each invocation an 8x8 block held in
// sixteen named vec4 accumulators (register arrays indexed in loops end up in local memory on some
// drivers; named variables cannot). K advances in slices of 8 through workgroup memory, with the next
// slice prefetched into registers while the current one is multiplied.
//
// Tiles are grouped into jobs: a job is one chunk (a band of output rows [row0, row1)) and its tiles
// never straddle the band, so every tile belongs to exactly one chunk. Jobs are issued in the order of
// the job table, so the table's order is the stagger: the first job's tiles get the lowest workgroup ids.
// After a workgroup has stored its tile it increments its chunk's tracker counter: the epilogue is the
// tracker (`tile_done`, from shaders/epilogue/). The output is written through `put`
// (shaders/put/*.wgsl): a plain store, or an update.
//
// Bounds: every global index is guarded by the row/col/k tests below, which is why the host may create
// this module without naga's runtime bounds checks (tests/gemm.rs covers every edge case).

// Mirrors `GemmParams` in src/gemm.rs: keep in sync.
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
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

// Mirrors `Job` in src/gemm.rs: keep in sync.
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
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

@group(0) @binding(1) var<uniform> p: GemmParams;
@group(0) @binding(2) var<storage, read> a: array<f32>;
@group(0) @binding(3) var<storage, read> b: array<f32>;
@group(0) @binding(4) var<storage, read_write> counters: array<atomic<u32>>;
@group(0) @binding(5) var<storage, read> jobs: array<Job>;

const BM: u32 = 128u;
const BN: u32 = 128u;
const BK: u32 = 8u;

// Transposed A slice (k-major) and B slice, 8 x 128 each, read as vec4 along the 128.
var<workgroup> As: array<vec4<f32>, 256>;
var<workgroup> Bs: array<vec4<f32>, 256>;
var<workgroup> wg_job: u32;

fn load_a(row: u32, k: u32, job: Job) -> f32 {
    if (row < job.row1 && k < p.k) {
        return a[job.a_off + (row - job.a_row_base) * p.lda + k];
    }
    return 0.0;
}

fn load_b(k: u32, col: u32, job: Job) -> f32 {
    if (k < p.k && col < p.n) {
        return b[job.b_off + k * p.ldb + col];
    }
    return 0.0;
}

fn store_row(row: u32, col: u32, v0: vec4<f32>, v1: vec4<f32>, job: Job) {
    if (row >= job.row1) {
        return;
    }
    let base = job.c_off + (row - job.c_row_base) * p.ldc;
    if (col + 3u < p.n) {
        put(base + col, v0.x);
        put(base + col + 1u, v0.y);
        put(base + col + 2u, v0.z);
        put(base + col + 3u, v0.w);
    } else {
        if (col < p.n) { put(base + col, v0.x); }
        if (col + 1u < p.n) { put(base + col + 1u, v0.y); }
        if (col + 2u < p.n) { put(base + col + 2u, v0.z); }
    }
    let c1 = col + 64u;
    if (c1 + 3u < p.n) {
        put(base + c1, v1.x);
        put(base + c1 + 1u, v1.y);
        put(base + c1 + 2u, v1.z);
        put(base + c1 + 3u, v1.w);
    } else {
        if (c1 < p.n) { put(base + c1, v1.x); }
        if (c1 + 1u < p.n) { put(base + c1 + 1u, v1.y); }
        if (c1 + 2u < p.n) { put(base + c1 + 2u, v1.z); }
    }
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

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) t: u32) {
    let w = wid.x + wid.y * p.dispatch_x;
    if (w >= p.total_wg) {
        return;
    }
    if (t == 0u) {
        wg_job = find_job(w);
    }
    let ji = workgroupUniformLoad(&wg_job);
    let job = jobs[ji];
    let local = w - job.wg_start;
    let row0 = job.row0 + (local / p.tiles_n) * BM;
    let col0 = (local % p.tiles_n) * BN;
    let tx = t % 16u;
    let ty = t / 16u;

    // Each invocation moves 4 elements of each slice: A element (row r, k kk) and B element (k kk, col c).
    var ra0 = load_a(row0 + (t + 0u) / 8u, (t + 0u) % 8u, job);
    var ra1 = load_a(row0 + (t + 256u) / 8u, (t + 256u) % 8u, job);
    var ra2 = load_a(row0 + (t + 512u) / 8u, (t + 512u) % 8u, job);
    var ra3 = load_a(row0 + (t + 768u) / 8u, (t + 768u) % 8u, job);
    var rb0 = load_b((t + 0u) / 128u, col0 + (t + 0u) % 128u, job);
    var rb1 = load_b((t + 256u) / 128u, col0 + (t + 256u) % 128u, job);
    var rb2 = load_b((t + 512u) / 128u, col0 + (t + 512u) % 128u, job);
    var rb3 = load_b((t + 768u) / 128u, col0 + (t + 768u) % 128u, job);

    var c00 = vec4<f32>(0.0);
    var c01 = vec4<f32>(0.0);
    var c10 = vec4<f32>(0.0);
    var c11 = vec4<f32>(0.0);
    var c20 = vec4<f32>(0.0);
    var c21 = vec4<f32>(0.0);
    var c30 = vec4<f32>(0.0);
    var c31 = vec4<f32>(0.0);
    var c40 = vec4<f32>(0.0);
    var c41 = vec4<f32>(0.0);
    var c50 = vec4<f32>(0.0);
    var c51 = vec4<f32>(0.0);
    var c60 = vec4<f32>(0.0);
    var c61 = vec4<f32>(0.0);
    var c70 = vec4<f32>(0.0);
    var c71 = vec4<f32>(0.0);

    for (var k0 = 0u; k0 < p.k; k0 += BK) {
        // Unrolled: the prefetch registers are indexed by constants only.
        As[((t + 0u) % 8u) * 32u + ((t + 0u) / 8u) / 4u][((t + 0u) / 8u) % 4u] = ra0;
        As[((t + 256u) % 8u) * 32u + ((t + 256u) / 8u) / 4u][((t + 256u) / 8u) % 4u] = ra1;
        As[((t + 512u) % 8u) * 32u + ((t + 512u) / 8u) / 4u][((t + 512u) / 8u) % 4u] = ra2;
        As[((t + 768u) % 8u) * 32u + ((t + 768u) / 8u) / 4u][((t + 768u) / 8u) % 4u] = ra3;
        Bs[((t + 0u) / 128u) * 32u + (t % 128u) / 4u][t % 4u] = rb0;
        Bs[((t + 256u) / 128u) * 32u + (t % 128u) / 4u][t % 4u] = rb1;
        Bs[((t + 512u) / 128u) * 32u + (t % 128u) / 4u][t % 4u] = rb2;
        Bs[((t + 768u) / 128u) * 32u + (t % 128u) / 4u][t % 4u] = rb3;
        workgroupBarrier();
        let kn = k0 + BK;
        if (kn < p.k) {
            ra0 = load_a(row0 + (t + 0u) / 8u, kn + (t + 0u) % 8u, job);
            ra1 = load_a(row0 + (t + 256u) / 8u, kn + (t + 256u) % 8u, job);
            ra2 = load_a(row0 + (t + 512u) / 8u, kn + (t + 512u) % 8u, job);
            ra3 = load_a(row0 + (t + 768u) / 8u, kn + (t + 768u) % 8u, job);
            rb0 = load_b(kn + (t + 0u) / 128u, col0 + (t + 0u) % 128u, job);
            rb1 = load_b(kn + (t + 256u) / 128u, col0 + (t + 256u) % 128u, job);
            rb2 = load_b(kn + (t + 512u) / 128u, col0 + (t + 512u) % 128u, job);
            rb3 = load_b(kn + (t + 768u) / 128u, col0 + (t + 768u) % 128u, job);
        }
        for (var kk = 0u; kk < BK; kk++) {
            let a0 = As[kk * 32u + ty];
            let a1 = As[kk * 32u + 16u + ty];
            let b0 = Bs[kk * 32u + tx];
            let b1 = Bs[kk * 32u + 16u + tx];
            c00 = fma(vec4<f32>(a0.x), b0, c00);
            c01 = fma(vec4<f32>(a0.x), b1, c01);
            c10 = fma(vec4<f32>(a0.y), b0, c10);
            c11 = fma(vec4<f32>(a0.y), b1, c11);
            c20 = fma(vec4<f32>(a0.z), b0, c20);
            c21 = fma(vec4<f32>(a0.z), b1, c21);
            c30 = fma(vec4<f32>(a0.w), b0, c30);
            c31 = fma(vec4<f32>(a0.w), b1, c31);
            c40 = fma(vec4<f32>(a1.x), b0, c40);
            c41 = fma(vec4<f32>(a1.x), b1, c41);
            c50 = fma(vec4<f32>(a1.y), b0, c50);
            c51 = fma(vec4<f32>(a1.y), b1, c51);
            c60 = fma(vec4<f32>(a1.z), b0, c60);
            c61 = fma(vec4<f32>(a1.z), b1, c61);
            c70 = fma(vec4<f32>(a1.w), b0, c70);
            c71 = fma(vec4<f32>(a1.w), b1, c71);
        }
        workgroupBarrier();
    }

    store_row(row0 + 0u + ty * 4u + 0u, col0 + tx * 4u, c00, c01, job);
    store_row(row0 + 0u + ty * 4u + 1u, col0 + tx * 4u, c10, c11, job);
    store_row(row0 + 0u + ty * 4u + 2u, col0 + tx * 4u, c20, c21, job);
    store_row(row0 + 0u + ty * 4u + 3u, col0 + tx * 4u, c30, c31, job);
    store_row(row0 + 64u + ty * 4u + 0u, col0 + tx * 4u, c40, c41, job);
    store_row(row0 + 64u + ty * 4u + 1u, col0 + tx * 4u, c50, c51, job);
    store_row(row0 + 64u + ty * 4u + 2u, col0 + tx * 4u, c60, c61, job);
    store_row(row0 + 64u + ty * 4u + 3u, col0 + tx * 4u, c70, c71, job);

    // Tracker: every invocation's stores happen before the one increment of the chunk's counter.
    // The epilogue (shaders/epilogue/): bump the chunk's tracker counter, and in fused mode perform
    // the transfer the increment triggers.
    tile_done(job.counter, t);
}
