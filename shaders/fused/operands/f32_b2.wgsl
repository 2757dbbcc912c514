// B as two windows of one buffer, f32 words (fused mode: every rank's B packed may exceed one
// binding). Words from element `p.b_split` on (a multiple of 64 elements: core/src/lower/fused.rs) are in
// the second window. Every load of a workgroup is of one rank's B, so the branch is uniform; it
// still slows the f16 fused GEMM markedly, hence B_WINDOWS.
// Pipeline-overridable: false where B fits the first window (the fused pipeline without the branch;
// binding 8 is then bound to a small range never read, as the output's second window may be).
override B_WINDOWS: bool = true;

@group(0) @binding(3) var<storage, read> b: array<f32>;
@group(0) @binding(8) var<storage, read> b_hi: array<f32>;

fn b_word(i: u32) -> f32 {
    let split = p.b_split;
    if (B_WINDOWS && i >= split) {
        return b_hi[i - split];
    }
    return b[i];
}
