// One step of a collective: move one chunk between two ranks' buffers. The same kernel is the copy
// (put = store) and the reduce (put = add, or an update: f32 atomic add or its CAS fallback); the
// `put` snippet from shaders/put/ decides, so the two cannot drift apart.
//
// Access is one 16-byte `Unit` per invocation (the put's: a vec4 of f32, or eight packed 2-byte
// elements, shaders/put/packed.wgsl) in a grid-stride loop over exactly the workgroups the link
// budget allows, the way NCCL channels bound a collective's SMs. Buffers are padded to 16 bytes, so
// the last unit may cover pad elements past `len`. `len4` and the offsets count units.
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
    // The waiting pipelines' (WAIT, WATCH): loads a workgroup makes before it gives up.
    spins: u32,
    // The watching send's (WATCH): its source's counter once the chunk is made, and the unit of
    // `dst` past the chunk that a workgroup giving up marks.
    mark: u32,
    status4: u32,
}

@group(0) @binding(1) var<uniform> p: StepParams;
@group(0) @binding(2) var<storage, read> src: array<Unit>;
@group(0) @binding(3) var<storage, read_write> counters: array<atomic<u32>>;
@group(0) @binding(4) var<storage, read> acc: array<Unit>;

// Pipeline-overridable: false builds the step without the second source (`acc`), so `has_acc` must be
// 0 with it (lowering picks the pipeline from `has_acc`). Why two pipelines: registers. A cooperative
// GEMM workgroup takes 240 registers x 256 invocations of an SM's 65536 on NVIDIA, leaving room for a
// 256-invocation step workgroup only at 16 registers per invocation; the add and update steps with
// the `acc` path take 20 (so 24), and could not run beside the GEMM's workgroups (`cargo bench
// --bench pipelines` reports each pipeline's registers).
override ACC: bool = true;

// Pipeline-overridable: true builds the landing that waits, in a pass beside GEMM work, for a
// chunk another device is still writing into host memory (host mode's flag handoff,
// src/modes/trigger_loop). Its `counters` are then the landing's gate, in this device's memory that
// the host maps: word 0 the host raises once the sender's kernel flagged the chunk written (or its
// submission completed), words 2 and 3 count the workgroups that landed and that gave up. A
// workgroup gives up after `p.spins` loads, or at once where another already did, and then writes
// nothing: the host lands the chunk again after the sender's submission completes unless every
// workgroup landed. A kernel cannot see another device's stores to host memory while it runs, but
// it does see the host's stores to its own memory through the BAR (BENCHMARKS.md, "The polled
// link"), hence the host's relay. Vulkan promises neither across devices: every run is checked.
override WAIT: bool = false;
const GATE_RAISED: u32 = 0u;
const GATE_LANDED: u32 = 2u;
const GATE_GAVE_UP: u32 = 3u;
// Gate loads between two looks at whether another workgroup gave up (and loop bounds below the
// 65,535 turns llvmpipe allows a loop).
const GATE_ROUND: u32 = 1024u;

// Pipeline-overridable: true builds the send that waits, in the pass of the GEMM work making its
// chunk (dispatched ahead of it), for the chunk's tracker counter to reach its mark: T3's trigger on
// the GPU (host mode's `--host-loop trigger=device`). `counters` is then the source's tracker
// through a view of its own (src/alias.rs), which the GEMM bumps beside it; the GEMM bumps each tile's
// count after a storage barrier, after its stores, so once the count is the mark the chunk's values
// are there to read (`src` is a view of its own too). A workgroup gives up after `p.spins` loads and
// then marks the unit `p.status4` of its slot (host memory) and writes nothing else: the host reads
// the mark once the submission completed and sends the chunk again. The send bumps nothing.
override WATCH: bool = false;

var<workgroup> gate_open: u32;

// Invocation 0 waits for the source's counter to reach the mark; every invocation learns whether it
// did.
fn wait_for_mark(t: u32) -> bool {
    if (t == 0u) {
        var open = 0u;
        for (var n = 0u; n < p.spins && open == 0u; n += GATE_ROUND) {
            for (var k = 0u; k < GATE_ROUND; k++) {
                if (atomicLoad(&counters[0]) >= p.mark) {
                    open = 1u;
                    break;
                }
            }
        }
        gate_open = open;
    }
    return workgroupUniformLoad(&gate_open) == 1u;
}

// Invocation 0 waits for the gate; every invocation learns whether it opened.
fn wait_for_gate(t: u32) -> bool {
    if (t == 0u) {
        var open = 0u;
        for (var n = 0u; n < p.spins && open == 0u; n += GATE_ROUND) {
            if (atomicLoad(&counters[GATE_GAVE_UP]) != 0u) {
                break;
            }
            for (var k = 0u; k < GATE_ROUND; k++) {
                if (atomicLoad(&counters[GATE_RAISED]) != 0u) {
                    open = 1u;
                    break;
                }
            }
        }
        gate_open = open;
    }
    return workgroupUniformLoad(&gate_open) == 1u;
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) t: u32) {
    let w = wid.x + wid.y * p.dispatch_x;
    if (w >= p.n_wg) {
        return;
    }
    if (WATCH) {
        if (!wait_for_mark(t)) {
            if (t == 0u) {
                put_unit(p.status4, bitcast<Unit>(vec4<u32>(1u)));
            }
            return;
        }
    }
    if (WAIT) {
        let open = wait_for_gate(t);
        if (!open) {
            if (t == 0u) {
                atomicAdd(&counters[GATE_GAVE_UP], 1u);
            }
            return;
        }
    }
    let stride = p.n_wg * 256u;
    if (ACC && p.has_acc != 0u) {
        for (var i = w * 256u + t; i < p.len4; i += stride) {
            put_sum(p.dst_off4 + i, src[p.src_off4 + i], acc[p.src_off4 + i]);
        }
    } else {
        for (var i = w * 256u + t; i < p.len4; i += stride) {
            put_unit(p.dst_off4 + i, src[p.src_off4 + i]);
        }
    }
    if (WAIT) {
        // Counted after every invocation's stores: the host reads the count once the submission
        // completed, so the order is only for whoever reads the gate sooner.
        storageBarrier();
        if (t == 0u) {
            atomicAdd(&counters[GATE_LANDED], 1u);
        }
        return;
    }
    if (WATCH || p.bump == 0u) {
        return;
    }
    storageBarrier();
    if (t == 0u) {
        if (atomicAdd(&counters[p.done_slot], 1u) == p.n_wg - 1u) {
            atomicAdd(&counters[p.counter], 1u);
        }
    }
}
