// B as one binding of u32 words (every GEMM but fused mode's; src/compositions.rs).
@group(0) @binding(3) var<storage, read> b: array<u32>;

fn b_word(i: u32) -> u32 {
    return b[i];
}
