// Tracked GEMM on cooperative matrices (tensor cores): C = A·B, f16 operands, f32 accumulation,
// row-major, any M, N, K >= 1 (`--dtype f16` where the adapter offers f16 x f16 -> f32 at 16x16x16
// with subgroups of 32). The job table, guards and tile lookup are shaders/gemm/jobs.wgsl, the
// operands shaders/operands/f16.wgsl, as for the SIMT kernel, so the two cannot disagree on layout.
//
// A workgroup of 256 invocations (8 subgroups of 32) computes a 128x128 tile of C. Subgroup s owns a
// 32x64 block (rows 32 * (s / 2), columns 64 * (s % 2)): 2x4 accumulator fragments of 16x16, held in
// named variables. K advances in slices of 32 through workgroup memory (A slice 128x32, B slice
// 32x128, rows padded by 8 halves against bank conflicts and to keep every fragment 16-byte aligned),
// the next slice prefetched into registers while the current one is multiplied.
//
// Epilogue: each fragment goes through a per-subgroup 16x16 f32 scratch in workgroup memory so that
// the output is written element-wise through `put` with the same bounds guards as the SIMT kernel
// (cooperative stores cannot be clipped at the matrix edge), then the tile bumps its chunk's tracker
// counter (`tile_done`).
enable f16;
enable wgpu_cooperative_matrix;

const BK: u32 = 32u;
// Row strides in halves: 80 and 272 bytes, multiples of 16.
const SA: u32 = 40u;
const SB: u32 = 136u;

var<workgroup> As: array<f16, 5120>;
var<workgroup> Bs: array<f16, 4352>;
var<workgroup> Cs: array<f32, 2048>;

// Four A elements (row, k..k+3): one vec4 load when the shape is aligned, else guarded scalars.
fn fetch_a(row: u32, k: u32, job: Job) -> vec4<f16> {
    if (p.aligned == 1u) {
        if (row < job.row1 && k < p.k) {
            return a[(job.a_off + (row - job.a_row_base) * p.lda + k) >> 2u];
        }
        return vec4<f16>(0.0h);
    }
    return vec4<f16>(vec4<f32>(
        load_a(row, k, job),
        load_a(row, k + 1u, job),
        load_a(row, k + 2u, job),
        load_a(row, k + 3u, job),
    ));
}

// Four B elements (k, col..col+3).
fn fetch_b(k: u32, col: u32, job: Job) -> vec4<f16> {
    if (p.aligned == 1u) {
        if (k < p.k && col < p.n) {
            return b[(job.b_off + k * p.ldb + col) >> 2u];
        }
        return vec4<f16>(0.0h);
    }
    return vec4<f16>(vec4<f32>(
        load_b(k, col, job),
        load_b(k, col + 1u, job),
        load_b(k, col + 2u, job),
        load_b(k, col + 3u, job),
    ));
}

// Invocation t's share of a slice, j = 0..3: A vec4 (row i / 8, k 4 * (i % 8)), B vec4 (k i / 32,
// col 4 * (i % 32)) with i = t + 256 j.
fn put_a(t: u32, j: u32, v: vec4<f16>) {
    let i = t + 256u * j;
    let o = (i / 8u) * SA + (i % 8u) * 4u;
    As[o] = v.x;
    As[o + 1u] = v.y;
    As[o + 2u] = v.z;
    As[o + 3u] = v.w;
}

fn put_b(t: u32, j: u32, v: vec4<f16>) {
    let i = t + 256u * j;
    let o = (i / 32u) * SB + (i % 32u) * 4u;
    Bs[o] = v.x;
    Bs[o + 1u] = v.y;
    Bs[o + 2u] = v.z;
    Bs[o + 3u] = v.w;
}

