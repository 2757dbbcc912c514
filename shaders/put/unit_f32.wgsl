// A step's unit for the f32 puts (store, add, atomic, cas): one vec4 of elements, put through `put4`.
// The packed puts define their own (shaders/put/packed.wgsl).
alias Unit = vec4<f32>;

fn put_unit(u4: u32, u: Unit) {
    put4(u4, u);
}

fn put_sum(u4: u32, a: Unit, b: Unit) {
    put4(u4, a + b);
}
