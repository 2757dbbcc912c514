// Tracked GEMM on cooperative matrices (tensor cores): C = A·B, f16 operands, f32 accumulation,
// row-major, any M, N, K >= 1, operands in the padded layout of src/gemm.rs (`Padding`); `--dtype f16`
// where the adapter offers f16 x f16 -> f32 at 16x16x16 with subgroups of 32 and the workgroup memory
// below. The job table, output guards and tile lookup are shaders/gemm/jobs.wgsl, the operands
// shaders/operands/f16.wgsl, as for the SIMT kernel, so the two cannot disagree on layout.
//
// A workgroup of 256 invocations (8 subgroups of 32) computes a 128x256 tile of C (the host counts
// this engine's tiles 256 wide: `Engine::tile_n`). Subgroup s owns a 64x64 block (rows 64 * (s / 4),
// columns 64 * (s % 4)): 4x4 accumulator fragments of 16x16, held in named variables. K advances in
// slices of 32 through workgroup memory (A slice 128x32, B slice 32x256, rows padded by 8 halves
// against bank conflicts and to keep every fragment 16-byte aligned), the next slice prefetched into
// registers while the current one is multiplied; the slice's two 16-deep steps are unrolled by hand
// (naga emits loops as `while`). The other shapes tried are slower (BENCHMARKS.md's log): 128x128
// tiles with 64x32 or 32x64 blocks, 64-deep slices, double buffering, 128 invocations, no prefetch,
// guarded loads.
//
// Epilogue: fragments go two at a time (a 16x32 strip) through the subgroup's scratch in workgroup
// memory so that C is written in whole 128-byte rows (`emit_pair`, through `put_row4_vec`, with the
// same bounds guards as the SIMT kernel: cooperative stores cannot be clipped at the matrix edge),
// then the tile bumps its chunk's tracker counter (`tile_done`). How C is written is most of a
// tile's fixed cost: with half a 32-byte sector per lane and store the epilogue is a large share of
// a thin GEMM such as an output projection's (8192x4256x532), and whole rows make that GEMM much
// faster and the square ones a little; fragments stored straight from the accumulators (8 bytes
// per lane and row) are slower still.
//
// Tiles run in grouped order (`grouped`): slightly faster at 8192³ than row-major, the same at
// 4096³ (BENCHMARKS.md's log also lists the variants that did not build or pay).
//
// Workgroup memory is typed vec4<f16>: each prefetched vec4 goes out as one 8-byte store instead of
// four 2-byte ones, and fragments load through vec4<f16> pointers with strides in vec4s: about a
// quarter faster than the same kernel on f16 workgroup memory (see BENCHMARKS.md).
enable f16;
enable wgpu_cooperative_matrix;

const BM: u32 = 128u;
const BN: u32 = 256u;
// Invocations per workgroup (the entry point, `main`, is shaders/gemm/jobs.wgsl's).
const INVOCATIONS: u32 = 256u;
const BK: u32 = 32u;
const SA: u32 = 40u;
const SB: u32 = 264u;

var<workgroup> As: array<vec4<f16>, 1280>;
var<workgroup> Bs: array<vec4<f16>, 2112>;
var<workgroup> Cs: array<f32, 4608>;

// Four A elements (row, k..k+3), unguarded: the operand layout (src/gemm.rs, `Padding`) pads K to
// whole slices and N to whole tiles with zeros and gives A a tile of spare rows, so every read of a
// whole slice of a whole tile is in the buffer, and what lies past M, N or K either multiplies zeros
// or lands in output rows and columns that `put_row4` drops. (Guarded loads slow it markedly.)
fn fetch_a(row: u32, k: u32, job: Job) -> vec4<f16> {
    return a[(job.a_off + (row - job.a_row_base) * p.lda + k) >> 2u];
}

// Four B elements (k, col..col+3), unguarded likewise, through B's window `window` (`b_word_in`).
fn fetch_b(k: u32, col: u32, job: Job, window: u32) -> vec4<f16> {
    return b_word_in((job.b_off + k * p.ldb + col) >> 2u, window);
}

// A slice 128x32: vec4 i -> row i / 8, k 4 (i % 8). B slice 32x256: vec4 i -> k i / 64, col 4 (i % 64).
fn put_a(i: u32, v: vec4<f16>) {
    As[(i / 8u) * (SA / 4u) + i % 8u] = v;
}

fn put_b(i: u32, v: vec4<f16>) {
    Bs[(i / 64u) * (SB / 4u) + i % 64u] = v;
}