// Writes fragment `c` (tile rows row.., cols col..) through the subgroup's scratch: lane l puts row
// l / 2, columns 8 (l % 2) .. + 8.
fn emit(c: coop_mat16x16<f32, C>, sg: u32, lane: u32, row: u32, col: u32, job: Job) {
    coopStoreT(c, &Cs[sg * 256u], 16u);
    workgroupBarrier();
    let r = lane / 2u;
    let cc = (lane % 2u) * 8u;
    let o = sg * 256u + r * 16u + cc;
    put_row4(row + r, col + cc, vec4<f32>(Cs[o], Cs[o + 1u], Cs[o + 2u], Cs[o + 3u]), job);
    put_row4(row + r, col + cc + 4u, vec4<f32>(Cs[o + 4u], Cs[o + 5u], Cs[o + 6u], Cs[o + 7u]), job);
    workgroupBarrier();
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
    let sg = t / 32u;
    let lane = t % 32u;
    // Subgroup's block within the tile, in workgroup-memory offsets.
    let ar = (sg / 2u) * 32u * SA;
    let bc = (sg % 2u) * 64u;

    var ra0 = fetch_a(row0 + (t + 0u) / 8u, ((t + 0u) % 8u) * 4u, job);
    var ra1 = fetch_a(row0 + (t + 256u) / 8u, ((t + 256u) % 8u) * 4u, job);
    var ra2 = fetch_a(row0 + (t + 512u) / 8u, ((t + 512u) % 8u) * 4u, job);
    var ra3 = fetch_a(row0 + (t + 768u) / 8u, ((t + 768u) % 8u) * 4u, job);
    var rb0 = fetch_b((t + 0u) / 32u, col0 + ((t + 0u) % 32u) * 4u, job);
    var rb1 = fetch_b((t + 256u) / 32u, col0 + ((t + 256u) % 32u) * 4u, job);
    var rb2 = fetch_b((t + 512u) / 32u, col0 + ((t + 512u) % 32u) * 4u, job);
    var rb3 = fetch_b((t + 768u) / 32u, col0 + ((t + 768u) % 32u) * 4u, job);

    var c00 = coop_mat16x16<f32, C>();
    var c01 = coop_mat16x16<f32, C>();
    var c02 = coop_mat16x16<f32, C>();
    var c03 = coop_mat16x16<f32, C>();
    var c10 = coop_mat16x16<f32, C>();
    var c11 = coop_mat16x16<f32, C>();
    var c12 = coop_mat16x16<f32, C>();
    var c13 = coop_mat16x16<f32, C>();

    for (var k0 = 0u; k0 < p.k; k0 += BK) {
        put_a(t, 0u, ra0);
        put_a(t, 1u, ra1);
        put_a(t, 2u, ra2);
        put_a(t, 3u, ra3);
        put_b(t, 0u, rb0);
        put_b(t, 1u, rb1);
        put_b(t, 2u, rb2);
        put_b(t, 3u, rb3);
        workgroupBarrier();
        let kn = k0 + BK;
        if (kn < p.k) {
            ra0 = fetch_a(row0 + (t + 0u) / 8u, kn + ((t + 0u) % 8u) * 4u, job);
            ra1 = fetch_a(row0 + (t + 256u) / 8u, kn + ((t + 256u) % 8u) * 4u, job);
            ra2 = fetch_a(row0 + (t + 512u) / 8u, kn + ((t + 512u) % 8u) * 4u, job);
            ra3 = fetch_a(row0 + (t + 768u) / 8u, kn + ((t + 768u) % 8u) * 4u, job);
            rb0 = fetch_b(kn + (t + 0u) / 32u, col0 + ((t + 0u) % 32u) * 4u, job);
            rb1 = fetch_b(kn + (t + 256u) / 32u, col0 + ((t + 256u) % 32u) * 4u, job);
            rb2 = fetch_b(kn + (t + 512u) / 32u, col0 + ((t + 512u) % 32u) * 4u, job);
            rb3 = fetch_b(kn + (t + 768u) / 32u, col0 + ((t + 768u) % 32u) * 4u, job);
        }
        for (var kk = 0u; kk < BK; kk += 16u) {
            let a0 = coopLoadT<coop_mat16x16<f16, A>>(&As[ar + kk], SA);
            let a1 = coopLoadT<coop_mat16x16<f16, A>>(&As[ar + 16u * SA + kk], SA);
            let b0 = coopLoadT<coop_mat16x16<f16, B>>(&Bs[kk * SB + bc], SB);
            let b1 = coopLoadT<coop_mat16x16<f16, B>>(&Bs[kk * SB + bc + 16u], SB);
            let b2 = coopLoadT<coop_mat16x16<f16, B>>(&Bs[kk * SB + bc + 32u], SB);
            let b3 = coopLoadT<coop_mat16x16<f16, B>>(&Bs[kk * SB + bc + 48u], SB);
            c00 = coopMultiplyAdd(a0, b0, c00);
            c01 = coopMultiplyAdd(a0, b1, c01);
            c02 = coopMultiplyAdd(a0, b2, c02);
            c03 = coopMultiplyAdd(a0, b3, c03);
            c10 = coopMultiplyAdd(a1, b0, c10);
            c11 = coopMultiplyAdd(a1, b1, c11);
            c12 = coopMultiplyAdd(a1, b2, c12);
            c13 = coopMultiplyAdd(a1, b3, c13);
        }
        workgroupBarrier();
    }

    let r0 = row0 + (sg / 2u) * 32u;
    let cl = col0 + bc;
    emit(c00, sg, lane, r0, cl, job);
    emit(c01, sg, lane, r0, cl + 16u, job);
    emit(c02, sg, lane, r0, cl + 32u, job);
    emit(c03, sg, lane, r0, cl + 48u, job);
    emit(c10, sg, lane, r0 + 16u, cl, job);
    emit(c11, sg, lane, r0 + 16u, cl + 16u, job);
    emit(c12, sg, lane, r0 + 16u, cl + 32u, job);
    emit(c13, sg, lane, r0 + 16u, cl + 48u, job);

    tile_done(job.counter, t);
}
