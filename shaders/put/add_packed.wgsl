// put = read-modify-write add of 2-byte elements (shaders/put/packed.wgsl says how they are laid out):
// the destination and the incoming elements widened to f32, added, and rounded once per step. Correct
// only where no other writer touches the unit inside the same dispatch (as add.wgsl).

fn put_unit(u4: u32, u: Unit) {
    let d = widen(dst[u4]);
    let s = widen(u);
    dst[u4] = narrow(d.lo + s.lo, d.hi + s.hi);
}

fn put_sum(u4: u32, a: Unit, b: Unit) {
    let d = widen(dst[u4]);
    let x = widen(a);
    let y = widen(b);
    dst[u4] = narrow(d.lo + (x.lo + y.lo), d.hi + (x.hi + y.hi));
}
