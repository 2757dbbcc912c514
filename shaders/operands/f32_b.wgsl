// B as one binding of f32 words (every GEMM but fused mode's; src/compositions.rs).
@group(0) @binding(3) var<storage, read> b: array<f32>;

fn b_word(i: u32) -> f32 {
    return b[i];
}
