// put = cas.wgsl's compare-exchange adds into an output bound as four windows of two buffers, as
// store_windows4.wgsl lays them out.
@group(0) @binding(0) var<storage, read_write> dst: array<atomic<u32>>;
@group(0) @binding(7) var<storage, read_write> dst_hi: array<atomic<u32>>;
@group(0) @binding(9) var<storage, read_write> dst_2: array<atomic<u32>>;
@group(0) @binding(10) var<storage, read_write> dst_3: array<atomic<u32>>;

// One compare-exchange on element i, in whichever window holds it: (old value, exchanged).
fn cas(i: u32, old: u32, value: u32) -> vec2<u32> {
    let w = window();
    if (i < w) {
        let r = atomicCompareExchangeWeak(&dst[i], old, value);
        return vec2<u32>(r.old_value, u32(r.exchanged));
    } else if (i < 2u * w) {
        let r = atomicCompareExchangeWeak(&dst_hi[i - w], old, value);
        return vec2<u32>(r.old_value, u32(r.exchanged));
    } else if (i < 3u * w) {
        let r = atomicCompareExchangeWeak(&dst_2[i - 2u * w], old, value);
        return vec2<u32>(r.old_value, u32(r.exchanged));
    }
    let r = atomicCompareExchangeWeak(&dst_3[i - 3u * w], old, value);
    return vec2<u32>(r.old_value, u32(r.exchanged));
}

fn store_bits(i: u32, v: u32) {
    let w = window();
    if (i < w) {
        seen |= atomicExchange(&dst[i], v);
    } else if (i < 2u * w) {
        seen |= atomicExchange(&dst_hi[i - w], v);
    } else if (i < 3u * w) {
        seen |= atomicExchange(&dst_2[i - 2u * w], v);
    } else {
        seen |= atomicExchange(&dst_3[i - 3u * w], v);
    }
}