// Writes fragment `c` (tile rows row.., cols col..) through the subgroup's scratch `half` (fragments
// alternate between two, so one barrier per fragment suffices: the next fragment stores into the
// other half, and the one after that only after a barrier that follows these reads): lane l puts row
// l / 2, columns 8 (l % 2) .. + 8.
// Fragments a (columns col..) and b (col + 16..) through the subgroup's 16x32 scratch (rows padded
// to 36 floats against bank conflicts), so that every store instruction writes whole 128-byte rows
// of C: where `put4` is one 16-byte store, lane l puts row l / 8 (+ 4, 8, 12), columns 4 (l % 8)..;
// where it is four element operations, lane l puts column l of each row. The second barrier keeps
// the next pair's stores off this pair's reads.
fn emit_pair(a: coop_mat16x16<f32, C>, b: coop_mat16x16<f32, C>, sg: u32, lane: u32, row: u32, col: u32, job: Job) {
    let s = sg * 576u;
    coopStoreT(a, &Cs[s], 36u);
    coopStoreT(b, &Cs[s + 16u], 36u);
    workgroupBarrier();
    if (PUT4_WHOLE) {
        let cc = col + (lane % 8u) * 4u;
        for (var q = 0u; q < 4u; q += 1u) {
            let r = lane / 8u + 4u * q;
            let o = s + r * 36u + (lane % 8u) * 4u;
            put_row4_vec(row + r, cc, vec4<f32>(Cs[o], Cs[o + 1u], Cs[o + 2u], Cs[o + 3u]), job);
        }
    } else {
        // A put made of element operations (fused mode's atomic stores, the atomic adds): lane l
        // puts column l of each row, so each instruction still covers one whole 128-byte row.
        for (var r = 0u; r < 16u; r += 1u) {
            put_one(row + r, col + lane, Cs[s + r * 36u + lane], job);
        }
    }
    workgroupBarrier();
}

// Grouped tile order: consecutive workgroups walk down GROUP tile rows of their job before moving one
// tile column right, so the ~132 tiles in flight share A rows and B columns in L2 (row-major order
// spans all of B's columns with a few A bands). Tiles stay inside their job, so chunks and tracker
// counts are unchanged.
const GROUP: u32 = 8u;

fn grouped(tile: Tile, w: u32) -> Tile {
    let job = tile.job;
    let local = w - job.wg_start;
    let rows = (job.row1 - job.row0 + BM - 1u) / BM;
    let span = GROUP * p.tiles_n;
    let first = (local / span) * GROUP;
    let h = min(rows - first, GROUP);
    let i = local % span;
    return Tile(job, job.row0 + (first + i % h) * BM, (i / h) * BN);
}

// The tile linear workgroup `w` computes (its rows, columns and chunk from the job table), stored
// and counted by its chunk's tracker. Where fused mode binds every rank's B as two windows, a copy of
// the tile's code per window a job can read (`Job::b_window`), each with its window a constant: a
// choice of window made per load, even a uniform one, slows this kernel by a third or more.
fn compute_tile(w: u32, t: u32) {
    let tile = grouped(tile_of(w, t), w);
    if (B_WINDOWS && tile.job.b_window == 1u) {
        tile_in(w, t, tile, 1u);
    } else if (B_WINDOWS && tile.job.b_window == 2u) {
        tile_in(w, t, tile, 2u);
    } else {
        tile_in(w, t, tile, 0u);
    }
}

