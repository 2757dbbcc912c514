// put = update semantics where the adapter lacks f32 atomics: a compare-exchange loop on the bits.
// Lock-free, not a spin-wait: a failed exchange means another invocation's add landed, so the
// system as a whole always makes progress.
@group(0) @binding(0) var<storage, read_write> dst: array<atomic<u32>>;

// `put4` is four element operations (the cooperative GEMM writes C element by element, a row of
// adjacent lanes per instruction, where it is; gemm_coop.wgsl).
const PUT4_WHOLE: bool = false;

fn put(i: u32, v: f32) {
    var old = atomicLoad(&dst[i]);
    loop {
        let r = atomicCompareExchangeWeak(&dst[i], old, bitcast<u32>(bitcast<f32>(old) + v));
        if r.exchanged {
            break;
        }
        old = r.old_value;
    }
}

fn put4(i4: u32, v: vec4<f32>) {
    put(i4 * 4u, v.x);
    put(i4 * 4u + 1u, v.y);
    put(i4 * 4u + 2u, v.z);
    put(i4 * 4u + 3u, v.w);
}

fn get4(i4: u32) -> vec4<f32> {
    return bitcast<vec4<f32>>(vec4<u32>(atomicLoad(&dst[i4 * 4u]), atomicLoad(&dst[i4 * 4u + 1u]),
                                        atomicLoad(&dst[i4 * 4u + 2u]), atomicLoad(&dst[i4 * 4u + 3u])));
}
