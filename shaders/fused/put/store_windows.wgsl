// put = store.wgsl's relaxed atomic stores into an output bound as two windows of one buffer (as
// cas_windows.wgsl, which says why and where the window comes from).
@group(0) @binding(0) var<storage, read_write> dst: array<atomic<u32>>;
@group(0) @binding(7) var<storage, read_write> dst_hi: array<atomic<u32>>;

fn store_bits(i: u32, v: u32) {
    let w = window();
    if (i < w) {
        atomicStore(&dst[i], v);
    } else {
        atomicStore(&dst_hi[i - w], v);
    }
}
