// B as two windows of one buffer, vec4<f16> words (fused mode: every rank's B packed may exceed one
// binding). Words from element `p.b_split` on (a multiple of 64 elements) are in the second window,
// which starts at a rank's B where the ranks from there on fit it (core/src/lower/fused/packing.rs).
// A choice per load slows the f16 fused GEMM markedly, even a uniform one: hence B_WINDOWS, and
// `b_word_in`, which the cooperative kernel calls with its job's window as a constant.
enable f16;

// Pipeline-overridable: false where B fits the first window (the fused pipeline without the branch;
// binding 8 is then bound to a small range never read, as the output's second window may be).
override B_WINDOWS: bool = true;

@group(0) @binding(3) var<storage, read> b: array<vec4<f16>>;
@group(0) @binding(8) var<storage, read> b_hi: array<vec4<f16>>;

fn b_word(i: u32) -> vec4<f16> {
    let split = p.b_split / 4u;
    if (B_WINDOWS && i >= split) {
        return b_hi[i - split];
    }
    return b[i];
}

// Word i of a tile whose job reads window `window` (`Job::b_window`): 0 the first, 1 the second, 2
// across both (each word from its own).
fn b_word_in(i: u32, window: u32) -> vec4<f16> {
    if (B_WINDOWS && window == 1u) {
        return b_hi[i - p.b_split / 4u];
    }
    if (B_WINDOWS && window == 2u) {
        return b_word(i);
    }
    return b[i];
}
