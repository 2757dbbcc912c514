// Output elements as IEEE binary16, two to a u32 word (element 2q in the low half). Packing rounds to
// nearest, ties to even, by hand: WGSL's pack2x16float may return either neighbour of a value, and the
// reference check's tolerance (core/src/reference.rs, `Rounding`) assumes one rounding of at most half an
// ulp. Unpacking is exact, subnormals included (no flush).

fn half_bits(x: f32) -> u32 {
    let b = bitcast<u32>(x);
    let sign = (b >> 16u) & 0x8000u;
    let a = b & 0x7fffffffu;
    if (a > 0x7f800000u) {
        return sign | 0x7e00u;
    }
    // 65520 and above round to infinity.
    if (a >= 0x477ff000u) {
        return sign | 0x7c00u;
    }
    // Normal halves (2^-14 and above): rebias the exponent, round the 13 dropped bits to even.
    if (a >= 0x38800000u) {
        let r = a - 0x38000000u;
        return sign | ((r + 0xfffu + ((r >> 13u) & 1u)) >> 13u);
    }
    // Subnormal halves: multiples of 2^-24; scaling by 2^24 is exact and `round` ties to even.
    return sign | u32(round(bitcast<f32>(a) * 16777216.0));
}

fn half_value(h: u32) -> f32 {
    let sign = (h & 0x8000u) << 16u;
    let e = (h >> 10u) & 0x1fu;
    let m = h & 0x3ffu;
    if (e == 0u) {
        return bitcast<f32>(sign | bitcast<u32>(f32(m) * 5.9604644775390625e-8));
    }
    if (e == 31u) {
        return bitcast<f32>(sign | 0x7f800000u | (m << 13u));
    }
    return bitcast<f32>(sign | ((e + 112u) << 23u) | (m << 13u));
}

fn pack2(v: vec2<f32>) -> u32 {
    return half_bits(v.x) | (half_bits(v.y) << 16u);
}

fn unpack2(w: u32) -> vec2<f32> {
    return vec2<f32>(half_value(w & 0xffffu), half_value(w >> 16u));
}
