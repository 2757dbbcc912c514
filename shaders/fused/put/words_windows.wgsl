// The loads of a windowed put whose output is u32 atomics in two windows of one buffer: those of
// store_windows.wgsl and cas_windows.wgsl, which declare the windows (composed beside
// either: src/compositions.rs).

fn load_bits(i: u32) -> u32 {
    let w = window();
    if (i < w) {
        return atomicLoad(&dst[i]);
    }
    return atomicLoad(&dst_hi[i - w]);
}
