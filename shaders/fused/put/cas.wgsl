// Fused mode's put = update semantics by compare-exchange (as put/cas.wgsl), whatever windows the
// output is bound in (cas_windows.wgsl, cas_windows4.wgsl: `cas`, `store_bits`; words_windows*.wgsl:
// `load_bits`).
// Copies are exchanges whose results fold into `seen` (see atomic.wgsl for why); a CAS returns its
// result before the loop can end, so adds need nothing more.

// Lock-free, not a spin-wait (as put/cas.wgsl): a failed exchange means another invocation's add
// landed.
fn put(i: u32, v: f32) {
    var old = load_bits(i);
    loop {
        let r = cas(i, old, bitcast<u32>(bitcast<f32>(old) + v));
        if (r.y == 1u) {
            break;
        }
        old = r.x;
    }
}

// A reduce is a compare-exchange loop (`reduce_into`).
const PLAIN_REDUCE: bool = false;

// A transfer's reduce into element i: an add like a tile's.
fn reduce_into(i: u32, v: f32) {
    put(i, v);
}
