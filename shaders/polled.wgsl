// The polled link (src/hostlink/polled.rs): chunks cross in slices through a ring of slots, each
// handed over by a flag the other end polls, with no host round trip between slices (NCCL's
// host-memory transport does this with its kernels; our host loop hands over a whole chunk per
// submission). One workgroup per lane, a lane its own ring: `slots` slots of `words` words, a
// `published` count the sender bumps after a slice's words and a `consumed` count the receiver bumps
// after reading one, so the sender writes a slot again only once its last slice was read.
//
// Whether a device's stores reach another device (or the host) while the kernel still runs, and in
// order, is the driver's and not Vulkan's to promise: storage atomics are Device-scope and
// `storageBarrier()` orders within the device. The receiver therefore checks every word it reads
// against the pattern the sender wrote (`mismatches`), and every wait is bounded so that a flag that
// never arrives ends the kernel with a timeout instead of a hang: by the host's abort word (after the
// lanes' flags, set when the run's time is up) and, should that word never arrive either, by `spins`
// flag loads.

// Host twin: `PolledParams` in core/src/kernels/polled.rs (layouts compared through naga,
// src/reflect.rs).
struct PolledParams {
    lanes: u32,
    slots: u32,
    slices: u32,
    words: u32,
    // 0: send through `out_*`; 1: receive through `in_*`; 2: both ends through `out_*` (workgroups
    // lanes..2*lanes receive); 3: send through `out_*` and receive through `in_*`.
    role: u32,
    // Flag loads a wait makes before it gives up.
    spins: u32,
    // Mixed into the pattern: a run's words differ from any earlier run's left in the slots.
    tag: u32,
    _pad0: u32,
}

// u32 words between two lanes' flags (a 128-byte line each: neither end's polling shares a line with
// another lane's), and the `consumed` count's place in a lane's line.
const FLAG_STRIDE: u32 = 32u;
const CONSUMED_AT: u32 = 16u;
// Flag loads between two looks at the abort word.
const ABORT_EVERY: u32 = 1024u;
// Words of `dst` per workgroup: mismatches, whether it fell short (a wait gave up, or fewer words
// checked than its slices hold), the longest wait in spins, slices done.
const RESULT_WORDS: u32 = 4u;
const INVOCATIONS: u32 = 256u;

@group(0) @binding(1) var<uniform> p: PolledParams;
@group(0) @binding(2) var<storage, read_write> out_flags: array<atomic<u32>>;
@group(0) @binding(3) var<storage, read_write> out_data: array<u32>;
@group(0) @binding(4) var<storage, read_write> in_flags: array<atomic<u32>>;
@group(0) @binding(5) var<storage, read_write> in_data: array<u32>;

// A flag's load from the ring this workgroup receives on (`inbound`) or sends on (the host rewrites
// both loads for `--flag-load rmw`: src/hostlink/polled.rs).
fn load_flag(inbound: bool, at: u32) -> u32 {
    if (inbound) {
        return atomicLoad(&in_flags[at]);
    }
    return atomicLoad(&out_flags[at]);
}

var<workgroup> arrived: u32;
var<workgroup> longest: u32;
var<workgroup> bad: atomic<u32>;
// Words the receiver compared: a run whose loops ended early (a driver may bound a shader's loops,
// as llvmpipe does) then shows as a timeout, not as words checked.
var<workgroup> checked: atomic<u32>;

// The word a sender writes at word `j` of slice `s` of `lane`; its CPU twin is
// `t3_core::kernels::polled::pattern`.
fn pattern(tag: u32, lane: u32, s: u32, j: u32) -> u32 {
    var x = tag ^ (lane * 0x9E3779B9u) ^ (s * 0x85EBCA6Bu) ^ (j * 0xC2B2AE35u);
    x = x ^ (x >> 16u);
    x = x * 0x7FEB352Du;
    x = x ^ (x >> 15u);
    return x;
}

