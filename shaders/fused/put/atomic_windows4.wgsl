// put = atomic.wgsl's native f32 atomic adds into an output bound as four windows of two buffers,
// as store_windows4.wgsl lays them out.
@group(0) @binding(0) var<storage, read_write> dst: array<atomic<f32>>;
@group(0) @binding(7) var<storage, read_write> dst_hi: array<atomic<f32>>;
@group(0) @binding(9) var<storage, read_write> dst_2: array<atomic<f32>>;
@group(0) @binding(10) var<storage, read_write> dst_3: array<atomic<f32>>;

fn put(i: u32, v: f32) {
    let w = window();
    if (i < w) {
        seen |= bitcast<u32>(atomicAdd(&dst[i], v));
    } else if (i < 2u * w) {
        seen |= bitcast<u32>(atomicAdd(&dst_hi[i - w], v));
    } else if (i < 3u * w) {
        seen |= bitcast<u32>(atomicAdd(&dst_2[i - 2u * w], v));
    } else {
        seen |= bitcast<u32>(atomicAdd(&dst_3[i - 3u * w], v));
    }
}

fn load_bits(i: u32) -> u32 {
    let w = window();
    if (i < w) {
        return bitcast<u32>(atomicLoad(&dst[i]));
    } else if (i < 2u * w) {
        return bitcast<u32>(atomicLoad(&dst_hi[i - w]));
    } else if (i < 3u * w) {
        return bitcast<u32>(atomicLoad(&dst_2[i - 2u * w]));
    }
    return bitcast<u32>(atomicLoad(&dst_3[i - 3u * w]));
}

fn store_bits(i: u32, v: u32) {
    let w = window();
    if (i < w) {
        seen |= bitcast<u32>(atomicExchange(&dst[i], bitcast<f32>(v)));
    } else if (i < 2u * w) {
        seen |= bitcast<u32>(atomicExchange(&dst_hi[i - w], bitcast<f32>(v)));
    } else if (i < 3u * w) {
        seen |= bitcast<u32>(atomicExchange(&dst_2[i - 2u * w], bitcast<f32>(v)));
    } else {
        seen |= bitcast<u32>(atomicExchange(&dst_3[i - 3u * w], bitcast<f32>(v)));
    }
}
