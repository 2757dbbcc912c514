// Output elements as bfloat16 (the top half of an f32's bits), two to a u32 word (element 2q in the
// low half). Packing rounds to nearest, ties to even; a NaN stays a NaN. Unpacking is exact.

fn bf16_bits(x: f32) -> u32 {
    let b = bitcast<u32>(x);
    if ((b & 0x7fffffffu) > 0x7f800000u) {
        return (b >> 16u) | 0x40u;
    }
    return (b + 0x7fffu + ((b >> 16u) & 1u)) >> 16u;
}

fn pack2(v: vec2<f32>) -> u32 {
    return bf16_bits(v.x) | (bf16_bits(v.y) << 16u);
}

fn unpack2(w: u32) -> vec2<f32> {
    return vec2<f32>(bitcast<f32>(w << 16u), bitcast<f32>(w & 0xffff0000u));
}
