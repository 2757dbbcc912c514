// B as two windows of one buffer, vec4<f16> words (fused mode: every rank's B packed may exceed one
// binding). Words from element `p.b_split` on (a multiple of 64 elements: src/lower/fused.rs) are in
// the second window. Every load of a workgroup is of one rank's B, so the branch is uniform and costs
// a compare per load.
enable f16;

@group(0) @binding(3) var<storage, read> b: array<vec4<f16>>;
@group(0) @binding(8) var<storage, read> b_hi: array<vec4<f16>>;

fn b_word(i: u32) -> vec4<f16> {
    let split = p.b_split / 4u;
    if (i >= split) {
        return b_hi[i - split];
    }
    return b[i];
}
