// Tracked tiled GEMM: C = A·B, f32 accumulation, row-major, any M, N, K >= 1. The SIMT kernel: f32
// operands, or f16 ones converted on load (`--dtype f16` where the adapter has no cooperative matrices);
// `a_elem`/`b_elem` come from shaders/operands/, the job table and guards from shaders/gemm/jobs.wgsl.
//
// A workgroup of 16x16 invocations computes a 128x128 tile of C, each invocation an 8x8 block held in
// sixteen named vec4 accumulators (register arrays indexed in loops end up in local memory on some
// drivers; named variables cannot). K advances in slices of 8 through workgroup memory, with the next
// slice prefetched into registers while the current one is multiplied.
//
// Operand loads are unguarded, as the cooperative kernel's are: the operand layout (src/gemm.rs,
// `Padding`) pads K to whole 32-deep slices and N to whole tiles with zeros and gives A a tile of
// spare rows, so every element of a whole slice of a whole tile is in the buffer, and what lies past
// M, N or K either multiplies zeros or lands in output rows and columns that `put_row4` drops.
//
// After a workgroup has stored its tile it increments its chunk's tracker counter: the epilogue is the
// tracker (`tile_done`, from shaders/epilogue/). The output is written through `put`
// (shaders/put/*.wgsl): a plain store, or an update.

const BM: u32 = 128u;
const BN: u32 = 128u;
// Invocations per workgroup (the entry point, `main`, is shaders/gemm/jobs.wgsl's).
const INVOCATIONS: u32 = 256u;
const BK: u32 = 8u;

// Transposed A slice (k-major) and B slice, 8 x 128 each, read as vec4 along the 128.
var<workgroup> As: array<vec4<f32>, 256>;
var<workgroup> Bs: array<vec4<f32>, 256>;

// A element (row, k) and B element (k, col), unguarded (above).
fn fetch_a(row: u32, k: u32, job: Job) -> f32 {
    return a_elem(job.a_off + (row - job.a_row_base) * p.lda + k);
}

fn fetch_b(k: u32, col: u32, job: Job) -> f32 {
    return b_elem(job.b_off + k * p.ldb + col);
}

fn store_row(row: u32, col: u32, v0: vec4<f32>, v1: vec4<f32>, job: Job) {
    put_row4(row, col, v0, job);
    put_row4(row, col + 64u, v1, job);
}

// The tile linear workgroup `w` computes (its rows, columns and chunk from the job table), stored
// and counted by its chunk's tracker.
fn compute_tile(w: u32, t: u32) {
    let tile = tile_of(w, t);
    let job = tile.job;
    let row0 = tile.row0;
    let col0 = tile.col0;
    let tx = t % 16u;
    let ty = t / 16u;

    // Each invocation moves 4 elements of each slice: A element (row r, k kk) and B element (k kk, col c).
    var ra0 = fetch_a(row0 + (t + 0u) / 8u, (t + 0u) % 8u, job);
    var ra1 = fetch_a(row0 + (t + 256u) / 8u, (t + 256u) % 8u, job);
    var ra2 = fetch_a(row0 + (t + 512u) / 8u, (t + 512u) % 8u, job);
    var ra3 = fetch_a(row0 + (t + 768u) / 8u, (t + 768u) % 8u, job);
    var rb0 = fetch_b((t + 0u) / 128u, col0 + (t + 0u) % 128u, job);
    var rb1 = fetch_b((t + 256u) / 128u, col0 + (t + 256u) % 128u, job);
    var rb2 = fetch_b((t + 512u) / 128u, col0 + (t + 512u) % 128u, job);
    var rb3 = fetch_b((t + 768u) / 128u, col0 + (t + 768u) % 128u, job);

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
            ra0 = fetch_a(row0 + (t + 0u) / 8u, kn + (t + 0u) % 8u, job);
            ra1 = fetch_a(row0 + (t + 256u) / 8u, kn + (t + 256u) % 8u, job);
            ra2 = fetch_a(row0 + (t + 512u) / 8u, kn + (t + 512u) % 8u, job);
            ra3 = fetch_a(row0 + (t + 768u) / 8u, kn + (t + 768u) % 8u, job);
            rb0 = fetch_b(kn + (t + 0u) / 128u, col0 + (t + 0u) % 128u, job);
            rb1 = fetch_b(kn + (t + 256u) / 128u, col0 + (t + 256u) % 128u, job);
            rb2 = fetch_b(kn + (t + 512u) / 128u, col0 + (t + 512u) % 128u, job);
            rb3 = fetch_b(kn + (t + 768u) / 128u, col0 + (t + 768u) % 128u, job);
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
    tile_landed(t);
}