// Invocation 0 polls flag `at` of the `inbound` or outbound ring until it reaches `want` (or the host
// aborts, or `p.spins` loads); every invocation learns whether it came.
fn wait(inbound: bool, at: u32, want: u32, lid: u32) -> bool {
    if (lid == 0u) {
        var n = 0u;
        var ok = 0u;
        // Rounds of ABORT_EVERY loads, the abort word read between them.
        loop {
            for (var k = 0u; k < ABORT_EVERY; k = k + 1u) {
                if (load_flag(inbound, at) >= want) {
                    ok = 1u;
                    break;
                }
            }
            n = n + ABORT_EVERY;
            if (ok == 1u || n >= p.spins || load_flag(inbound, p.lanes * FLAG_STRIDE) != 0u) {
                break;
            }
        }
        arrived = ok;
        longest = max(longest, n);
    }
    return workgroupUniformLoad(&arrived) == 1u;
}

// Sends lane `lane`'s slices through `out_*`; returns the slices sent (fewer: a wait timed out).
fn send(lane: u32, lid: u32) -> u32 {
    let published = lane * FLAG_STRIDE;
    var sent = 0u;
    for (var s = 0u; s < p.slices; s = s + 1u) {
        if (s >= p.slots && !wait(false, published + CONSUMED_AT, s + 1u - p.slots, lid)) {
            return s;
        }
        let base = (lane * p.slots + s % p.slots) * p.words;
        for (var j = lid; j < p.words; j = j + INVOCATIONS) {
            out_data[base + j] = pattern(p.tag, lane, s, j);
        }
        // Every invocation's words before the flag that says they are there.
        storageBarrier();
        if (lid == 0u) {
            atomicStore(&out_flags[published], s + 1u);
        }
        sent = s + 1u;
    }
    return sent;
}

// Receives lane `lane`'s slices: through `in_*`, or through `out_*` where both ends share them.
fn receive(lane: u32, lid: u32, one_buffer: bool) -> u32 {
    let published = lane * FLAG_STRIDE;
    var got = 0u;
    for (var s = 0u; s < p.slices; s = s + 1u) {
        if (!wait(!one_buffer, published, s + 1u, lid)) {
            return s;
        }
        let base = (lane * p.slots + s % p.slots) * p.words;
        var b = 0u;
        var k = 0u;
        for (var j = lid; j < p.words; j = j + INVOCATIONS) {
            var v = 0u;
            if (one_buffer) {
                v = out_data[base + j];
            } else {
                v = in_data[base + j];
            }
            b = b + select(0u, 1u, v != pattern(p.tag, lane, s, j));
            k = k + 1u;
        }
        atomicAdd(&bad, b);
        atomicAdd(&checked, k);
        // Every invocation's reads of the slot before the flag that frees it.
        storageBarrier();
        if (lid == 0u) {
            if (one_buffer) {
                atomicStore(&out_flags[published + CONSUMED_AT], s + 1u);
            } else {
                atomicStore(&in_flags[published + CONSUMED_AT], s + 1u);
            }
        }
        got = s + 1u;
    }
    return got;
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    if (lid == 0u) {
        longest = 0u;
        atomicStore(&bad, 0u);
        atomicStore(&checked, 0u);
    }
    workgroupBarrier();
    let second = wg.x >= p.lanes;
    let lane = wg.x % p.lanes;
    var done = 0u;
    var receiving = false;
    if (p.role == 0u || (p.role >= 2u && !second)) {
        done = send(lane, lid);
    } else {
        done = receive(lane, lid, p.role == 2u);
        receiving = true;
    }
    workgroupBarrier();
    if (lid == 0u) {
        let at = wg.x * RESULT_WORDS;
        let whole = !receiving || atomicLoad(&checked) == done * p.words;
        put_word(at, atomicLoad(&bad));
        put_word(at + 1u, select(1u, 0u, done == p.slices && whole));
        put_word(at + 2u, longest);
        put_word(at + 3u, done);
    }
}
