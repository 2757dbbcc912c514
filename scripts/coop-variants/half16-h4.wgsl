// Variant half16-h4: half16 (128 invocations, the tile as two 128x128 halves, 16-deep slices
// double-buffered, loads two slices ahead; two workgroups per SM) with workgroup memory typed
// vec4<f16>: 8-byte loads and stores, no vec4<u32>, no second variables on the operand bindings.
// Grouped tile order, as committed.
enable f16;
enable wgpu_cooperative_matrix;

const BM: u32 = 128u;
const BN: u32 = 256u;
const BK: u32 = 16u;
// Row strides in vec4<f16>s (4 halves): A rows of 16 + 8 halves, B rows of 128 + 8. A stage is
// 768 of them (128 rows of A), a B stage 544 (16 rows).
const SA: u32 = 6u;
const SB: u32 = 34u;

var<workgroup> As: array<vec4<f16>, 1536>;
var<workgroup> Bs: array<vec4<f16>, 1088>;
var<workgroup> Cs: array<f32, 2048>;

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

const INVOCATIONS: u32 = 128u;

fn compute_tile(w: u32, t: u32) {
    let tile = grouped(tile_of(w, t), w);
    let job = tile.job;
    let row0 = tile.row0;
    let col0 = tile.col0;
    let sg = t / 32u;
    let lane = t % 32u;
    let ar = (sg / 2u) * 64u * SA;
    let bc = (sg % 2u) * 16u;
    // A slice 128x16: items t + 128 q -> row t / 4 + 32 q, halves 4 (t % 4).
    // B slice 16x128: items t + 128 q -> k t / 32 + 4 q, halves 4 (t % 32).
    // Slice j starts 4j elements into A's rows and j * kstep into B.
    let ga = (job.a_off + (row0 + t / 4u - job.a_row_base) * p.lda + (t % 4u) * 4u) >> 2u;
    let kstep = 4u * p.ldb;
    let sa = (t / 4u) * SA + t % 4u;
    let sb = (t / 32u) * SB + t % 32u;
    for (var h = 0u; h < 2u; h += 1u) {
        let colh = col0 + h * 128u;
        let gb = (job.b_off + (t / 32u) * p.ldb + colh + (t % 32u) * 4u) >> 2u;
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
        // Slice 0 into stage 0; slices 1 and 2 (where K > 32) into registers, as in db2.
        var qa0 = a[ga + 0u];
        var qa1 = a[ga + 8u * p.lda + 0u];
        var qa2 = a[ga + 16u * p.lda + 0u];
        var qa3 = a[ga + 24u * p.lda + 0u];
        var qb0 = b[gb + 0u];
        var qb1 = b[gb + 1u * p.ldb + 0u];
        var qb2 = b[gb + 2u * p.ldb + 0u];
        var qb3 = b[gb + 3u * p.ldb + 0u];
        As[sa + 0u] = qa0;
        As[sa + 192u] = qa1;
        As[sa + 384u] = qa2;
        As[sa + 576u] = qa3;
        Bs[sb + 0u] = qb0;
        Bs[sb + 136u] = qb1;
        Bs[sb + 272u] = qb2;
        Bs[sb + 408u] = qb3;
        qa0 = a[ga + 4u];
        qa1 = a[ga + 8u * p.lda + 4u];
        qa2 = a[ga + 16u * p.lda + 4u];
        qa3 = a[ga + 24u * p.lda + 4u];
        qb0 = b[gb + kstep];
        qb1 = b[gb + 1u * p.ldb + kstep];
        qb2 = b[gb + 2u * p.ldb + kstep];
        qb3 = b[gb + 3u * p.ldb + kstep];
        var ra0 = vec4<f16>();
        var ra1 = vec4<f16>();
        var ra2 = vec4<f16>();
        var ra3 = vec4<f16>();
        var rb0 = vec4<f16>();
        var rb1 = vec4<f16>();
        var rb2 = vec4<f16>();
        var rb3 = vec4<f16>();
        if (2u * BK < p.k) {
            ra0 = a[ga + 8u];
            ra1 = a[ga + 8u * p.lda + 8u];
            ra2 = a[ga + 16u * p.lda + 8u];
            ra3 = a[ga + 24u * p.lda + 8u];
            rb0 = b[gb + 2u * kstep];
            rb1 = b[gb + 1u * p.ldb + 2u * kstep];
            rb2 = b[gb + 2u * p.ldb + 2u * kstep];
            rb3 = b[gb + 3u * p.ldb + 2u * kstep];
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
                let b1 = coopLoadT<coop_mat16x16<f16, B>>(&Bs[0u + bc + 4u], SB);
                let b2 = coopLoadT<coop_mat16x16<f16, B>>(&Bs[0u + bc + 8u], SB);
                let b3 = coopLoadT<coop_mat16x16<f16, B>>(&Bs[0u + bc + 12u], SB);
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
            As[sa + 768u] = qa0;
            As[sa + 960u] = qa1;
            As[sa + 1152u] = qa2;
            As[sa + 1344u] = qa3;
            Bs[sb + 544u] = qb0;
            Bs[sb + 680u] = qb1;
            Bs[sb + 816u] = qb2;
            Bs[sb + 952u] = qb3;
            if (k0 + 2u * BK < p.k) {
                qa0 = a[ga + ka + 12u];
                qa1 = a[ga + 8u * p.lda + ka + 12u];
                qa2 = a[ga + 16u * p.lda + ka + 12u];
                qa3 = a[ga + 24u * p.lda + ka + 12u];
                qb0 = b[gb + kb + 3u * kstep];
                qb1 = b[gb + 1u * p.ldb + kb + 3u * kstep];
                qb2 = b[gb + 2u * p.ldb + kb + 3u * kstep];
                qb3 = b[gb + 3u * p.ldb + kb + 3u * kstep];
            }
            workgroupBarrier();
            {
                let a0 = coopLoadT<coop_mat16x16<f16, A>>(&As[768u + ar + 0u * SA], SA);
                let a1 = coopLoadT<coop_mat16x16<f16, A>>(&As[768u + ar + 16u * SA], SA);
                let a2 = coopLoadT<coop_mat16x16<f16, A>>(&As[768u + ar + 32u * SA], SA);
                let a3 = coopLoadT<coop_mat16x16<f16, A>>(&As[768u + ar + 48u * SA], SA);
                let b0 = coopLoadT<coop_mat16x16<f16, B>>(&Bs[544u + bc + 0u], SB);
                let b1 = coopLoadT<coop_mat16x16<f16, B>>(&Bs[544u + bc + 4u], SB);
                let b2 = coopLoadT<coop_mat16x16<f16, B>>(&Bs[544u + bc + 8u], SB);
                let b3 = coopLoadT<coop_mat16x16<f16, B>>(&Bs[544u + bc + 12u], SB);
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
                As[sa + 192u] = ra1;
                As[sa + 384u] = ra2;
                As[sa + 576u] = ra3;
                Bs[sb + 0u] = rb0;
                Bs[sb + 136u] = rb1;
                Bs[sb + 272u] = rb2;
                Bs[sb + 408u] = rb3;
                if (k0 + 4u * BK < p.k) {
                    ra0 = a[ga + ka + 16u];
                    ra1 = a[ga + 8u * p.lda + ka + 16u];
                    ra2 = a[ga + 16u * p.lda + ka + 16u];
                    ra3 = a[ga + 24u * p.lda + ka + 16u];
                    rb0 = b[gb + kb + 4u * kstep];
                    rb1 = b[gb + 1u * p.ldb + kb + 4u * kstep];
                    rb2 = b[gb + 2u * p.ldb + kb + 4u * kstep];
                    rb3 = b[gb + 3u * p.ldb + kb + 4u * kstep];
                }
            }
            workgroupBarrier();
            ka += 8u;
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
