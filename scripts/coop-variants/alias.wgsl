// Variant alias: shaders/gemm_coop.wgsl as committed reading A and B through second
// variables on bindings 2 and 3, of the same type (one change, to bisect the NVVM failure).
// Tracked GEMM on cooperative matrices (tensor cores): C = A·B, f16 operands, f32 accumulation,
// row-major, any M, N, K >= 1, operands in the padded layout of src/gemm.rs (`Layout`); `--dtype f16`
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
// (naga emits loops as `while`). BENCHMARKS.md (runs 5 and 6) lists the other shapes tried: 128x128
// tiles with 64x32 or 32x64 blocks, 64-deep slices, double buffering, 128 invocations, no prefetch,
// guarded loads.
//
// Epilogue: each fragment goes through one of two per-subgroup 16x16 f32 scratches in workgroup
// memory so that the output is written in rows of four through `put_row4_vec`, with the same bounds
// guards as the SIMT kernel (cooperative stores cannot be clipped at the matrix edge), then the tile
// bumps its chunk's tracker counter (`tile_done`). The epilogue was a fifth of a 4096³ GEMM's time
// with scalar stores and two barriers per fragment (BENCHMARKS.md run 6).
//
// Tiles run in grouped order (`grouped`): 0.6% faster at 8192³ than row-major, the same at 4096³
// (BENCHMARKS.md run 7, which also lists the variants that did not build or pay).
enable f16;
enable wgpu_cooperative_matrix;

@group(0) @binding(2) var<storage, read> a_view: array<vec4<f16>>;
@group(0) @binding(3) var<storage, read> b_view: array<vec4<f16>>;

const BM: u32 = 128u;
const BN: u32 = 256u;
const BK: u32 = 32u;
const SA: u32 = 40u;
const SB: u32 = 264u;

var<workgroup> As: array<f16, 5120>;
var<workgroup> Bs: array<f16, 8448>;
var<workgroup> Cs: array<f32, 4096>;

// Four A elements (row, k..k+3), unguarded: the operand layout (src/gemm.rs, `Layout`) pads K to
// whole slices and N to whole tiles with zeros and gives A a tile of spare rows, so every read of a
// whole slice of a whole tile is in the buffer, and what lies past M, N or K either multiplies zeros
// or lands in output rows and columns that `put_row4` drops. (Guarded loads cost 15-25% here.)
fn fetch_a(row: u32, k: u32, job: Job) -> vec4<f16> {
    return a_view[(job.a_off + (row - job.a_row_base) * p.lda + k) >> 2u];
}

// Four B elements (k, col..col+3), unguarded likewise.
fn fetch_b(k: u32, col: u32, job: Job) -> vec4<f16> {
    return b_view[(job.b_off + k * p.ldb + col) >> 2u];
}

// A slice 128x32: vec4 i -> row i / 8, k 4 (i % 8). B slice 32x256: vec4 i -> k i / 64, col 4 (i % 64).
fn put_a(i: u32, v: vec4<f16>) {
    let o = (i / 8u) * SA + (i % 8u) * 4u;
    As[o] = v.x;
    As[o + 1u] = v.y;
    As[o + 2u] = v.z;
    As[o + 3u] = v.w;
}

fn put_b(i: u32, v: vec4<f16>) {
    let o = (i / 64u) * SB + (i % 64u) * 4u;
    Bs[o] = v.x;
    Bs[o + 1u] = v.y;
    Bs[o + 2u] = v.z;
    Bs[o + 3u] = v.w;
}

