// Epilogue = the device-side trigger (fused mode, T3's transparency). Whichever workgroup's counter
// increment reaches a chunk's trigger value, whether a GEMM tile's or an incoming transfer's, performs
// that chunk's outgoing transfer itself and then bumps the destination's counter, which may in turn
// complete that chunk: a chain of transfers run by one workgroup. Nothing ever waits on another
// workgroup, so no forward-progress guarantee is needed.
//
// Memory model. Deliberately no `@coherent` (MEMORY_DECORATION_COHERENT): every access to the shared
// output is an atomic (put = cas.wgsl: dst is array<atomic<u32>>; tiles and reduces are CAS adds,
// copies atomicStore, the transfer reads atomicLoad), and atomics are performed at the device's
// point of coherence (L2 on NVIDIA and AMD), never served from a non-coherent L1. Visibility in the
// right order comes from the barriers: the storageBarrier before each counter increment completes
// the workgroup's earlier output atomics first, and the one after observing completion orders the
// transfer's loads after the observation. naga lowers storageBarrier to OpControlBarrier with
// AcquireRelease | UniformMemory semantics on Vulkan (workgroup execution scope; on the devices we
// ran, Mesa lavapipe and NVIDIA, atomics are device-coherent, so this suffices), and to
// threadgroup_barrier(mem_flags::mem_device) on Metal. So the mode needs no optional feature.

// Host twin: `Forward` in src/lower/fused.rs (layouts compared through naga). Indexed by counter (rank * chunks + chunk).
struct Forward {
    off: u32,
    len: u32,
    // Counter value that triggers action 0 / 1, its destination counter (NONE: no action), and its
    // op (1 = add, 2 = store).
    at0: u32,
    to0: u32,
    op0: u32,
    at1: u32,
    to1: u32,
    op1: u32,
}

@group(0) @binding(6) var<storage, read> fwd: array<Forward>;

const NONE: u32 = 0xffffffffu;
var<workgroup> wg_act: u32;

// Increments counter c (once per workgroup); returns, uniformly, the action it triggers (2c + which)
// or NONE.
fn bump(c: u32, t: u32) -> u32 {
    storageBarrier();
    if (t == 0u) {
        let v = atomicAdd(&counters[c], 1u) + 1u;
        let f = fwd[c];
        var act = NONE;
        if (v == f.at0 && f.to0 != NONE) {
            act = 2u * c;
        } else if (v == f.at1 && f.to1 != NONE) {
            act = 2u * c + 1u;
        }
        wg_act = act;
    }
    return workgroupUniformLoad(&wg_act);
}

fn tile_done(counter: u32, t: u32) {
    var act = bump(counter, t);
    loop {
        if (act == NONE) {
            break;
        }
        let f = fwd[act / 2u];
        var to = f.to0;
        var op = f.op0;
        if ((act & 1u) == 1u) {
            to = f.to1;
            op = f.op1;
        }
        let d = fwd[to].off;
        storageBarrier();
        for (var i = t; i < f.len; i += 256u) {
            let v = atomicLoad(&dst[f.off + i]);
            if (op == 1u) {
                put(d + i, bitcast<f32>(v));
            } else {
                atomicStore(&dst[d + i], v);
            }
        }
        act = bump(to, t);
    }
}
