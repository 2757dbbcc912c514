// Epilogue = the tracker alone (shaders/epilogue/track.wgsl, composed before this file) in fused
// mode's bindings: fused mode with `T3_FUSED_TRIGGER=spares`, where the GEMM only counts a tile into
// its chunk's counter, as the tracked GEMM of every other mode does, and the spare workgroups beside
// it watch the counters and trigger the transfers (shaders/fused/epilogue.wgsl `watch`): T3's split
// between the producer, which knows nothing, and the tracker that triggers. So the GEMM's epilogue
// costs what the tracked GEMM's does, where the triggering epilogue's bump, arming and queue scan
// after every tile slows the cooperative GEMM by about a fifth before any transfer.
//
// The forward table is declared only so that this composition binds what the fused GEMM binds (one
// bind group layout for the GEMM and its spares: `FusedFamily` in src/gemm/fused.rs); the tracker
// never reads it.
@group(0) @binding(6) var<storage, read> unused_table: array<u32>;
