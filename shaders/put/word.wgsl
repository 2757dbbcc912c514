// put = a u32 word stored as it is (the gather kernel's counters: stored as f32 bits, a small count is
// a denormal, which Vulkan lets any instruction flush to zero).
@group(0) @binding(0) var<storage, read_write> dst: array<u32>;

fn put_word(i: u32, v: u32) {
    dst[i] = v;
}
