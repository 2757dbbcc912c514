// Variant vec: the committed kernel's schedule (128x256 tiles, 8 subgroups of 64x64, 32-deep
// slices, one buffer, two barriers per slice, the next slice prefetched into registers) with 16-byte
// operand loads and 16-byte workgroup-memory stores: 6 loads and 6 stores per invocation per slice
// instead of 12 eight-byte loads and 48 two-byte stores. Workgroup memory is typed vec4<u32> (8 halves);
// fragments are loaded from it with strides in vec4 units (SPIR-V allows a cooperative load through a
// pointer to another type; the stride counts that type's elements).
enable f16;
enable wgpu_cooperative_matrix;

const BM: u32 = 128u;
const BN: u32 = 256u;
const BK: u32 = 32u;
// Row strides in vec4s: A rows of 32 + 8 halves, B rows of 256 + 8 (the pad against bank conflicts).
const SA: u32 = 5u;
const SB: u32 = 33u;

@group(0) @binding(2) var<storage, read> a8: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read> b8: array<vec4<u32>>;

var<workgroup> As: array<vec4<u32>, 640>;
var<workgroup> Bs: array<vec4<u32>, 1056>;
var<workgroup> Cs: array<f32, 4096>;

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
    let tile = tile_of(w, t);
    let job = tile.job;
    let row0 = tile.row0;
    let col0 = tile.col0;
    let sg = t / 32u;
    let lane = t % 32u;
    let ar = (sg / 4u) * 64u * SA;
    let bc = (sg % 4u) * 8u;
    // A slice 128x32 = 512 vec4s: item i -> row i / 4, halves 8 (i % 4); items t and t + 256.
    // B slice 32x256 = 1024 vec4s: item i -> k i / 32, halves 8 (i % 32); items t + 256 q.
    let ga = (job.a_off + (row0 + t / 4u - job.a_row_base) * p.lda + (t % 4u) * 8u) >> 3u;
    let ga1 = ga + 8u * p.lda;
    let gb = (job.b_off + (t / 32u) * p.ldb + col0 + (t % 32u) * 8u) >> 3u;
    let sa = (t / 4u) * SA + t % 4u;
    let sb = (t / 32u) * SB + t % 32u;
    var ra0 = a8[ga];
    var ra1 = a8[ga1];
    var rb0 = b8[gb];
    var rb1 = b8[gb + p.ldb];
    var rb2 = b8[gb + 2u * p.ldb];
    var rb3 = b8[gb + 3u * p.ldb];
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
    var ka = 0u;
    var kb = 0u;
    for (var k0 = 0u; k0 < p.k; k0 += BK) {
        As[sa] = ra0;
        As[sa + 64u * SA] = ra1;
        Bs[sb] = rb0;
        Bs[sb + 8u * SB] = rb1;
        Bs[sb + 16u * SB] = rb2;
        Bs[sb + 24u * SB] = rb3;
        workgroupBarrier();
        ka += 4u;
        kb += 4u * p.ldb;
        if (k0 + BK < p.k) {
            ra0 = a8[ga + ka];
            ra1 = a8[ga1 + ka];
            rb0 = b8[gb + kb];
            rb1 = b8[gb + kb + p.ldb];
            rb2 = b8[gb + kb + 2u * p.ldb];
            rb3 = b8[gb + kb + 3u * p.ldb];
        }
        {
            let a0 = coopLoadT<coop_mat16x16<f16, A>>(&As[ar + 0u * SA + 0u], SA);
            let a1 = coopLoadT<coop_mat16x16<f16, A>>(&As[ar + 16u * SA + 0u], SA);
            let a2 = coopLoadT<coop_mat16x16<f16, A>>(&As[ar + 32u * SA + 0u], SA);
            let a3 = coopLoadT<coop_mat16x16<f16, A>>(&As[ar + 48u * SA + 0u], SA);
            let b0 = coopLoadT<coop_mat16x16<f16, B>>(&Bs[0u * SB + bc + 0u], SB);
            let b1 = coopLoadT<coop_mat16x16<f16, B>>(&Bs[0u * SB + bc + 2u], SB);
            let b2 = coopLoadT<coop_mat16x16<f16, B>>(&Bs[0u * SB + bc + 4u], SB);
            let b3 = coopLoadT<coop_mat16x16<f16, B>>(&Bs[0u * SB + bc + 6u], SB);
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
            let a0 = coopLoadT<coop_mat16x16<f16, A>>(&As[ar + 0u * SA + 2u], SA);
            let a1 = coopLoadT<coop_mat16x16<f16, A>>(&As[ar + 16u * SA + 2u], SA);
            let a2 = coopLoadT<coop_mat16x16<f16, A>>(&As[ar + 32u * SA + 2u], SA);
            let a3 = coopLoadT<coop_mat16x16<f16, A>>(&As[ar + 48u * SA + 2u], SA);
            let b0 = coopLoadT<coop_mat16x16<f16, B>>(&Bs[16u * SB + bc + 0u], SB);
            let b1 = coopLoadT<coop_mat16x16<f16, B>>(&Bs[16u * SB + bc + 2u], SB);
            let b2 = coopLoadT<coop_mat16x16<f16, B>>(&Bs[16u * SB + bc + 4u], SB);
            let b3 = coopLoadT<coop_mat16x16<f16, B>>(&Bs[16u * SB + bc + 6u], SB);
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
