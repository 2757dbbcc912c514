// Epilogue = the tracker: every invocation's stores happen before the one increment of the chunk's
// counter. The host reads the counters (host mode) or orders work by them (encoded mode).

// Pipeline-overridable: false builds the untracked GEMM that the tracker overhead is measured against.
override TRACK: bool = true;

fn tile_done(counter: u32, t: u32) {
    if (TRACK) {
        storageBarrier();
        if (t == 0u) {
            atomicAdd(&counters[counter], 1u);
        }
    }
}

// Workgroups past the GEMM's: only fused mode dispatches any (its spare transfer workgroups).
fn spare_wg(t: u32, slot: u32) {}
