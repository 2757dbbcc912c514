// Tracker counters gathered into one buffer, so that a trigger loop reads them back with one copy
// instead of one per tracker buffer: each copy from its own buffer idles the GPU between host-mode
// submissions (tens of µs on the H200). Trackers stay one buffer per chunk, which is
// what lets steps and GEMMs share a pass without barriers. Seven trackers per dispatch: with the
// output, that is WebGPU's default of eight storage buffers per stage. Counter i lands at word `at + i`
// of the output (shaders/put/word.wgsl: as a u32, never through an f32 a driver may flush).

// Host twin: `GatherParams` in src/gather.rs (layouts compared through naga, src/reflect.rs).
struct GatherParams {
    count: u32,
    at: u32,
    _pad0: u32,
    _pad1: u32,
}

@group(0) @binding(1) var<uniform> p: GatherParams;
@group(0) @binding(2) var<storage, read> t0: array<u32>;
@group(0) @binding(3) var<storage, read> t1: array<u32>;
@group(0) @binding(4) var<storage, read> t2: array<u32>;
@group(0) @binding(5) var<storage, read> t3: array<u32>;
@group(0) @binding(6) var<storage, read> t4: array<u32>;
@group(0) @binding(7) var<storage, read> t5: array<u32>;
@group(0) @binding(8) var<storage, read> t6: array<u32>;

@compute @workgroup_size(8)
fn main(@builtin(local_invocation_index) i: u32) {
    if (i >= p.count) {
        return;
    }
    var v = 0u;
    switch i {
        case 0u: { v = t0[0]; }
        case 1u: { v = t1[0]; }
        case 2u: { v = t2[0]; }
        case 3u: { v = t3[0]; }
        case 4u: { v = t4[0]; }
        case 5u: { v = t5[0]; }
        default: { v = t6[0]; }
    }
    put_word(p.at + i, v);
}
