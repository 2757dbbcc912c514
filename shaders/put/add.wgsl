// put = read-modify-write add. Correct only where no other writer touches the element inside the same
// dispatch; wgpu's barriers between dispatches that write one buffer make that so in every mode but fused.
@group(0) @binding(0) var<storage, read_write> dst: array<vec4<f32>>;

// `put4` is one 16-byte access (the cooperative GEMM writes C in vec4s where it is; gemm_coop.wgsl).
const PUT4_WHOLE: bool = true;

fn put(i: u32, v: f32) {
    dst[i >> 2u][i & 3u] += v;
}

fn put4(i4: u32, v: vec4<f32>) {
    dst[i4] += v;
}

fn get4(i4: u32) -> vec4<f32> {
    return dst[i4];
}
