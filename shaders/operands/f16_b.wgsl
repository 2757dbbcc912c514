// B as one binding of vec4<f16> words (every GEMM but fused mode's; src/compositions.rs).
enable f16;

@group(0) @binding(3) var<storage, read> b: array<vec4<f16>>;

// One window: the cooperative kernel's copies per window of fused mode's packed B
// (shaders/fused/operands/f16_b2.wgsl) fold away.
const B_WINDOWS: bool = false;

fn b_word(i: u32) -> vec4<f16> {
    return b[i];
}

fn b_word_in(i: u32, window: u32) -> vec4<f16> {
    return b[i];
}
