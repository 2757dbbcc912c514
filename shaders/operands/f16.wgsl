// Operands A and B as f16 (`--dtype f16`; needs SHADER_F16). Bound as vec4s so that a kernel can read
// four at once: every row of A and B starts at a multiple of 32 elements (src/gemm.rs, `Padding`).
enable f16;

// B's vec4s come from `b_word` (f16_b.wgsl: one binding; f16_b2.wgsl: two windows).
@group(0) @binding(2) var<storage, read> a: array<vec4<f16>>;

fn a_elem(i: u32) -> f32 {
    return f32(a[i >> 2u][i & 3u]);
}

fn b_elem(i: u32) -> f32 {
    return f32(b_word(i >> 2u)[i & 3u]);
}
