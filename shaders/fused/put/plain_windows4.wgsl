// put = plain_windows.wgsl's plain stores (the watched GEMM's) into an output bound as four windows
// of two buffers, as store_windows4.wgsl lays them out, each window `p.c_split` elements.
@group(0) @binding(0) var<storage, read_write> dst: array<vec4<f32>>;
@group(0) @binding(7) var<storage, read_write> dst_hi: array<vec4<f32>>;
@group(0) @binding(9) var<storage, read_write> dst_2: array<vec4<f32>>;
@group(0) @binding(10) var<storage, read_write> dst_3: array<vec4<f32>>;

const PUT4_WHOLE: bool = true;

fn put(i: u32, v: f32) {
    let w = p.c_split;
    if (i < w) {
        dst[i >> 2u][i & 3u] = v;
    } else if (i < 2u * w) {
        let j = i - w;
        dst_hi[j >> 2u][j & 3u] = v;
    } else if (i < 3u * w) {
        let j = i - 2u * w;
        dst_2[j >> 2u][j & 3u] = v;
    } else {
        let j = i - 3u * w;
        dst_3[j >> 2u][j & 3u] = v;
    }
}

fn put4(i4: u32, v: vec4<f32>) {
    let w = p.c_split >> 2u;
    if (i4 < w) {
        dst[i4] = v;
    } else if (i4 < 2u * w) {
        dst_hi[i4 - w] = v;
    } else if (i4 < 3u * w) {
        dst_2[i4 - 2u * w] = v;
    } else {
        dst_3[i4 - 3u * w] = v;
    }
}
