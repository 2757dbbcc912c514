#version 450
// The tracked f16 GEMM on NVIDIA's cooperative_matrix2 (GL_NV_cooperative_matrix2): workgroup-scope
// matrices loaded from global memory with tensor addressing, which lets the driver stage and
// pipeline the tiles itself (what WGSL cannot express). GLSL because no WGSL front end knows the
// extension: compiled to shaders/gemm_coopmat2.spv by scripts/coopmat2/spirv.sh (pinned glslang),
// loaded through wgpu's SPIR-V passthrough on a device opened with the extension (src/coopmat2.rs).
//
// Same contract as the WGSL GEMM kernels (shaders/gemm/jobs.wgsl, shaders/epilogue/track.wgsl): the
// same bindings, params and job table, 128 x 256 tiles in the cooperative kernel's grouped order,
// operands padded as `gemm::Padding` gives them (K to whole 32-deep slices, B's columns to whole
// tiles, A a tile of spare rows), so every load is unguarded; the output is clipped to the job's rows
// and N columns by a clamped tensor layout. Then the tracker: every invocation's stores happen before
// the one increment of the chunk's counter.

#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_KHR_memory_scope_semantics : enable
#extension GL_KHR_cooperative_matrix : enable
#extension GL_NV_cooperative_matrix2 : enable
#extension GL_EXT_control_flow_attributes : enable

layout(local_size_x = 256, local_size_y = 1, local_size_z = 1) in;

// 0: the untracked GEMM that the tracker overhead is measured against (a build of its own, -DTRACK=0:
// wgpu passes no pipeline constants to passthrough SPIR-V).
#ifndef TRACK
#define TRACK 1
#endif

// The tile (BN is `Engine::tile_n`, checked against the host by a test) and the K depth of one
// load (BK: the padding holds K to whole 32-deep slices). A main-loop step loads STEP deep, UNROLL
// steps unrolled so that the driver sees the next loads while the current products run (as
// llama.cpp's mul_mm_cm2); a shorter tail ends the loop. STEP and UNROLL are build macros, so that
// one device run can time variants (scripts/coopmat2/spirv.sh builds the defaults).
const uint BM = 128;
const uint BN = 256;
const uint BK = 32;
// Defaults: the fastest of the variants timed at 8192^3 on an H200 (BENCHMARKS.md).
#ifndef STEP
#define STEP 32
#endif
#ifndef UNROLL
#define UNROLL 32
#endif
// Tile rows consecutive workgroups walk down before moving one tile column right (L2 reuse), as
// gemm_coop.wgsl's GROUP.
const uint GROUP = 8;

// Host twin: `GemmParams` in src/gemm.rs (std140: scalars packed at 4-byte offsets).
layout(std140, set = 0, binding = 1) uniform Params {
    uint m;
    uint n;
    uint k;
    uint lda;
    uint ldb;
    uint ldc;
    uint tiles_n;
    uint job_base;
    uint n_jobs;
    uint total_wg;
    uint dispatch_x;
    uint b_split;
    uint grid_wg;
    uint c_split;
} p;

// Host twin: `Job` in src/gemm.rs.
struct Job {
    uint row0;
    uint row1;
    uint wg_start;
    uint counter;
    uint a_off;
    uint b_off;
    uint c_off;
    uint a_row_base;
    uint c_row_base;
    uint land;
    uint pad1;
    uint pad2;
};

layout(std430, set = 0, binding = 0) writeonly buffer C { float c[]; };
layout(std430, set = 0, binding = 2) readonly buffer A { float16_t a[]; };
layout(std430, set = 0, binding = 3) readonly buffer B { float16_t b[]; };
layout(std430, set = 0, binding = 4) buffer Counters { uint counters[]; };
layout(std430, set = 0, binding = 5) readonly buffer Jobs { Job jobs[]; };

// The job holding linear workgroup `w`: the last job whose wg_start <= w (binary search).
uint find_job(uint w) {
    uint lo = p.job_base;
    uint hi = p.job_base + p.n_jobs - 1u;
    while (lo < hi) {
        uint mid = (lo + hi + 1u) / 2u;
        if (jobs[mid].wg_start <= w) {
            lo = mid;
        } else {
            hi = mid - 1u;
        }
    }
    return lo;
}

