// Variant db2-swz: 128x256 tiles, 8 subgroups of 64x64, 16-deep slices double-buffered in workgroup memory
// (two stages, ONE barrier per slice: a slice is stored into the stage nobody reads while the other is
// multiplied), 16-byte operand loads and workgroup stores (memory typed vec4<u32>), registers holding the
// next two slices (loads issued 2 slices ahead of their store, so two slices of multiply-adds hide each load).
// The loop is unrolled by two so that each half reads a fixed stage. 45 KiB of workgroup memory. Grouped tile order.
enable f16;
enable wgpu_cooperative_matrix;

const BM: u32 = 128u;
const BN: u32 = 256u;
const BK: u32 = 16u;
// Row strides in vec4s: A rows of 16 + 8 halves, B rows of 256 + 8. A stage is 384 vec4s of A
// (128 rows) and 528 of B (16 rows).
const SA: u32 = 3u;
const SB: u32 = 33u;

@group(0) @binding(2) var<storage, read> a8: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read> b8: array<vec4<u32>>;

var<workgroup> As: array<vec4<u32>, 768>;
var<workgroup> Bs: array<vec4<u32>, 1056>;
var<workgroup> Cs: array<f32, 4096>;

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

// Writes fragment `c` (tile rows row.., cols col..) through the subgroup's scratch `half` (fragments
// alternate between two, so one barrier per fragment suffices): lane l puts row l / 2, columns
// 8 (l % 2) .. + 8 (as shaders/gemm_coop.wgsl).
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

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) t: u32) {
    let w = wid.x + wid.y * p.dispatch_x;
    if (w >= p.total_wg) {
        return;
    }
    let tile = grouped(tile_of(w, t), w);
    let job = tile.job;
    let row0 = tile.row0;
    let col0 = tile.col0;
    let sg = t / 32u;
    let lane = t % 32u;
    let ar = (sg / 4u) * 64u * SA;
    let bc = (sg % 4u) * 8u;
    // A slice 128x16 = 256 vec4s: item t -> row t / 2, halves 8 (t % 2).
    // B slice 16x256 = 512 vec4s: items t, t + 256 -> k t / 32 (+ 8), halves 8 (t % 32).
    // Slice j starts 2j vec4s into A's rows and j * 2 * ldb vec4s into B.
    let ga = (job.a_off + (row0 + t / 2u - job.a_row_base) * p.lda + (t % 2u) * 8u) >> 3u;
    let gb = (job.b_off + (t / 32u) * p.ldb + col0 + (t % 32u) * 8u) >> 3u;
    let g8 = p.ldb;
    let kstep = 2u * p.ldb;
    let sa = (t / 2u) * SA + t % 2u;
    let sb = (t / 32u) * SB + t % 32u;
    let sb8 = 8u * SB;
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
    // Slice 0 straight into stage 0; slices 0 and 1 are always inside the buffers (K is padded to
    // whole 32-deep slices), later ones only while k < K.
    As[sa] = a8[ga];
    Bs[sb] = b8[gb];
    Bs[sb + sb8] = b8[gb + g8];
    var qa = a8[ga + 2u];
    var qb0 = b8[gb + kstep];
    var qb1 = b8[gb + kstep + g8];
    var ra = vec4<u32>();
    var rb0 = vec4<u32>();
    var rb1 = vec4<u32>();
    if (2u * BK < p.k) {
        ra = a8[ga + 4u];
        rb0 = b8[gb + 2u * kstep];
        rb1 = b8[gb + 2u * kstep + g8];
    }
    workgroupBarrier();
    // Registers q hold the odd slice after the current pair, r the even one.
    var ka = 0u;
    var kb = 0u;
    for (var k0 = 0u; k0 < p.k; k0 += 2u * BK) {
        {
            let a0 = coopLoadT<coop_mat16x16<f16, A>>(&As[0u + ar + 0u * SA], SA);
            let a1 = coopLoadT<coop_mat16x16<f16, A>>(&As[0u + ar + 16u * SA], SA);
            let a2 = coopLoadT<coop_mat16x16<f16, A>>(&As[0u + ar + 32u * SA], SA);
            let a3 = coopLoadT<coop_mat16x16<f16, A>>(&As[0u + ar + 48u * SA], SA);
            let b0 = coopLoadT<coop_mat16x16<f16, B>>(&Bs[0u + bc + 0u], SB);
            let b1 = coopLoadT<coop_mat16x16<f16, B>>(&Bs[0u + bc + 2u], SB);
            let b2 = coopLoadT<coop_mat16x16<f16, B>>(&Bs[0u + bc + 4u], SB);
            let b3 = coopLoadT<coop_mat16x16<f16, B>>(&Bs[0u + bc + 6u], SB);
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
        As[sa + 384u] = qa;
        Bs[sb + 528u] = qb0;
        Bs[sb + sb8 + 528u] = qb1;
        if (k0 + 2u * BK < p.k) {
            qa = a8[ga + ka + 6u];
            qb0 = b8[gb + kb + 3u * kstep];
            qb1 = b8[gb + kb + 3u * kstep + g8];
        }
        workgroupBarrier();
        {
            let a0 = coopLoadT<coop_mat16x16<f16, A>>(&As[384u + ar + 0u * SA], SA);
            let a1 = coopLoadT<coop_mat16x16<f16, A>>(&As[384u + ar + 16u * SA], SA);
            let a2 = coopLoadT<coop_mat16x16<f16, A>>(&As[384u + ar + 32u * SA], SA);
            let a3 = coopLoadT<coop_mat16x16<f16, A>>(&As[384u + ar + 48u * SA], SA);
            let b0 = coopLoadT<coop_mat16x16<f16, B>>(&Bs[528u + bc + 0u], SB);
            let b1 = coopLoadT<coop_mat16x16<f16, B>>(&Bs[528u + bc + 2u], SB);
            let b2 = coopLoadT<coop_mat16x16<f16, B>>(&Bs[528u + bc + 4u], SB);
            let b3 = coopLoadT<coop_mat16x16<f16, B>>(&Bs[528u + bc + 6u], SB);
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
        if (k0 + 2u * BK < p.k) {
            As[sa + 0u] = ra;
            Bs[sb + 0u] = rb0;
            Bs[sb + sb8 + 0u] = rb1;
            if (k0 + 4u * BK < p.k) {
                ra = a8[ga + ka + 8u];
                rb0 = b8[gb + kb + 4u * kstep];
                rb1 = b8[gb + kb + 4u * kstep + g8];
            }
        }
        workgroupBarrier();
        ka += 4u;
        kb += 2u * kstep;
    }
    let r0 = row0 + (sg / 4u) * 64u;
    let cl = col0 + (sg % 4u) * 64u;
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
