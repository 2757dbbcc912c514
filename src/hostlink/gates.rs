//! The flag handoff's gates (`--host-loop handoff=flag`): per zero-copy slot, a send flag in the
//! sender's memory and a landing gate in the receiver's, each a few words that the host maps too
//! (the device's BAR, [`shared::device_mapped`]).
//!
//! The sender's send kernel counts its workgroups in its flag (word 1) and the last bumps word 0
//! once every workgroup's stores are out; the host polls word 0 and then raises word 0 of the
//! receiver's gate, where the receiver's landing (queued beside its GEMM work ahead of the chunk)
//! waits, and counts its workgroups that landed (word 2) and gave up (word 3). A running kernel sees
//! the host's stores to its own memory but not another device's to host memory (BENCHMARKS.md, "The
//! polled link"), hence the relay through the host. Each gate is a buffer of its own, as each
//! dispatch that writes one must be: wgpu would put a barrier between two that share a buffer,
//! and the landing would then hold back the GEMM behind it.

use super::shared;
use crate::gpu::Gpu;

/// Words of a gate: the flag, the send kernel's workgroups done, and the landing's workgroups that
/// landed and that gave up.
pub const GATE_WORDS: usize = 4;

/// One gate: its buffer (bound by the kernels) and the host's pointer to the same words.
pub struct Gate {
    pub buffer: wgpu::Buffer,
    words: *mut u32,
}

// SAFETY: the pointer is the buffer's mapping, valid while the buffer lives (the gate owns both);
// accesses are single volatile words, ordered against the device's by submissions and by the
// flag protocol above.
unsafe impl Send for Gate {}
unsafe impl Sync for Gate {}

impl Gate {
    /// A gate on `gpu`, or None where it has no memory that is both its own and the host's.
    pub fn new(gpu: &Gpu, label: &str) -> Option<Gate> {
        // SAFETY: the host touches the words only between the device's uses (`clear`, before the
        // submission that binds the gate) or as single volatile words the kernels poll or count in.
        let (buffer, ptr) =
            unsafe { shared::device_mapped(&gpu.device, label, (GATE_WORDS * 4) as u64) }?;
        let gate = Gate {
            buffer,
            words: ptr.cast(),
        };
        gate.clear();
        Some(gate)
    }

    /// Word `w`, as the device last wrote it.
    pub fn word(&self, w: usize) -> u32 {
        assert!(w < GATE_WORDS);
        // SAFETY: within the mapping (GATE_WORDS words at least), aligned (the mapping is).
        unsafe { self.words.add(w).read_volatile() }
    }

    fn set(&self, w: usize, v: u32) {
        assert!(w < GATE_WORDS);
        // SAFETY: as `word`.
        unsafe { self.words.add(w).write_volatile(v) }
    }

    /// Every word zero: before a submission that binds the gate, none running does.
    pub fn clear(&self) {
        for w in 0..GATE_WORDS {
            self.set(w, 0);
        }
    }

    /// Whether a send kernel flagged its chunk written.
    pub fn flagged(&self) -> bool {
        self.word(0) != 0
    }

    /// Opens the landing waiting on this gate.
    pub fn raise(&self) {
        self.set(0, 1);
    }

    /// Whether the landing that waited on this gate landed with every workgroup (read once its
    /// submission completed).
    pub fn landed(&self) -> bool {
        self.word(2) != 0 && self.word(3) == 0
    }
}

/// A zero-copy slot's two gates.
pub struct Gates {
    /// On the sender: its send kernel's flag.
    pub send: Gate,
    /// On the receiver: where its landing waits.
    pub land: Gate,
}

impl Gates {
    /// Both gates of slot `slot` of the link `from` -> `to`, or None where either device cannot
    /// make one.
    pub fn new(s: &Gpu, r: &Gpu, (from, to, slot): (usize, usize, usize)) -> Option<Gates> {
        let label = |what: &str| format!("host link {from}->{to} slot {slot} {what}");
        Some(Gates {
            send: Gate::new(s, &label("send flag"))?,
            land: Gate::new(r, &label("landing gate"))?,
        })
    }
}
