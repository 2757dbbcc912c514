// Variant half16: the occupancy of `half` with the schedule of `db2`: 128 invocations (4 subgroups of
// 64x64) computing the host's 128x256 tile as two 128x128 halves one after the other, 16-deep slices
// double-buffered (one barrier per slice), registers holding the next two slices, 16-byte loads and
// stores. 28.5 KiB of workgroup memory, so workgroup memory allows three per SM and registers two.
enable f16;
enable wgpu_cooperative_matrix;

const BM: u32 = 128u;
const BN: u32 = 256u;
const BK: u32 = 16u;
// Row strides in vec4s: A rows of 16 + 8 halves, B rows of 128 + 8. A stage is 384 vec4s of A
// (128 rows) and 272 of B (16 rows).
const SA: u32 = 3u;
const SB: u32 = 17u;

@group(0) @binding(2) var<storage, read> a8: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read> b8: array<vec4<u32>>;

var<workgroup> As: array<vec4<u32>, 768>;
var<workgroup> Bs: array<vec4<u32>, 544>;
var<workgroup> Cs: array<f32, 2048>;

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

@compute @workgroup_size(128)
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
    let ar = (sg / 2u) * 64u * SA;
    let bc = (sg % 2u) * 8u;
    // A slice 128x16 = 256 vec4s: items t + 128 q -> row t / 2 + 64 q, halves 8 (t % 2).
    // B slice 16x128 = 256 vec4s: items t + 128 q -> k t / 16 + 8 q, halves 8 (t % 16).
    // Slice j starts 2j vec4s into A's rows and j * 2 * ldb vec4s into B.
    let ga = (job.a_off + (row0 + t / 2u - job.a_row_base) * p.lda + (t % 2u) * 8u) >> 3u;
    let g64 = 8u * p.lda;
    let kstep = 2u * p.ldb;
    let sa = (t / 2u) * SA + t % 2u;
    let sb = (t / 16u) * SB + t % 16u;
    for (var h = 0u; h < 2u; h += 1u) {
        let colh = col0 + h * 128u;
        let gb = (job.b_off + (t / 16u) * p.ldb + colh + (t % 16u) * 8u) >> 3u;
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
        // Slice 0 into stage 0; slice 1 (always inside the buffers) and slice 2 (where K > 32) ahead.
        var qa0 = a8[ga + 0u];
        var qa1 = a8[ga + g64 + 0u];
        var qb0 = b8[gb + 0u];
        var qb1 = b8[gb + p.ldb + 0u];
        As[sa + 0u] = qa0;
        As[sa + 192u + 0u] = qa1;
        Bs[sb + 0u] = qb0;
        Bs[sb + 136u + 0u] = qb1;
        qa0 = a8[ga + 2u];
        qa1 = a8[ga + g64 + 2u];
        qb0 = b8[gb + kstep];
        qb1 = b8[gb + p.ldb + kstep];
        var ra0 = vec4<u32>();
        var ra1 = vec4<u32>();
        var rb0 = vec4<u32>();
        var rb1 = vec4<u32>();
        if (2u * BK < p.k) {
            ra0 = a8[ga + 4u];
            ra1 = a8[ga + g64 + 4u];
            rb0 = b8[gb + 2u * kstep];
            rb1 = b8[gb + p.ldb + 2u * kstep];
        }
        workgroupBarrier();
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
            As[sa + 384u] = qa0;
            As[sa + 192u + 384u] = qa1;
            Bs[sb + 272u] = qb0;
            Bs[sb + 136u + 272u] = qb1;
            if (k0 + 2u * BK < p.k) {
                qa0 = a8[ga + ka + 6u];
                qa1 = a8[ga + g64 + ka + 6u];
                qb0 = b8[gb + kb + 3u * kstep];
                qb1 = b8[gb + p.ldb + kb + 3u * kstep];
            }
            workgroupBarrier();
            {
                let a0 = coopLoadT<coop_mat16x16<f16, A>>(&As[384u + ar + 0u * SA], SA);
                let a1 = coopLoadT<coop_mat16x16<f16, A>>(&As[384u + ar + 16u * SA], SA);
                let a2 = coopLoadT<coop_mat16x16<f16, A>>(&As[384u + ar + 32u * SA], SA);
                let a3 = coopLoadT<coop_mat16x16<f16, A>>(&As[384u + ar + 48u * SA], SA);
                let b0 = coopLoadT<coop_mat16x16<f16, B>>(&Bs[272u + bc + 0u], SB);
                let b1 = coopLoadT<coop_mat16x16<f16, B>>(&Bs[272u + bc + 2u], SB);
                let b2 = coopLoadT<coop_mat16x16<f16, B>>(&Bs[272u + bc + 4u], SB);
                let b3 = coopLoadT<coop_mat16x16<f16, B>>(&Bs[272u + bc + 6u], SB);
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
                As[sa + 0u] = ra0;
                As[sa + 192u + 0u] = ra1;
                Bs[sb + 0u] = rb0;
                Bs[sb + 136u + 0u] = rb1;
                if (k0 + 4u * BK < p.k) {
                    ra0 = a8[ga + ka + 8u];
                    ra1 = a8[ga + g64 + ka + 8u];
                    rb0 = b8[gb + kb + 4u * kstep];
                    rb1 = b8[gb + p.ldb + kb + 4u * kstep];
                }
            }
            workgroupBarrier();
            ka += 4u;
            kb += 2u * kstep;
        }
        let r0 = row0 + (sg / 2u) * 64u;
        let cl = colh + (sg % 2u) * 64u;
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
    }
    tile_done(job.counter, t);
}
