//! What the polled link's kernel (shaders/polled.wgsl) reads: the ring's shape, its role, and the
//! pattern its senders write and its receivers check (the CPU ends write and check the same).

use bytemuck::{Pod, Zeroable};

/// What a dispatch of the polled kernel does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Send through the `out_*` bindings.
    Send = 0,
    /// Receive through the `in_*` bindings.
    Receive = 1,
    /// Both ends of one link in one dispatch, through `out_*`: workgroups `lanes..2*lanes` receive.
    Loopback = 2,
    /// Send through `out_*` and receive through `in_*` (a device in a ring, or both directions of a
    /// pair): workgroups `lanes..2*lanes` receive.
    Duplex = 3,
}

impl Role {
    /// Workgroups a dispatch of this role takes for `lanes` lanes.
    pub fn workgroups(self, lanes: u32) -> u32 {
        match self {
            Role::Send | Role::Receive => lanes,
            Role::Loopback | Role::Duplex => 2 * lanes,
        }
    }
}

/// `PolledParams` in shaders/polled.wgsl (its layout checked against naga's reflection:
/// src/reflect.rs).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct PolledParams {
    pub lanes: u32,
    pub slots: u32,
    pub slices: u32,
    pub words: u32,
    /// A [`Role`] as u32.
    pub role: u32,
    /// Flag loads a wait makes before it gives up.
    pub spins: u32,
    pub tag: u32,
    pub _pad0: u32,
}

/// The word a sender writes at word `j` of slice `s` of `lane` (the WGSL `pattern`'s twin: a receiver
/// that reads anything else, a stale slot or a word before its flag, counts a mismatch).
pub fn pattern(tag: u32, lane: u32, s: u32, j: u32) -> u32 {
    let mut x = tag
        ^ lane.wrapping_mul(0x9E37_79B9)
        ^ s.wrapping_mul(0x85EB_CA6B)
        ^ j.wrapping_mul(0xC2B2_AE35);
    x ^= x >> 16;
    x = x.wrapping_mul(0x7FEB_352D);
    x ^ (x >> 15)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A slot's words differ between the laps that reuse it and between runs, so a stale word fails
    /// the receiver's check.
    #[test]
    fn a_slots_next_lap_and_another_run_write_other_words() {
        let (tag, lane, slots) = (7, 3, 4);
        for s in 0..16 {
            for j in [0, 1, 255, 256, 4095] {
                let w = pattern(tag, lane, s, j);
                assert_ne!(w, pattern(tag, lane, s + slots, j), "s {s} j {j}");
                assert_ne!(w, pattern(tag + 1, lane, s, j), "s {s} j {j}");
                assert_ne!(w, pattern(tag, lane + 1, s, j), "s {s} j {j}");
            }
        }
    }
}
