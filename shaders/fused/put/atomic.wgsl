// Fused mode's put = update semantics with native f32 atomic adds (SHADER_FLOAT32_ATOMIC; as
// put/atomic.wgsl), whatever windows the output is bound in (atomic_windows.wgsl,
// atomic_windows4.wgsl: `put`, `load_bits`, `store_bits`). One atomic per element, where the CAS
// loop needs a load and a retry loop.
//
// Every add's and exchange's result is folded into `seen`, which the epilogue stores to workgroup
// memory before the barrier that precedes a counter increment (`settle`): so each invocation has
// waited for its atomics to be performed at the L2 before the increment can be issued. An add whose
// result is unused is a fire-and-forget reduction on NVIDIA (RED) that nothing waits for, and WGSL
// has no device-scope fence: a counter could then be seen complete before the data it counts.

// A reduce is one atomic add (`reduce_into`).
const PLAIN_REDUCE: bool = false;

// A transfer's reduce into element i: an add like a tile's.
fn reduce_into(i: u32, v: f32) {
    put(i, v);
}
