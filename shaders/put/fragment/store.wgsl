// The cooperative-matrix kernel's whole-fragment put where the put is a plain store
// (shaders/put/store.wgsl): a 16x16 f32 accumulator goes straight into `dst` (row-major, element
// i4 * 4 first, rows s4 vec4s apart), with no trip through workgroup memory. Composed only before
// shaders/gemm_coop.wgsl (src/compositions.rs).
const FRAGMENT_PUT: bool = true;

fn put_fragment(c: coop_mat16x16<f32, C>, i4: u32, s4: u32) {
    coopStoreT(c, &dst[i4], s4);
}
