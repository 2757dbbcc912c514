// put = atomic.wgsl's native f32 atomic adds into an output bound as two windows of one buffer,
// like cas_windows.wgsl (which says why and where the window comes from).
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
