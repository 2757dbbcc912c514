// put = plain stores into an output bound as two windows of one buffer (as cas_windows.wgsl, which
// says why and where the window comes from), declared `@coherent` (MEMORY_DECORATION_COHERENT; SPIR-V
// Coherent): every load is served at the device's point of coherence, never from a stale line of
// another SM's L1, so plain 16-byte stores and loads serve where store_windows.wgsl needs one 4-byte
// atomic per element. No element is written by two workgroups at once: the fused epilogue gates every
// transfer into a chunk behind the chunk's own tiles and the transfers into it before it
// (shaders/fused/epilogue.wgsl), and its `settle` is the device-scope release the stores need.
@group(0) @binding(0) @coherent var<storage, read_write> dst: array<vec4<f32>>;
@group(0) @binding(7) @coherent var<storage, read_write> dst_hi: array<vec4<f32>>;

// `put4` is one 16-byte access (the cooperative GEMM writes C in vec4s where it is; gemm_coop.wgsl).
const PUT4_WHOLE: bool = true;

// A reduce is a load, an add and a store (the gate makes it exclusive).
const PLAIN_REDUCE: bool = true;

// The first window in vec4s: a whole number of them (fused_window aligns it to 256 bytes).
fn window4() -> u32 {
    return window() >> 2u;
}

fn put(i: u32, v: f32) {
    store_bits(i, bitcast<u32>(v));
}

fn reduce_into(i: u32, v: f32) {
    store_bits(i, bitcast<u32>(bitcast<f32>(load_bits(i)) + v));
}

fn load_bits(i: u32) -> u32 {
    return load4(i >> 2u)[i & 3u];
}

fn store_bits(i: u32, v: u32) {
    let w = window();
    if (i < w) {
        dst[i >> 2u][i & 3u] = bitcast<f32>(v);
    } else {
        let j = i - w;
        dst_hi[j >> 2u][j & 3u] = bitcast<f32>(v);
    }
}

fn put4(i4: u32, v: vec4<f32>) {
    store4(i4, bitcast<vec4<u32>>(v));
}

fn load4(i4: u32) -> vec4<u32> {
    let w = window4();
    if (i4 < w) {
        return bitcast<vec4<u32>>(dst[i4]);
    }
    return bitcast<vec4<u32>>(dst_hi[i4 - w]);
}

fn store4(i4: u32, v: vec4<u32>) {
    let w = window4();
    if (i4 < w) {
        dst[i4] = bitcast<vec4<f32>>(v);
    } else {
        dst_hi[i4 - w] = bitcast<vec4<f32>>(v);
    }
}

fn reduce4(i4: u32, v: vec4<u32>) {
    store4(i4, bitcast<vec4<u32>>(bitcast<vec4<f32>>(load4(i4)) + bitcast<vec4<f32>>(v)));
}
