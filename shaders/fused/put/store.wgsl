// Fused mode's put = plain stores made as relaxed atomic stores, whatever windows the output is
// bound in (store_windows.wgsl, store_windows4.wgsl: `store_bits`; words_windows*.wgsl:
// `load_bits`): an atomic store is no read-modify-write (a plain store's throughput), and an atomic
// access is served at the device's point of coherence, so a transfer never reads a stale copy from
// another SM's L1. No element is ever written by two workgroups at once: the fused epilogue gates
// every transfer into a chunk behind the chunk's own tiles and the transfers into it that precede
// it (shaders/fused/epilogue.wgsl), so a reduce is a load, an add and a store. Ordering needs no
// result: the epilogue's `settle` is a device-scope release (see there).
fn put(i: u32, v: f32) {
    store_bits(i, bitcast<u32>(v));
}

// A reduce is a load, an add and a store (the gate makes it exclusive): the fused epilogue issues a
// vec4's loads before its stores (fused/put/by_element4.wgsl).
const PLAIN_REDUCE: bool = true;

// A transfer's reduce into element i, which nothing else writes meanwhile (the gate).
fn reduce_into(i: u32, v: f32) {
    store_bits(i, bitcast<u32>(bitcast<f32>(load_bits(i)) + v));
}