// Tile `tile` (linear workgroup `w`'s) with B through window `window`.
fn tile_in(w: u32, t: u32, tile: Tile, window: u32) {
    let job = tile.job;
    let row0 = tile.row0;
    let col0 = tile.col0;
    let sg = t / 32u;
    let lane = t % 32u;
    let ar = (sg / 4u) * 64u * SA;
    let bc = (sg % 4u) * 64u;
    var ra0 = fetch_a(row0 + (t + 0u) / 8u, ((t + 0u) % 8u) * 4u, job);
    var ra1 = fetch_a(row0 + (t + 256u) / 8u, ((t + 256u) % 8u) * 4u, job);
    var ra2 = fetch_a(row0 + (t + 512u) / 8u, ((t + 512u) % 8u) * 4u, job);
    var ra3 = fetch_a(row0 + (t + 768u) / 8u, ((t + 768u) % 8u) * 4u, job);
    var rb0 = fetch_b((t + 0u) / 64u, col0 + ((t + 0u) % 64u) * 4u, job, window);
    var rb1 = fetch_b((t + 256u) / 64u, col0 + ((t + 256u) % 64u) * 4u, job, window);
    var rb2 = fetch_b((t + 512u) / 64u, col0 + ((t + 512u) % 64u) * 4u, job, window);
    var rb3 = fetch_b((t + 768u) / 64u, col0 + ((t + 768u) % 64u) * 4u, job, window);
    var rb4 = fetch_b((t + 1024u) / 64u, col0 + ((t + 1024u) % 64u) * 4u, job, window);
    var rb5 = fetch_b((t + 1280u) / 64u, col0 + ((t + 1280u) % 64u) * 4u, job, window);
    var rb6 = fetch_b((t + 1536u) / 64u, col0 + ((t + 1536u) % 64u) * 4u, job, window);
    var rb7 = fetch_b((t + 1792u) / 64u, col0 + ((t + 1792u) % 64u) * 4u, job, window);
    var c00 = coop_mat16x16<f32, C>();
    var c01 = coop_mat16x16<f32, C>();
    var c02 = coop_mat16x16<f32, C>();
    var c03 = coop_mat16x16<f32, C>();
    var c10 = coop_mat16x16<f32, C>();
    var c11 = coop_mat16x16<f32, C>();
    var c12 = coop_mat16x16<f32, C>();
    var c13 = coop_mat16x16<f32, C>();
    var c20 = coop_mat16x16<f32, C>();
    var c21 = coop_mat16x16<f32, C>();
    var c22 = coop_mat16x16<f32, C>();
    var c23 = coop_mat16x16<f32, C>();
    var c30 = coop_mat16x16<f32, C>();
    var c31 = coop_mat16x16<f32, C>();
    var c32 = coop_mat16x16<f32, C>();
    var c33 = coop_mat16x16<f32, C>();
    for (var k0 = 0u; k0 < p.k; k0 += BK) {
        put_a(t + 0u, ra0);
        put_a(t + 256u, ra1);
        put_a(t + 512u, ra2);
        put_a(t + 768u, ra3);
        put_b(t + 0u, rb0);
        put_b(t + 256u, rb1);
        put_b(t + 512u, rb2);
        put_b(t + 768u, rb3);
        put_b(t + 1024u, rb4);
        put_b(t + 1280u, rb5);
        put_b(t + 1536u, rb6);
        put_b(t + 1792u, rb7);
        workgroupBarrier();
        let kn = k0 + BK;
        if (kn < p.k) {
            ra0 = fetch_a(row0 + (t + 0u) / 8u, kn + ((t + 0u) % 8u) * 4u, job);
            ra1 = fetch_a(row0 + (t + 256u) / 8u, kn + ((t + 256u) % 8u) * 4u, job);
            ra2 = fetch_a(row0 + (t + 512u) / 8u, kn + ((t + 512u) % 8u) * 4u, job);
            ra3 = fetch_a(row0 + (t + 768u) / 8u, kn + ((t + 768u) % 8u) * 4u, job);
            rb0 = fetch_b(kn + (t + 0u) / 64u, col0 + ((t + 0u) % 64u) * 4u, job, window);
            rb1 = fetch_b(kn + (t + 256u) / 64u, col0 + ((t + 256u) % 64u) * 4u, job, window);
            rb2 = fetch_b(kn + (t + 512u) / 64u, col0 + ((t + 512u) % 64u) * 4u, job, window);
            rb3 = fetch_b(kn + (t + 768u) / 64u, col0 + ((t + 768u) % 64u) * 4u, job, window);
            rb4 = fetch_b(kn + (t + 1024u) / 64u, col0 + ((t + 1024u) % 64u) * 4u, job, window);
            rb5 = fetch_b(kn + (t + 1280u) / 64u, col0 + ((t + 1280u) % 64u) * 4u, job, window);
            rb6 = fetch_b(kn + (t + 1536u) / 64u, col0 + ((t + 1536u) % 64u) * 4u, job, window);
            rb7 = fetch_b(kn + (t + 1792u) / 64u, col0 + ((t + 1792u) % 64u) * 4u, job, window);
        }
        {
            let a0 = coopLoadT<coop_mat16x16<f16, A>>(&As[(ar + 0u * SA + 0u) / 4u], SA / 4u);
            let a1 = coopLoadT<coop_mat16x16<f16, A>>(&As[(ar + 16u * SA + 0u) / 4u], SA / 4u);
            let a2 = coopLoadT<coop_mat16x16<f16, A>>(&As[(ar + 32u * SA + 0u) / 4u], SA / 4u);
            let a3 = coopLoadT<coop_mat16x16<f16, A>>(&As[(ar + 48u * SA + 0u) / 4u], SA / 4u);
            let b0 = coopLoadT<coop_mat16x16<f16, B>>(&Bs[(0u * SB + bc + 0u) / 4u], SB / 4u);
            let b1 = coopLoadT<coop_mat16x16<f16, B>>(&Bs[(0u * SB + bc + 16u) / 4u], SB / 4u);
            let b2 = coopLoadT<coop_mat16x16<f16, B>>(&Bs[(0u * SB + bc + 32u) / 4u], SB / 4u);
            let b3 = coopLoadT<coop_mat16x16<f16, B>>(&Bs[(0u * SB + bc + 48u) / 4u], SB / 4u);
            c00 = coopMultiplyAdd(a0, b0, c00);
            c01 = coopMultiplyAdd(a0, b1, c01);
            c02 = coopMultiplyAdd(a0, b2, c02);
            c03 = coopMultiplyAdd(a0, b3, c03);
            c10 = coopMultiplyAdd(a1, b0, c10);
            c11 = coopMultiplyAdd(a1, b1, c11);
            c12 = coopMultiplyAdd(a1, b2, c12);
            c13 = coopMultiplyAdd(a1, b3, c13);
            c20 = coopMultiplyAdd(a2, b0, c20);
            c21 = coopMultiplyAdd(a2, b1, c21);
            c22 = coopMultiplyAdd(a2, b2, c22);
            c23 = coopMultiplyAdd(a2, b3, c23);
            c30 = coopMultiplyAdd(a3, b0, c30);
            c31 = coopMultiplyAdd(a3, b1, c31);
            c32 = coopMultiplyAdd(a3, b2, c32);
            c33 = coopMultiplyAdd(a3, b3, c33);
        }
        {
            let a0 = coopLoadT<coop_mat16x16<f16, A>>(&As[(ar + 0u * SA + 16u) / 4u], SA / 4u);
            let a1 = coopLoadT<coop_mat16x16<f16, A>>(&As[(ar + 16u * SA + 16u) / 4u], SA / 4u);
            let a2 = coopLoadT<coop_mat16x16<f16, A>>(&As[(ar + 32u * SA + 16u) / 4u], SA / 4u);
            let a3 = coopLoadT<coop_mat16x16<f16, A>>(&As[(ar + 48u * SA + 16u) / 4u], SA / 4u);
            let b0 = coopLoadT<coop_mat16x16<f16, B>>(&Bs[(16u * SB + bc + 0u) / 4u], SB / 4u);
            let b1 = coopLoadT<coop_mat16x16<f16, B>>(&Bs[(16u * SB + bc + 16u) / 4u], SB / 4u);
            let b2 = coopLoadT<coop_mat16x16<f16, B>>(&Bs[(16u * SB + bc + 32u) / 4u], SB / 4u);
            let b3 = coopLoadT<coop_mat16x16<f16, B>>(&Bs[(16u * SB + bc + 48u) / 4u], SB / 4u);
            c00 = coopMultiplyAdd(a0, b0, c00);
            c01 = coopMultiplyAdd(a0, b1, c01);
            c02 = coopMultiplyAdd(a0, b2, c02);
            c03 = coopMultiplyAdd(a0, b3, c03);
            c10 = coopMultiplyAdd(a1, b0, c10);
            c11 = coopMultiplyAdd(a1, b1, c11);
            c12 = coopMultiplyAdd(a1, b2, c12);
            c13 = coopMultiplyAdd(a1, b3, c13);
            c20 = coopMultiplyAdd(a2, b0, c20);
            c21 = coopMultiplyAdd(a2, b1, c21);
            c22 = coopMultiplyAdd(a2, b2, c22);
            c23 = coopMultiplyAdd(a2, b3, c23);
            c30 = coopMultiplyAdd(a3, b0, c30);
            c31 = coopMultiplyAdd(a3, b1, c31);
            c32 = coopMultiplyAdd(a3, b2, c32);
            c33 = coopMultiplyAdd(a3, b3, c33);
        }
        workgroupBarrier();
    }
    let r0 = row0 + (sg / 4u) * 64u;
    let cl = col0 + bc;
    emit_pair(c00, c01, sg, lane, r0 + 0u, cl + 0u, job);
    emit_pair(c02, c03, sg, lane, r0 + 0u, cl + 32u, job);
    emit_pair(c10, c11, sg, lane, r0 + 16u, cl + 0u, job);
    emit_pair(c12, c13, sg, lane, r0 + 16u, cl + 32u, job);
    emit_pair(c20, c21, sg, lane, r0 + 32u, cl + 0u, job);
    emit_pair(c22, c23, sg, lane, r0 + 32u, cl + 32u, job);
    emit_pair(c30, c31, sg, lane, r0 + 48u, cl + 0u, job);
    emit_pair(c32, c33, sg, lane, r0 + 48u, cl + 32u, job);
    tile_done(job.counter, t);
    tile_landed(t);
}
