// What the packed puts share (store_packed.wgsl, add_packed.wgsl): 2-byte output elements, two to a
// word, four words (eight elements) to a 16-byte unit; `pack2`/`unpack2` come from the element
// snippet (shaders/elements/) composed before. A step moves whole units (`Unit`), a GEMM tile writes
// elements. Output rows are an even number of elements apart (`Padding::ldc`, src/gemm.rs) and
// tiles start at even columns, so both elements of a word are always written by one invocation:
// no two writers share a word.
@group(0) @binding(0) var<storage, read_write> dst: array<vec4<u32>>;

alias Unit = vec4<u32>;

// The eight elements of a unit, widened to f32 (exactly).
struct Wide {
    lo: vec4<f32>,
    hi: vec4<f32>,
}

fn widen(u: Unit) -> Wide {
    return Wide(vec4<f32>(unpack2(u.x), unpack2(u.y)), vec4<f32>(unpack2(u.z), unpack2(u.w)));
}

// Eight f32 values rounded once each into a unit.
fn narrow(lo: vec4<f32>, hi: vec4<f32>) -> Unit {
    return Unit(pack2(lo.xy), pack2(lo.zw), pack2(hi.xy), pack2(hi.zw));
}

// Two units added in f32 and rounded once (a forwarded partial sum plus the source).
fn sum_units(a: Unit, b: Unit) -> Unit {
    let x = widen(a);
    let y = widen(b);
    return narrow(x.lo + y.lo, x.hi + y.hi);
}

// Word w of the output.
fn word(w: u32) -> u32 {
    return dst[w >> 2u][w & 3u];
}

fn set_word(w: u32, v: u32) {
    dst[w >> 2u][w & 3u] = v;
}

// `put4` is two whole words (the cooperative GEMM writes C four elements at a time where it can).
const PUT4_WHOLE: bool = true;
