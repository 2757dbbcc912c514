// Operands A and B as f32 (the f32 GEMM). B's words come from `b_word` (shaders/operands/f32_b.wgsl,
// one binding, or f32_b2.wgsl, two windows).
@group(0) @binding(2) var<storage, read> a: array<f32>;

fn a_elem(i: u32) -> f32 {
    return a[i];
}

fn b_elem(i: u32) -> f32 {
    return b_word(i);
}
