// put = plain store of 2-byte elements (shaders/put/packed.wgsl says how they are laid out). A GEMM's
// element store rewrites its half of the word: the other half is this invocation's too (packed.wgsl),
// so the read-modify-write races with nothing. A step's copy moves the bits as they are: no rounding.

fn put(i: u32, v: f32) {
    let w = i >> 1u;
    let old = unpack2(word(w));
    set_word(w, pack2(select(vec2<f32>(old.x, v), vec2<f32>(v, old.y), (i & 1u) == 0u)));
}

fn put4(i4: u32, v: vec4<f32>) {
    set_word(i4 * 2u, pack2(v.xy));
    set_word(i4 * 2u + 1u, pack2(v.zw));
}

fn put_unit(u4: u32, u: Unit) {
    dst[u4] = u;
}

fn put_sum(u4: u32, a: Unit, b: Unit) {
    dst[u4] = sum_units(a, b);
}
