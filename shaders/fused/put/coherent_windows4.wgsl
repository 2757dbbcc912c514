// put = coherent.wgsl's `@coherent` plain stores into an output bound as four windows of two
// buffers, as store_windows4.wgsl lays them out.
@group(0) @binding(0) @coherent var<storage, read_write> dst: array<vec4<f32>>;
@group(0) @binding(7) @coherent var<storage, read_write> dst_hi: array<vec4<f32>>;
@group(0) @binding(9) @coherent var<storage, read_write> dst_2: array<vec4<f32>>;
@group(0) @binding(10) @coherent var<storage, read_write> dst_3: array<vec4<f32>>;

fn store_bits(i: u32, v: u32) {
    let w = window();
    let f = bitcast<f32>(v);
    if (i < w) {
        dst[i >> 2u][i & 3u] = f;
    } else if (i < 2u * w) {
        let j = i - w;
        dst_hi[j >> 2u][j & 3u] = f;
    } else if (i < 3u * w) {
        let j = i - 2u * w;
        dst_2[j >> 2u][j & 3u] = f;
    } else {
        let j = i - 3u * w;
        dst_3[j >> 2u][j & 3u] = f;
    }
}

fn load4(i4: u32) -> vec4<u32> {
    let w = window4();
    if (i4 < w) {
        return bitcast<vec4<u32>>(dst[i4]);
    } else if (i4 < 2u * w) {
        return bitcast<vec4<u32>>(dst_hi[i4 - w]);
    } else if (i4 < 3u * w) {
        return bitcast<vec4<u32>>(dst_2[i4 - 2u * w]);
    }
    return bitcast<vec4<u32>>(dst_3[i4 - 3u * w]);
}

fn store4(i4: u32, v: vec4<u32>) {
    let w = window4();
    let f = bitcast<vec4<f32>>(v);
    if (i4 < w) {
        dst[i4] = f;
    } else if (i4 < 2u * w) {
        dst_hi[i4 - w] = f;
    } else if (i4 < 3u * w) {
        dst_2[i4 - 2u * w] = f;
    } else {
        dst_3[i4 - 3u * w] = f;
    }
}
