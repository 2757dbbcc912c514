// One step of a collective: move one chunk between two ranks' buffers. The same kernel is the copy
// (put = store) and the reduce (put = add, or an update: f32 atomic add or its CAS fallback); the
// `put` snippet from shaders/put/ decides, so the two cannot drift apart.
//
// Access is vec4 (16 bytes per invocation) over exactly the workgroups the link budget allows, the
// way NCCL channels bound a collective's SMs. Each workgroup walks blocks of UNROLL x 256 vec4s with
// all UNROLL loads of an invocation issued before its stores: with one load in flight per invocation
// a workgroup moved 9.8 GB/s on an H200 (BENCHMARKS.md run 14's link table), so a 150 GB/s link took
// 16 workgroups per step, each resident for the whole step on an SM the cooperative GEMM (a whole SM's
// registers) could then not use. More bytes in flight per workgroup emulate the same link on fewer
// SMs. Buffers are padded to 16 bytes, so the last vec4 may cover pad elements past `len`.
//
// When the last workgroup finishes (its increment of the step's done counter returns n_wg - 1), it bumps
// the destination chunk's tracker counter by one: the "incoming update" of T3's threshold.

// Host twin: `StepParams` in src/steps.rs (layouts compared through naga, src/reflect.rs).
struct StepParams {
    len4: u32,
    src_off4: u32,
    dst_off4: u32,
    n_wg: u32,
    dispatch_x: u32,
    // Tracker counter to bump when done, and the done counter of this step; bump == 0 skips both.
    counter: u32,
    done_slot: u32,
    bump: u32,
    // 1: add `acc` (a forwarded partial sum) to the source before the put.
    has_acc: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

@group(0) @binding(1) var<uniform> p: StepParams;
@group(0) @binding(2) var<storage, read> src: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> counters: array<atomic<u32>>;
@group(0) @binding(4) var<storage, read> acc: array<vec4<f32>>;

// vec4s in flight per invocation (the host's `steps::UNROLL`).
const UNROLL: u32 = 8u;

// The source vec4 `i` of the step, plus the forwarded partial when there is one.
fn load(i: u32) -> vec4<f32> {
    var v = src[p.src_off4 + i];
    if (p.has_acc != 0u) {
        v += acc[p.src_off4 + i];
    }
    return v;
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) t: u32) {
    let w = wid.x + wid.y * p.dispatch_x;
    if (w >= p.n_wg) {
        return;
    }
    let block = 256u * UNROLL;
    let stride = p.n_wg * block;
    // Whole blocks; then the one block of the chunk that may be partial, which only the workgroup
    // whose walk reaches it finds below len4 (every other one's next block starts past the end).
    var i = w * block + t;
    loop {
        if (i + 256u * (UNROLL - 1u) >= p.len4) {
            break;
        }
        let v0 = load(i);
        let v1 = load(i + 256u);
        let v2 = load(i + 512u);
        let v3 = load(i + 768u);
        let v4 = load(i + 1024u);
        let v5 = load(i + 1280u);
        let v6 = load(i + 1536u);
        let v7 = load(i + 1792u);
        put4(p.dst_off4 + i, v0);
        put4(p.dst_off4 + i + 256u, v1);
        put4(p.dst_off4 + i + 512u, v2);
        put4(p.dst_off4 + i + 768u, v3);
        put4(p.dst_off4 + i + 1024u, v4);
        put4(p.dst_off4 + i + 1280u, v5);
        put4(p.dst_off4 + i + 1536u, v6);
        put4(p.dst_off4 + i + 1792u, v7);
        i += stride;
    }
    for (; i < p.len4; i += 256u) {
        put4(p.dst_off4 + i, load(i));
    }
    if (p.bump == 0u) {
        return;
    }
    storageBarrier();
    if (t == 0u) {
        if (atomicAdd(&counters[p.done_slot], 1u) == p.n_wg - 1u) {
            atomicAdd(&counters[p.counter], 1u);
        }
    }
}
