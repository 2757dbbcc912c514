// put = store.wgsl's relaxed atomic stores into an output bound as four windows of two buffers
// (fused mode's packed output past what two windows of one buffer hold: `OutLayout` in
// core/src/lower/fused/packing.rs): element i in window i / w at i % w, w = `window()`; windows 0
// and 1 are the first buffer's, 2 and 3 the second's. Composed only where the adapter binds ten
// storage buffers a stage.
@group(0) @binding(0) var<storage, read_write> dst: array<atomic<u32>>;
@group(0) @binding(7) var<storage, read_write> dst_hi: array<atomic<u32>>;
@group(0) @binding(9) var<storage, read_write> dst_2: array<atomic<u32>>;
@group(0) @binding(10) var<storage, read_write> dst_3: array<atomic<u32>>;

fn store_bits(i: u32, v: u32) {
    let w = window();
    if (i < w) {
        atomicStore(&dst[i], v);
    } else if (i < 2u * w) {
        atomicStore(&dst_hi[i - w], v);
    } else if (i < 3u * w) {
        atomicStore(&dst_2[i - 2u * w], v);
    } else {
        atomicStore(&dst_3[i - 3u * w], v);
    }
}
