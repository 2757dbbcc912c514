// B as one binding of vec4<f16> words (every GEMM but fused mode's; src/compositions.rs).
enable f16;

@group(0) @binding(3) var<storage, read> b: array<vec4<f16>>;

fn b_word(i: u32) -> vec4<f16> {
    return b[i];
}
