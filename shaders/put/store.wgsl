// put = plain store: the destination element takes the value.
// Every kernel that writes through `put` binds its destination at binding 0. Destination buffers are
// padded to 16 bytes, so the vec4 form may write the pad past a length that is not a multiple of 4.
@group(0) @binding(0) var<storage, read_write> dst: array<vec4<f32>>;

// `put4` is one 16-byte access (the cooperative GEMM writes C in vec4s where it is; gemm_coop.wgsl).
const PUT4_WHOLE: bool = true;

fn put(i: u32, v: f32) {
    dst[i >> 2u][i & 3u] = v;
}

fn put4(i4: u32, v: vec4<f32>) {
    dst[i4] = v;
}

fn get4(i4: u32) -> vec4<f32> {
    return dst[i4];
}
