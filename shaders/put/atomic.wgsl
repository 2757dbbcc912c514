// put = update semantics with native f32 atomic add (wgpu feature SHADER_FLOAT32_ATOMIC): T3's
// DMA-update into near-memory adders, in software. Commutes with every other `put` of this kind.
@group(0) @binding(0) var<storage, read_write> dst: array<atomic<f32>>;

// `put4` is four element operations (the cooperative GEMM writes C element by element, a row of
// adjacent lanes per instruction, where it is; gemm_coop.wgsl).
const PUT4_WHOLE: bool = false;

fn put(i: u32, v: f32) {
    atomicAdd(&dst[i], v);
}

fn put4(i4: u32, v: vec4<f32>) {
    atomicAdd(&dst[i4 * 4u], v.x);
    atomicAdd(&dst[i4 * 4u + 1u], v.y);
    atomicAdd(&dst[i4 * 4u + 2u], v.z);
    atomicAdd(&dst[i4 * 4u + 3u], v.w);
}

fn get4(i4: u32) -> vec4<f32> {
    return vec4<f32>(atomicLoad(&dst[i4 * 4u]), atomicLoad(&dst[i4 * 4u + 1u]),
                     atomicLoad(&dst[i4 * 4u + 2u]), atomicLoad(&dst[i4 * 4u + 3u]));
}
