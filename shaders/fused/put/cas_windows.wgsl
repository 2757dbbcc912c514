// put = fused/put/cas.wgsl's compare-exchange adds into an output bound as two windows of one
// buffer: elements [0, w) at binding 0, [w, ...) at binding 7. One binding is at most the
// adapter's max_storage_buffer_binding_size (2 GiB on NVIDIA) and fused mode's packed output of every
// rank exceeds it on the GPT-3 presets. w comes from the header of the forward table
// (shaders/fused/epilogue.wgsl, the only epilogue this put is composed with: src/compositions.rs) as
// lowering chose it (`fused_window` in core/src/lower/fused/packing.rs); where the output fits one window, binding
// 7 is a small range never read. Fused mode's epilogue reads and writes bits through `load_bits` /
// `store_bits`.
@group(0) @binding(0) var<storage, read_write> dst: array<atomic<u32>>;
@group(0) @binding(7) var<storage, read_write> dst_hi: array<atomic<u32>>;

// One compare-exchange on element i, in whichever window holds it: (old value, exchanged).
fn cas(i: u32, old: u32, value: u32) -> vec2<u32> {
    let w = window();
    if (i < w) {
        let r = atomicCompareExchangeWeak(&dst[i], old, value);
        return vec2<u32>(r.old_value, u32(r.exchanged));
    }
    let r = atomicCompareExchangeWeak(&dst_hi[i - w], old, value);
    return vec2<u32>(r.old_value, u32(r.exchanged));
}

fn store_bits(i: u32, v: u32) {
    let w = window();
    if (i < w) {
        seen |= atomicExchange(&dst[i], v);
    } else {
        seen |= atomicExchange(&dst_hi[i - w], v);
    }
}
