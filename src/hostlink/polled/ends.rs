//! The polled link's host threads: a host end's lanes, and the relay that carries flags between two
//! devices' BARs (src/hostlink/polled.rs).

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Instant;

use super::{layout_constant, pattern, Ring};

/// Where a host thread's lane lives: its line of flags (host memory or a device's BAR mapping) and
/// its slots (host memory), as addresses that outlive the run's threads (`Polled` holds the memory and
/// the threads are scoped inside its run); what each thread touches is ordered by the link's flags.
#[derive(Clone, Copy)]
pub(super) struct HostLane {
    pub(super) flags: usize,
    pub(super) slots: usize,
}

/// The flag word at host address `addr`.
///
/// # Safety
/// `addr` is 4-aligned inside a mapping or allocation that outlives every use of the reference (a
/// link's memory, which its `Polled` holds while its threads run).
pub(super) unsafe fn flag_at(addr: usize) -> &'static AtomicU32 {
    // SAFETY: the caller's contract.
    unsafe { &*(addr as *const AtomicU32) }
}

/// Stores `v` into `flag` for a device to see. A BAR mapping may be write-combined, where a store is
/// not ordered after earlier stores to ordinary memory (the slot's words) and waits in the CPU's
/// buffers until something drains them: a full fence on each side.
pub(super) fn publish(flag: &AtomicU32, v: u32) {
    std::sync::atomic::fence(Ordering::SeqCst);
    flag.store(v, Ordering::Release);
    std::sync::atomic::fence(Ordering::SeqCst);
}

/// What one lane's end did.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct LaneResult {
    pub(super) mismatches: u64,
    pub(super) timed_out: bool,
    pub(super) longest: u32,
    pub(super) slices: u64,
}

impl LaneResult {
    /// A lane whose thread did not come back.
    pub(super) fn gave_up() -> Self {
        LaneResult {
            timed_out: true,
            ..Default::default()
        }
    }

    /// A kernel's words for one workgroup: mismatches, timed out, longest wait, slices. Words left as
    /// poisoned (the workgroup never wrote them) read as a timeout with nothing counted.
    pub(super) fn from_words(w: &[u32]) -> Self {
        let written = |v: u32| if v == u32::MAX { 0 } else { v };
        LaneResult {
            mismatches: written(w[0]) as u64,
            timed_out: w[1] != 0,
            longest: written(w[2]),
            slices: written(w[3]) as u64,
        }
    }
}

/// A link's relay: a host thread that keeps the receiver's copy of every lane's `published` count
/// (`copies.1`) up with the sender's (`copies.0`), and the sender's `consumed` with the receiver's,
/// until every slice is through or `deadline` passes. A count is copied only once the device that
/// wrote it made it visible through its BAR; the slots themselves are in host memory, where the
/// sender's kernel wrote them before its count (a read of the BAR does not pass the device's earlier
/// writes to host memory on the bus).
pub(super) fn relay(copies: (usize, usize), ring: &Ring, deadline: Instant) -> LaneResult {
    let stride = layout_constant("FLAG_STRIDE") as usize * 4;
    let consumed = layout_constant("CONSUMED_AT") as usize * 4;
    // SAFETY: every address is a 4-aligned word of a lane's line of flags inside a live mapping
    // (`LinkMemory` outlives the run's threads).
    let word = |base: usize, lane: usize, at: usize| unsafe { flag_at(base + lane * stride + at) };
    let lanes = ring.lanes as usize;
    let mut seen = vec![(0u32, 0u32); lanes];
    let mut r = LaneResult::default();
    let mut n = 0u32;
    while seen
        .iter()
        .any(|&(p, c)| p < ring.slices || c < ring.slices)
    {
        for (lane, (p, c)) in seen.iter_mut().enumerate() {
            let published = word(copies.0, lane, 0).load(Ordering::Acquire);
            if published > *p {
                publish(word(copies.1, lane, 0), published);
                r.slices += (published - *p) as u64;
                *p = published;
            }
            let read = word(copies.1, lane, consumed).load(Ordering::Acquire);
            if read > *c {
                publish(word(copies.0, lane, consumed), read);
                *c = read;
            }
        }
        n = n.wrapping_add(1);
        if n.is_multiple_of(256) && Instant::now() > deadline {
            r.timed_out = true;
            break;
        }
        std::hint::spin_loop();
    }
    r
}

/// A host thread's lane: sends (`send`) or receives `ring.slices` slices, each wait bounded by
/// `deadline`.
pub(super) fn host_lane(
    at: HostLane,
    lane: u32,
    send: bool,
    ring: &Ring,
    tag: u32,
    deadline: Instant,
) -> LaneResult {
    let stride = layout_constant("CONSUMED_AT") as usize * 4;
    // SAFETY: `at.flags` is a lane's 4-aligned line of flags inside a live host allocation (HostLane).
    let (published, consumed) = unsafe { (flag_at(at.flags), flag_at(at.flags + stride)) };
    let wait = |flag: &AtomicU32, want: u32| {
        let mut n = 0u32;
        while flag.load(Ordering::Acquire) < want {
            n = n.wrapping_add(1);
            if n.is_multiple_of(4096) && Instant::now() > deadline {
                return false;
            }
            std::hint::spin_loop();
        }
        true
    };
    let words = ring.words as usize;
    let mut r = LaneResult::default();
    for s in 0..ring.slices {
        let slot = (at.slots + (s % ring.slots) as usize * words * 4) as *mut u32;
        if send {
            if s >= ring.slots && !wait(consumed, s + 1 - ring.slots) {
                r.timed_out = true;
                break;
            }
            for j in 0..words {
                // SAFETY: word j of this lane's slot, freed by the receiver's `consumed` (waited above).
                unsafe { slot.add(j).write_volatile(pattern(tag, lane, s, j as u32)) };
            }
            publish(published, s + 1);
        } else {
            if !wait(published, s + 1) {
                r.timed_out = true;
                break;
            }
            for j in 0..words {
                // SAFETY: word j of this lane's slot, published by the sender (waited above).
                let v = unsafe { slot.add(j).read_volatile() };
                r.mismatches += (v != pattern(tag, lane, s, j as u32)) as u64;
            }
            publish(consumed, s + 1);
        }
        r.slices += 1;
    }
    r
}
