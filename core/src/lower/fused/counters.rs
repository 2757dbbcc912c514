//! Fused mode's counters buffer: where each region of its u32 words starts. The constants are the
//! shader's (shaders/fused/epilogue.wgsl, the `*_at` functions), read by naga at build time and
//! compared with these in src/reflect.rs, so a change on either side fails a test.

/// Past the nc chunk counters, each of the 2 nc actions' claims, done pieces and conditions met
/// (a bit each) start at these multiples of nc.
pub const CLAIMS_NC: u32 = 1;
pub const DONE_NC: u32 = 3;
pub const ARMED_NC: u32 = 5;
/// Then four words at this multiple of nc: tail, head, pieces done and spares alive; the live
/// list (2 nc entries) starts past them.
pub const TAIL_NC: u32 = 7;
pub const ALIVE_PAST_TAIL: u32 = 3;
pub const LIVE_PAST_TAIL: u32 = 4;
/// Past the live list, the words idle spares read in their pause: this many slots this many words
/// (128 bytes) apart, so that the pauses of many spares do not all queue at one L2 slice.
pub const PAUSE_SLOTS: u32 = 64;
pub const PAUSE_STRIDE: u32 = 32;

/// Words of the pause region: its slots, and one word more (a read's address is the slot's plus 0
/// or 1).
pub(super) const PAUSE_WORDS: usize = (PAUSE_SLOTS * PAUSE_STRIDE) as usize + 1;

/// u32 words of fused mode's counters buffer for `nc` (rank, chunk) counters: the counters, each
/// action's claims, done pieces and conditions met, tail, head, pieces done and spares alive, the
/// live list and the pause words.
pub(super) fn counter_words(nc: usize) -> usize {
    let live_end = TAIL_NC as usize * nc + LIVE_PAST_TAIL as usize + 2 * nc;
    live_end + PAUSE_WORDS
}
