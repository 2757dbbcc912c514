// put = update semantics with native f32 atomic adds (SHADER_FLOAT32_ATOMIC; as atomic.wgsl) into an
// output bound as two windows of one buffer, like cas_windows.wgsl (which says why and where the
// window comes from). One atomic per element, where the CAS loop needs a load and a retry loop.
//
// Every add's and exchange's result is folded into `seen`, which the epilogue stores to workgroup
// memory before the barrier that precedes a counter increment (`settle`): so each invocation has
// waited for its atomics to be performed at the L2 before the increment can be issued. An add whose
// result is unused is a fire-and-forget reduction on NVIDIA (RED) that nothing waits for, and WGSL
// has no device-scope fence: a counter could then be seen complete before the data it counts.
@group(0) @binding(0) var<storage, read_write> dst: array<atomic<f32>>;
@group(0) @binding(7) var<storage, read_write> dst_hi: array<atomic<f32>>;

fn put(i: u32, v: f32) {
    let w = window();
    if (i < w) {
        seen |= bitcast<u32>(atomicAdd(&dst[i], v));
    } else {
        seen |= bitcast<u32>(atomicAdd(&dst_hi[i - w], v));
    }
}

// A reduce is one atomic add (`reduce_into`).
const PLAIN_REDUCE: bool = false;

// A transfer's reduce into element i: an add like a tile's.
fn reduce_into(i: u32, v: f32) {
    put(i, v);
}

fn load_bits(i: u32) -> u32 {
    let w = window();
    if (i < w) {
        return bitcast<u32>(atomicLoad(&dst[i]));
    }
    return bitcast<u32>(atomicLoad(&dst_hi[i - w]));
}

fn store_bits(i: u32, v: u32) {
    let w = window();
    if (i < w) {
        seen |= bitcast<u32>(atomicExchange(&dst[i], bitcast<f32>(v)));
    } else {
        seen |= bitcast<u32>(atomicExchange(&dst_hi[i - w], bitcast<f32>(v)));
    }
}
