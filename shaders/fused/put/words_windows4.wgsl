// The loads of a windowed put whose output is u32 atomics in four windows of two buffers: those of
// store_windows4.wgsl and cas_windows4.wgsl, which declare the windows (composed beside
// either: src/compositions.rs).

fn load_bits(i: u32) -> u32 {
    let w = window();
    if (i < w) {
        return atomicLoad(&dst[i]);
    } else if (i < 2u * w) {
        return atomicLoad(&dst_hi[i - w]);
    } else if (i < 3u * w) {
        return atomicLoad(&dst_2[i - 2u * w]);
    }
    return atomicLoad(&dst_3[i - 3u * w]);
}
