// put = plain (non-atomic) stores into an output bound as two windows of one buffer (fused mode's
// packed output of every rank, which may exceed one binding: core/src/lower/fused/packing.rs `windows`), split at
// element `p.c_split` (a multiple of 64: the window is whole 256-byte blocks). Only the watched GEMM
// writes through it (fused/watched.wgsl, `T3_FUSED_TRIGGER=spares`): it stores tiles as the
// tracked GEMM does, 16 bytes at a time, and never reads the output; the spares that move what it
// stored read it through the fused put's loads on their own views (served at the device's point of
// coherence), after the tile's counter increment, which the tracker's storageBarrier orders after
// these stores (a device-scope release: shaders/fused/epilogue.wgsl says why).
@group(0) @binding(0) var<storage, read_write> dst: array<vec4<f32>>;
@group(0) @binding(7) var<storage, read_write> dst_hi: array<vec4<f32>>;

// `put4` is one 16-byte store (the cooperative GEMM writes C in vec4s where it is; gemm_coop.wgsl).
const PUT4_WHOLE: bool = true;

fn put(i: u32, v: f32) {
    if (i < p.c_split) {
        dst[i >> 2u][i & 3u] = v;
    } else {
        let j = i - p.c_split;
        dst_hi[j >> 2u][j & 3u] = v;
    }
}

fn put4(i4: u32, v: vec4<f32>) {
    let w4 = p.c_split >> 2u;
    if (i4 < w4) {
        dst[i4] = v;
    } else {
        dst_hi[i4 - w4] = v;
    }
}
