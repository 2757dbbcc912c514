// put = coherent.wgsl's `@coherent` plain stores into an output bound as two windows of one buffer
// (as cas_windows.wgsl, which says why and where the window comes from).
@group(0) @binding(0) @coherent var<storage, read_write> dst: array<vec4<f32>>;
@group(0) @binding(7) @coherent var<storage, read_write> dst_hi: array<vec4<f32>>;

fn store_bits(i: u32, v: u32) {
    let w = window();
    if (i < w) {
        dst[i >> 2u][i & 3u] = bitcast<f32>(v);
    } else {
        let j = i - w;
        dst_hi[j >> 2u][j & 3u] = bitcast<f32>(v);
    }
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
