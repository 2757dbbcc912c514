// Operands A and B as bf16 (`--dtype bf16`): the top 16 bits of an f32, two to a u32, element 2i in
// the low half (little-endian, as core/src/shapes.rs `Dtype::encode` packs them). Widening is a shift, so
// the SIMT kernel multiplies exactly the f32 the host rounded to; no shader feature is needed.
// B's words come from `b_word` (bf16_b.wgsl: one binding; bf16_b2.wgsl: two windows).
@group(0) @binding(2) var<storage, read> a: array<u32>;

fn bf16_at(w: u32, i: u32) -> f32 {
    return bitcast<f32>(select(w << 16u, w & 0xffff0000u, (i & 1u) == 1u));
}

fn a_elem(i: u32) -> f32 {
    return bf16_at(a[i >> 1u], i);
}

fn b_elem(i: u32) -> f32 {
    return bf16_at(b_word(i >> 1u), i);
}
