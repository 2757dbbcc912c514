// Operands A and B as f32 (the f32 GEMM).
@group(0) @binding(2) var<storage, read> a: array<f32>;
@group(0) @binding(3) var<storage, read> b: array<f32>;

fn a_elem(i: u32) -> f32 {
    return a[i];
}

fn b_elem(i: u32) -> f32 {
    return b[i];
}
