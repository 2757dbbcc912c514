// The 16-byte forms of a windowed put whose output is 4-byte atomics (store, cas, atomic:
// *_windows.wgsl and *_windows4.wgsl; composed after it, src/compositions.rs): four element
// operations, their loads issued before any is used, so a transfer keeps 16 bytes in flight per
// invocation as a step workgroup's vec4 does (shaders/step.wgsl).
// `put4` is four element operations (the cooperative GEMM writes C element by element, a row of
// adjacent lanes per instruction, where it is; gemm_coop.wgsl).
const PUT4_WHOLE: bool = false;

fn put4(i4: u32, v: vec4<f32>) {
    put(i4 * 4u, v.x);
    put(i4 * 4u + 1u, v.y);
    put(i4 * 4u + 2u, v.z);
    put(i4 * 4u + 3u, v.w);
}

fn load4(i4: u32) -> vec4<u32> {
    let i = i4 * 4u;
    return vec4<u32>(load_bits(i), load_bits(i + 1u), load_bits(i + 2u), load_bits(i + 3u));
}

fn store4(i4: u32, v: vec4<u32>) {
    let i = i4 * 4u;
    store_bits(i, v.x);
    store_bits(i + 1u, v.y);
    store_bits(i + 2u, v.z);
    store_bits(i + 3u, v.w);
}

fn reduce4(i4: u32, v: vec4<u32>) {
    let f = bitcast<vec4<f32>>(v);
    if (PLAIN_REDUCE) {
        store4(i4, bitcast<vec4<u32>>(bitcast<vec4<f32>>(load4(i4)) + f));
    } else {
        let i = i4 * 4u;
        reduce_into(i, f.x);
        reduce_into(i + 1u, f.y);
        reduce_into(i + 2u, f.z);
        reduce_into(i + 3u, f.w);
    }
}
