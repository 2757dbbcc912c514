// put = plain stores into an output bound as two windows of one buffer (as cas_windows.wgsl, which
// says why and where the window comes from), made as relaxed atomic stores: an atomic store is no
// read-modify-write (a plain store's throughput), and an atomic access is served at the device's
// point of coherence, so a transfer never reads a stale copy from another SM's L1. No element is
// ever written by two workgroups at once: the fused epilogue gates every transfer into a chunk
// behind the chunk's own tiles and the transfers into it that precede it (shaders/fused/epilogue.wgsl),
// so a reduce is a load, an add and a store. Ordering needs no result: the epilogue's `settle` is a
// device-scope release (see there).
@group(0) @binding(0) var<storage, read_write> dst: array<atomic<u32>>;
@group(0) @binding(7) var<storage, read_write> dst_hi: array<atomic<u32>>;

fn put(i: u32, v: f32) {
    store_bits(i, bitcast<u32>(v));
}

// A reduce is a load, an add and a store (the gate makes it exclusive): the fused epilogue
// issues a vec4's loads before its stores (fused/put/by_element4.wgsl).
const PLAIN_REDUCE: bool = true;

// A transfer's reduce into element i, which nothing else writes meanwhile (the gate).
fn reduce_into(i: u32, v: f32) {
    store_bits(i, bitcast<u32>(bitcast<f32>(load_bits(i)) + v));
}

fn load_bits(i: u32) -> u32 {
    let w = window();
    if (i < w) {
        return atomicLoad(&dst[i]);
    }
    return atomicLoad(&dst_hi[i - w]);
}

fn store_bits(i: u32, v: u32) {
    let w = window();
    if (i < w) {
        atomicStore(&dst[i], v);
    } else {
        atomicStore(&dst_hi[i - w], v);
    }
}
