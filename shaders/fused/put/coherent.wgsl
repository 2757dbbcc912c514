// Fused mode's put = plain stores into an output declared `@coherent` (MEMORY_DECORATION_COHERENT;
// SPIR-V Coherent), whatever windows it is bound in (coherent_windows.wgsl, coherent_windows4.wgsl:
// `store_bits`, `load4`, `store4`): every load is served at the device's point of coherence, never
// from a stale line of another SM's L1, so plain 16-byte stores and loads serve where store.wgsl
// needs one 4-byte atomic per element. No element is written by two workgroups at once: the fused
// epilogue gates every transfer into a chunk behind the chunk's own tiles and the transfers into it
// before it (shaders/fused/epilogue.wgsl), and its `settle` is the device-scope release the stores
// need.

// `put4` is one 16-byte access (the cooperative GEMM writes C in vec4s where it is;
// gemm_coop.wgsl).
const PUT4_WHOLE: bool = true;

// A reduce is a load, an add and a store (the gate makes it exclusive).
const PLAIN_REDUCE: bool = true;

// A window in vec4s: a whole number of them (fused_window aligns it to 256 bytes).
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

fn put4(i4: u32, v: vec4<f32>) {
    store4(i4, bitcast<vec4<u32>>(v));
}

fn reduce4(i4: u32, v: vec4<u32>) {
    store4(i4, bitcast<vec4<u32>>(bitcast<vec4<f32>>(load4(i4)) + bitcast<vec4<f32>>(v)));
}