// Writes fragment `c` (tile rows row.., cols col..) through the subgroup's scratch `half` (fragments
// alternate between two, so one barrier per fragment suffices: the next fragment stores into the
// other half, and the one after that only after a barrier that follows these reads): lane l puts row
// l / 2, columns 8 (l % 2) .. + 8.
fn emit(c: coop_mat16x16<f32, C>, sg: u32, half: u32, lane: u32, row: u32, col: u32, job: Job) {
    let s = (2u * sg + half) * 256u;
    coopStoreT(c, &Cs[s], 16u);
    workgroupBarrier();
    let o = s + (lane / 2u) * 16u + (lane % 2u) * 8u;
    let r = row + lane / 2u;
    let cc = col + (lane % 2u) * 8u;
    put_row4_vec(r, cc, vec4<f32>(Cs[o], Cs[o + 1u], Cs[o + 2u], Cs[o + 3u]), job);
    put_row4_vec(r, cc + 4u, vec4<f32>(Cs[o + 4u], Cs[o + 5u], Cs[o + 6u], Cs[o + 7u]), job);
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

const INVOCATIONS: u32 = 256u;

fn compute_tile(w: u32, t: u32) {
    let tile = grouped(tile_of(w, t), w);
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
    var rb0 = fetch_b((t + 0u) / 64u, col0 + ((t + 0u) % 64u) * 4u, job);
    var rb1 = fetch_b((t + 256u) / 64u, col0 + ((t + 256u) % 64u) * 4u, job);
    var rb2 = fetch_b((t + 512u) / 64u, col0 + ((t + 512u) % 64u) * 4u, job);
    var rb3 = fetch_b((t + 768u) / 64u, col0 + ((t + 768u) % 64u) * 4u, job);
    var rb4 = fetch_b((t + 1024u) / 64u, col0 + ((t + 1024u) % 64u) * 4u, job);
    var rb5 = fetch_b((t + 1280u) / 64u, col0 + ((t + 1280u) % 64u) * 4u, job);
    var rb6 = fetch_b((t + 1536u) / 64u, col0 + ((t + 1536u) % 64u) * 4u, job);
    var rb7 = fetch_b((t + 1792u) / 64u, col0 + ((t + 1792u) % 64u) * 4u, job);
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
            rb0 = fetch_b(kn + (t + 0u) / 64u, col0 + ((t + 0u) % 64u) * 4u, job);
            rb1 = fetch_b(kn + (t + 256u) / 64u, col0 + ((t + 256u) % 64u) * 4u, job);
            rb2 = fetch_b(kn + (t + 512u) / 64u, col0 + ((t + 512u) % 64u) * 4u, job);
            rb3 = fetch_b(kn + (t + 768u) / 64u, col0 + ((t + 768u) % 64u) * 4u, job);
            rb4 = fetch_b(kn + (t + 1024u) / 64u, col0 + ((t + 1024u) % 64u) * 4u, job);
            rb5 = fetch_b(kn + (t + 1280u) / 64u, col0 + ((t + 1280u) % 64u) * 4u, job);
            rb6 = fetch_b(kn + (t + 1536u) / 64u, col0 + ((t + 1536u) % 64u) * 4u, job);
            rb7 = fetch_b(kn + (t + 1792u) / 64u, col0 + ((t + 1792u) % 64u) * 4u, job);
        }
        {
            let a0 = coopLoadT<coop_mat16x16<f16, A>>(&As[ar + 0u * SA + 0u], SA);
            let a1 = coopLoadT<coop_mat16x16<f16, A>>(&As[ar + 16u * SA + 0u], SA);
            let a2 = coopLoadT<coop_mat16x16<f16, A>>(&As[ar + 32u * SA + 0u], SA);
            let a3 = coopLoadT<coop_mat16x16<f16, A>>(&As[ar + 48u * SA + 0u], SA);
            let b0 = coopLoadT<coop_mat16x16<f16, B>>(&Bs[0u * SB + bc + 0u], SB);
            let b1 = coopLoadT<coop_mat16x16<f16, B>>(&Bs[0u * SB + bc + 16u], SB);
            let b2 = coopLoadT<coop_mat16x16<f16, B>>(&Bs[0u * SB + bc + 32u], SB);
            let b3 = coopLoadT<coop_mat16x16<f16, B>>(&Bs[0u * SB + bc + 48u], SB);
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
            let a0 = coopLoadT<coop_mat16x16<f16, A>>(&As[ar + 0u * SA + 16u], SA);
            let a1 = coopLoadT<coop_mat16x16<f16, A>>(&As[ar + 16u * SA + 16u], SA);
            let a2 = coopLoadT<coop_mat16x16<f16, A>>(&As[ar + 32u * SA + 16u], SA);
            let a3 = coopLoadT<coop_mat16x16<f16, A>>(&As[ar + 48u * SA + 16u], SA);
            let b0 = coopLoadT<coop_mat16x16<f16, B>>(&Bs[16u * SB + bc + 0u], SB);
            let b1 = coopLoadT<coop_mat16x16<f16, B>>(&Bs[16u * SB + bc + 16u], SB);
            let b2 = coopLoadT<coop_mat16x16<f16, B>>(&Bs[16u * SB + bc + 32u], SB);
            let b3 = coopLoadT<coop_mat16x16<f16, B>>(&Bs[16u * SB + bc + 48u], SB);
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
    emit(c00, sg, 0u, lane, r0 + 0u, cl + 0u, job);
    emit(c01, sg, 1u, lane, r0 + 0u, cl + 16u, job);
    emit(c02, sg, 0u, lane, r0 + 0u, cl + 32u, job);
    emit(c03, sg, 1u, lane, r0 + 0u, cl + 48u, job);
    emit(c10, sg, 0u, lane, r0 + 16u, cl + 0u, job);
    emit(c11, sg, 1u, lane, r0 + 16u, cl + 16u, job);
    emit(c12, sg, 0u, lane, r0 + 16u, cl + 32u, job);
    emit(c13, sg, 1u, lane, r0 + 16u, cl + 48u, job);
    emit(c20, sg, 0u, lane, r0 + 32u, cl + 0u, job);
    emit(c21, sg, 1u, lane, r0 + 32u, cl + 16u, job);
    emit(c22, sg, 0u, lane, r0 + 32u, cl + 32u, job);
    emit(c23, sg, 1u, lane, r0 + 32u, cl + 48u, job);
    emit(c30, sg, 0u, lane, r0 + 48u, cl + 0u, job);
    emit(c31, sg, 1u, lane, r0 + 48u, cl + 16u, job);
    emit(c32, sg, 0u, lane, r0 + 48u, cl + 32u, job);
    emit(c33, sg, 1u, lane, r0 + 48u, cl + 48u, job);
    tile_done(job.counter, t);
}
