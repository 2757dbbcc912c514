// Fused mode's spare workgroups as a pipeline of their own (core/src/lower/fused.rs, `SpareDispatch::Own`):
// dispatched right after the fused GEMM in the same pass, or right before it (`T3_FUSED_SPARES_AT`,
// the default beside the SIMT GEMM), bound to views of their own of the memory the GEMM writes
// (src/alias.rs), so wgpu puts no barrier between the two and the spares run beside the GEMM's
// workgroups from its start (before it: they take their slots first, and a GEMM of a workgroup per
// tile fills the rest; they only poll counters the GEMM bumps, and give up after a bounded budget,
// so a GEMM left no room still runs once they have), where those inside the GEMM's dispatch (`spare_wg` past `tile_stride()`
// in shaders/gemm/jobs.wgsl) start only once every GEMM workgroup has been issued and take a GEMM
// workgroup's registers and workgroup memory (one per SM). Everything they do
// is the fused epilogue's `spare_wg` (shaders/fused/epilogue.wgsl, which says why it cannot
// deadlock): claim pieces of published transfers, move them, bump counters, poll (bounded) for more.
//
// The bindings are the fused GEMM's (one bind group layout for both); those only the GEMM reads are
// declared for the layout and never touched.
@group(0) @binding(1) var<uniform> unused_p: vec4<u32>;
@group(0) @binding(2) var<storage, read> unused_a: array<u32>;
@group(0) @binding(3) var<storage, read> unused_b: array<u32>;
@group(0) @binding(4) var<storage, read_write> counters: array<atomic<u32>>;
@group(0) @binding(5) var<storage, read> unused_jobs: array<u32>;
@group(0) @binding(8) var<storage, read> unused_b_hi: array<u32>;

// 64 invocations: a cooperative GEMM workgroup holds 61440 of an SM's 65536 registers (240 x 256),
// so a spare fits beside it only at <= 64 registers for 64 invocations (16 for 256). A piece is
// still 256 lanes wide (`WG`): each invocation walks four of them (`do_piece`).
const INVOCATIONS: u32 = 64u;

@compute @workgroup_size(INVOCATIONS)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) t: u32) {
    spare_wg(t, wid.x);
}