void main() {
    uint w = gl_WorkGroupID.x + gl_WorkGroupID.y * p.dispatch_x;
    // No spare workgroups: only the tracked GEMM's own dispatch runs this kernel.
    if (w >= p.total_wg) {
        return;
    }
    Job job = jobs[find_job(w)];
    // Grouped tile order inside the job (gemm_coop.wgsl `grouped`).
    uint local_w = w - job.wg_start;
    uint rows = (job.row1 - job.row0 + BM - 1u) / BM;
    uint span = GROUP * p.tiles_n;
    uint first = (local_w / span) * GROUP;
    uint h = min(rows - first, GROUP);
    uint i = local_w % span;
    uint row0 = job.row0 + (first + i % h) * BM;
    uint col0 = (i / h) * BN;

    // K as the padding holds it: whole 32-deep slices. The strides and A's and B's offsets are
    // multiples of 32 elements (`gemm::Padding`: lda of K_SLICE, ldb of whole tiles, offsets whole
    // rows of them); masked so that the driver knows (aligned, wide loads), as llama.cpp does.
    uint kp = (p.k + BK - 1u) / BK * BK;
    uint lda = p.lda & ~31u;
    uint ldb = p.ldb & ~31u;
    tensorLayoutNV<2> la = createTensorLayoutNV(2);
    la = setTensorLayoutDimensionNV(la, BM, kp);
    la = setTensorLayoutStrideNV(la, lda, 1);
    tensorLayoutNV<2> lb = createTensorLayoutNV(2);
    lb = setTensorLayoutDimensionNV(lb, kp, ldb);
    lb = setTensorLayoutStrideNV(lb, ldb, 1);
    tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> lc =
        createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
    lc = setTensorLayoutDimensionNV(lc, min(job.row1 - row0, BM), p.n);
    lc = setTensorLayoutStrideNV(lc, p.ldc, 1);
    uint a0 = (job.a_off + (row0 - job.a_row_base) * lda) & ~31u;
    uint b0 = job.b_off & ~31u;
    uint c0 = job.c_off + (row0 - job.c_row_base) * p.ldc;

    coopmat<float, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator> acc =
        coopmat<float, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator>(0.0);
    uint kk = 0u;
    for (; kk + STEP * UNROLL <= kp;) {
        [[unroll]] for (uint j = 0u; j < UNROLL; ++j) {
            coopmat<float16_t, gl_ScopeWorkgroup, BM, STEP, gl_MatrixUseA> ma;
            coopmat<float16_t, gl_ScopeWorkgroup, STEP, BN, gl_MatrixUseB> mb;
            coopMatLoadTensorNV(ma, a, a0, sliceTensorLayoutNV(la, 0, BM, kk, STEP));
            coopMatLoadTensorNV(mb, b, b0, sliceTensorLayoutNV(lb, kk, STEP, col0, BN));
            acc = coopMatMulAdd(ma, mb, acc);
            kk += STEP;
        }
    }
    for (; kk + STEP <= kp; kk += STEP) {
        coopmat<float16_t, gl_ScopeWorkgroup, BM, STEP, gl_MatrixUseA> ma;
        coopmat<float16_t, gl_ScopeWorkgroup, STEP, BN, gl_MatrixUseB> mb;
        coopMatLoadTensorNV(ma, a, a0, sliceTensorLayoutNV(la, 0, BM, kk, STEP));
        coopMatLoadTensorNV(mb, b, b0, sliceTensorLayoutNV(lb, kk, STEP, col0, BN));
        acc = coopMatMulAdd(ma, mb, acc);
    }
    for (; kk < kp; kk += BK) {
        coopmat<float16_t, gl_ScopeWorkgroup, BM, BK, gl_MatrixUseA> ma;
        coopmat<float16_t, gl_ScopeWorkgroup, BK, BN, gl_MatrixUseB> mb;
        coopMatLoadTensorNV(ma, a, a0, sliceTensorLayoutNV(la, 0, BM, kk, BK));
        coopMatLoadTensorNV(mb, b, b0, sliceTensorLayoutNV(lb, kk, BK, col0, BN));
        acc = coopMatMulAdd(ma, mb, acc);
    }
    coopMatStoreTensorNV(acc, c, c0, sliceTensorLayoutNV(lc, 0, BM, col0, BN));

#if TRACK
    {
        // The tile's stores by every invocation before its one count (storageBarrier in WGSL).
        memoryBarrierBuffer();
        barrier();
        if (gl_LocalInvocationIndex == 0u) {
            atomicAdd(counters[job.counter], 1u);
        }
    }
#endif
}
