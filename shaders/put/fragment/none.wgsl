// The cooperative-matrix kernel's whole-fragment put for every put that is not a plain store (an
// add, an atomic, fused mode's windows): none, so the kernel writes C element-wise through `put`.
// Composed only before shaders/gemm_coop.wgsl (src/compositions.rs).
const FRAGMENT_PUT: bool = false;

fn put_fragment(c: coop_mat16x16<f32, C>, i4: u32, s4: u32) {}
