// Epilogue = the device-side trigger (fused mode, T3's transparency). A transfer (a step of the
// schedule) has two conditions: its source chunk is complete (the source counter reaches the
// transfer's trigger value: the chunk's tiles plus the transfers into it that precede it) and its
// destination chunk is ready for it (the destination counter reaches the transfer's gate: the
// destination's own tiles plus the transfers into it that precede this one; no gate where that is
// zero). The counter increment, a GEMM tile's or an incoming transfer's last piece's, that meets
// the last of the two publishes the transfer on a device-side queue (the live list). Gating makes
// every write of a chunk exclusive: its tiles, then each transfer into it in the schedule's order,
// so tiles may be plain stores and a reduce a load, add and store (put = coherent_windows.wgsl or
// store_windows.wgsl); the
// atomic-add puts do not need the gate but keep the one protocol. A transfer is split into `pc`
// pieces (the link's workgroups: a piece strides over the whole chunk, like a step workgroup),
// claimed by atomicAdd: the publisher, every GEMM workgroup that finishes its tile while pieces are
// left (where the GEMM's workgroups help: `tile_done`), and the spare workgroups, dispatched after
// the GEMM's or in a dispatch of their own (`spare_wg`), claim them. The workgroup that finishes a
// transfer's last piece bumps the destination's counter, which may publish the next transfer of the
// chain or open the gate of the next transfer into it.
//
// Why it cannot deadlock: nothing waits for another workgroup to do anything. A claimed piece is done
// by the running workgroup that claimed it, without waiting; the publisher claims pieces until none
// is left unclaimed (or, where the GEMM's workgroups help only while a spare is alive or never,
// a spare does: `tile_done` says why none is left behind), so every piece of every published
// transfer is claimed by a workgroup that is running; the last piece's finisher carries the chain
// on. Every transfer is published: both its conditions count only tiles (which every GEMM
// workgroup stores without waiting) and transfers
// earlier in the schedule's order, so by induction over that order each is met. The only loop that
// waits is the spare workgroups' poll for newly published work, and it is bounded (POLLS, from the
// host; an idle poll's pause is a bounded count of reads, `pause`, and the host shrinks the default
// budget with it) and nothing depends on it: a spare that gives up leaves the work to the workgroups that
// publish it. So no forward-progress guarantee between workgroups is needed, and spares that run
// before the GEMM's workgroups (dispatch order is not guaranteed) only cost their bounded poll.
// Where the spares are the trigger (the watched GEMM only counts its tiles, `watch`), nothing but a
// spare publishes a tile's transfer, so the spares beside the GEMM may give up with work left: the
// lowering then dispatches the spare pipeline once more after them and the GEMM, ordered by a barrier
// (core/src/lower/fused.rs, the finisher). It runs once every tile is counted and every earlier spare has
// left, so its watch arms every transfer whose conditions count only tiles, moving those meets the
// next ones' (the same induction over the schedule's order), and it leaves only once every piece is
// done or its poll budget, which is the same bound, is spent.
// Every broadcast through workgroup memory needs the whole workgroup to pass the same barriers, so a
// driver that ends loops after a fixed count of iterations (llvmpipe: 65535 per invocation, all loops
// together) would split the workgroup: on such a driver the host keeps the poll budget well inside
// the count (`polls_within` in core/src/lower/fused/tuning.rs).
//
// Memory model. Every access to the shared output is served at the device's point of coherence (L2
// on NVIDIA and AMD), never from a non-coherent L1: put = coherent_windows.wgsl declares the output
// `@coherent` (MEMORY_DECORATION_COHERENT, native only; plain 16-byte stores and loads); where the
// adapter lacks it every access is an atomic (store_windows.wgsl: relaxed atomic loads and stores;
// cas_windows.wgsl or atomic_windows.wgsl: tiles and reduces atomic adds, copies exchanges, the
// transfer reads atomicLoad). Ordering: before each counter increment
// (a chunk's, or a transfer's done count) every invocation passes a storageBarrier (`settle`); after
// observing a completion or claiming a piece, a storageBarrier orders the transfer's loads after the
// observation. WGSL's barrier is workgroup-scoped by the spec, but naga emits it with device memory
// scope (SPIR-V: OpControlBarrier, Workgroup execution, Device memory, AcquireRelease |
// UniformMemory, naga 30 back/spv/writer.rs `write_control_barrier`; Metal:
// threadgroup_barrier(mem_device)): a device-scope release before the increment and an acquire after
// the observation. The atomic-add puts also fold each atomic's result into `seen`, stored to
// workgroup memory before the barrier, which orders them where a barrier is only workgroup-scoped
// (an add whose result is unused is a fire-and-forget RED on NVIDIA). The mode needs no optional
// feature (the atomic put takes SHADER_FLOAT32_ATOMIC where present).

// Host twin: `Forward` in core/src/lower/fused/table.rs (layouts compared through naga). Indexed by
// counter (rank * chunks + chunk), then the landed hops' inboxes (`land`). Where the spares trigger
// the tiles' transfers, the spare pipeline is built with WATCH (`watch`).
struct Forward {
    off: u32,
    len: u32,
    // Counter value that triggers action 0 / 1, its destination counter (NONE: no action), its op
    // (1 = add, 2 = store) and its pieces.
    at0: u32,
    to0: u32,
    op0: u32,
    pc0: u32,
    at1: u32,
    to1: u32,
    op1: u32,
    pc1: u32,
    // Action 0 / 1's gate: the destination counter's value from which the transfer may write the
    // destination chunk (0: no gate).
    g0: u32,
    g1: u32,
    // A landed chunk's inbox entry (past the chunks' counters; `land`): 1 + its landing state's first
    // word in `counters` (0: none), the counter of the chunk it lands in, and that chunk's tiles.
    land: u32,
    into: u32,
    tiles: u32,
    inboxes: u32,
}

// What every entry shares, before them. Host twin: `ForwardHeader` in core/src/lower/fused/table.rs
// (layouts compared through naga).
struct ForwardHeader {
    // Pieces of all transfers and landed tiles: the count at which every piece is done.
    pieces: u32,
    // The spares' poll budget.
    polls: u32,
    chunks_per_rank: u32,
    // Elements of the output's first window, or of each of its four (shaders/fused/put/cas_windows.wgsl,
    // store_windows4.wgsl).
    window: u32,
    // Whether GEMM workgroups help move pieces (`tile_done`).
    helping: u32,
    // An idle spare's pause, in reads (0: none; `pause`).
    pause: u32,
    // The GEMM's tile rows (BM) and columns (BN), and the output's columns.
    bm: u32,
    bn: u32,
    cols: u32,
    // The first inbox entry (NONE: no chunk lands).
    inboxes: u32,
    // The GEMM's tile group (0: row-major tile order; gemm_coop.wgsl `GROUP`).
    tile_group: u32,
    // The progress log's first word in `counters` (0: none; `log_at`).
    log_at: u32,
}

struct Table {
    header: ForwardHeader,
    entries: array<Forward>,
}

@group(0) @binding(6) var<storage, read> table: Table;

const NONE: u32 = 0xffffffffu;
const WG: u32 = 256u;
var<workgroup> wg_act: u32;
var<workgroup> wg_piece: u32;
// The fold of this invocation's output atomics' results (the windowed puts fold into it), stored to
// wg_sink before a counter increment: the store needs every result, so the atomics have been
// performed before the barrier (see shaders/fused/put/atomic.wgsl).
var<private> seen: u32;
var<workgroup> wg_sink: u32;

// Settles this invocation's output atomics, then the barrier before a counter increment.
fn settle() {
    wg_sink = seen;
    storageBarrier();
}

// Elements of the output's first window (the windowed puts' binding 0; the rest at binding 7), or
// of each of its four (bindings 0, 7, 9 and 10: fused/put/*_windows4.wgsl).
fn window() -> u32 {
    return table.header.window;
}

// Reads the sink where it cannot matter (c is never NONE), so its stores are not dead.
fn sink_read(c: u32) -> bool {
    return c == NONE && wg_sink == 0x7fc00001u;
}

// Layout of `counters` past the chunk counters (nc of them; na = 2 nc actions, action 2c + which):
// claims[na], done[na], armed[na] (the conditions met, a bit each), then tail, head, total pieces
// done and spares alive, then the live list (action + 1; 0 = published but not visible yet), then
// the idle spares' pause words (`pause_at`). Where each starts, in nc words (`_NC`) or in words past
// the tail; the host reads these constants through naga (core/src/lower/fused/counters.rs, compared
// in src/reflect.rs).
const CLAIMS_NC: u32 = 1u;
const DONE_NC: u32 = 3u;
const ARMED_NC: u32 = 5u;
const TAIL_NC: u32 = 7u;
const ALIVE_PAST_TAIL: u32 = 3u;
const LIVE_PAST_TAIL: u32 = 4u;
// The pause words: slots this many words apart (128 bytes), and this many slots.
const PAUSE_STRIDE: u32 = 32u;
const PAUSE_SLOTS: u32 = 64u;
fn n_chunks() -> u32 {
    return arrayLength(&table.entries);
}
fn claim_at(a: u32) -> u32 {
    return CLAIMS_NC * n_chunks() + a;
}
fn done_at(a: u32) -> u32 {
    return DONE_NC * n_chunks() + a;
}
fn armed_at(a: u32) -> u32 {
    return ARMED_NC * n_chunks() + a;
}
fn tail_at() -> u32 {
    return TAIL_NC * n_chunks();
}
fn alive_at() -> u32 {
    return tail_at() + ALIVE_PAST_TAIL;
}
fn live_at(j: u32) -> u32 {
    return tail_at() + LIVE_PAST_TAIL + j;
}
fn chunks_per_rank() -> u32 {
    return table.header.chunks_per_rank;
}

// The progress log, fused mode's timeline at chunk grain (src/modes/fused.rs): WGSL has no clock, so
// time is told by the work done. Where the header's log_at is not 0 (a timeline was asked for), the
// counters from word log_at hold the clock (tiles stored plus transfer pieces moved so far, by every
// workgroup of the pass), then the clock when each counter's chunk had all its tiles (its entry's
// `tiles`), when each action's first piece was claimed and when its last piece ended (0: not seen),
// then each counter's value as the watchers last saw it (`log_seen`). Where log_at is 0 nothing is
// written. Host twin: `ProgressLog` in core/src/lower/fused/table.rs.
fn log_at() -> u32 {
    return table.header.log_at;
}

// One unit of work done (a tile stored or a piece moved), by the invocation that counts it.
fn log_tick() {
    let at = log_at();
    if (at != 0u) {
        atomicAdd(&counters[at], 1u);
    }
}

// Slot `slot` of the log takes the clock now (each slot has one writer; at least 1, so that 0 says
// not seen).
fn log_mark(slot: u32) {
    let at = log_at();
    if (at != 0u) {
        atomicStore(&counters[at + 1u + slot], max(atomicLoad(&counters[at]), 1u));
    }
}

// Where the spares trigger, the GEMM is the tracker alone and ticks no clock: a watcher that sees a
// chunk's counter grew past what any watcher saw before ticks the clock by the growth up to the
// chunk's tile count (arrivals, and the inboxes' counters, are no tiles: the epilogue's clock counts
// none either), and the one watcher whose sight crosses the tile count marks the chunk's completion:
// T3's trigger learns of a chunk when its tracker is read.
fn log_seen(c: u32, v: u32) {
    let at = log_at();
    let f = table.entries[c];
    if (at != 0u && f.land == 0u) {
        let before = atomicMax(&counters[at + 1u + 5u * n_chunks() + c], v);
        if (v > before && before < f.tiles) {
            atomicAdd(&counters[at], min(v, f.tiles) - before);
            if (v >= f.tiles) {
                log_mark(c);
            }
        }
    }
}

// Action a's destination counter, op and pieces.
fn action(a: u32) -> vec3<u32> {
    let f = table.entries[a / 2u];
    if ((a & 1u) == 1u) {
        return vec3<u32>(f.to1, f.op1, f.pc1);
    }
    return vec3<u32>(f.to0, f.op0, f.pc0);
}

// Action a's conditions: its source is complete (SOURCE) and its destination's gate is open (GATE).
const SOURCE: u32 = 1u;
const GATE: u32 = 2u;

// The conditions action a needs met before it is published: its source's, and its gate's where it has
// one.
fn needs(gate: u32) -> u32 {
    return select(SOURCE, SOURCE | GATE, gate != 0u);
}

// Pipeline-overridable: true only in the spare pipeline of fused mode whose spares are the trigger
// (`watch`, core/src/config/fused.rs `Trigger::Spares`); every pipeline of the triggering epilogue keeps
// the count below, as it was before the watchers (built with the watchers' bits, the f32 fused GEMM
// does not finish on the H100).
override WATCH: bool = false;

// Condition `bit` of action a is met; the call that completes `need` publishes it on the live list.
// Without watchers each condition is met by exactly one counter increment, so the conditions are
// counted. Watchers may report a condition more than once (the increment that meets it and spares
// watching the counters, `watch`), so there each is a bit, set by one atomicOr, and only the call
// that set it may publish (read first, so that watchers meeting a condition again and again do not
// write its word).
fn arm(a: u32, bit: u32, need: u32) {
    let at = armed_at(a);
    var met = false;
    if (WATCH) {
        var old = atomicLoad(&counters[at]);
        if ((old & bit) == 0u) {
            old = atomicOr(&counters[at], bit);
        }
        met = (old & bit) == 0u && (old | bit) == need;
    } else {
        met = atomicAdd(&counters[at], 1u) + 1u == countOneBits(need);
    }
    if (met) {
        // Each action is published once, so j < 2 nc; the guard keeps a trusted module's index in
        // bounds whatever happens.
        let j = atomicAdd(&counters[tail_at()], 1u);
        if (j < 2u * n_chunks()) {
            atomicStore(&counters[live_at(j)], a + 1u);
        }
    }
}

// Increments counter c (once per workgroup), then arms the actions the new value meets: c's own
// transfers whose trigger value it is, and the transfer into c's chunk whose gate it is. Only the
// same chunk of another rank moves into c's chunk, so the gates are looked for there.
fn bump(c: u32, t: u32) {
    settle();
    if (t == 0u && !sink_read(c)) {
        let v = atomicAdd(&counters[c], 1u) + 1u;
        if (WATCH) {
            arm_at(c, v, false);
        } else {
            // `arm_at`'s tests written out as they were before the watchers: built with `arm_at` and
            // the watchers' bits, the triggering epilogue's f32 pipeline does not finish on the
            // H100 (which of the two is to blame is not known).
            let f = table.entries[c];
            if (v == f.tiles && f.land == 0u) {
                log_mark(c);
            }
            if (v == f.at0 && f.to0 != NONE) {
                arm(2u * c, SOURCE, needs(f.g0));
            }
            if (v == f.at1 && f.to1 != NONE) {
                arm(2u * c + 1u, SOURCE, needs(f.g1));
            }
            let nch = chunks_per_rank();
            for (var q = c % nch; q < n_chunks(); q += nch) {
                let g = table.entries[q];
                if (g.to0 == c && g.g0 == v) {
                    arm(2u * q, GATE, SOURCE | GATE);
                }
                if (g.to1 == c && g.g1 == v) {
                    arm(2u * q + 1u, GATE, SOURCE | GATE);
                }
            }
        }
    }
}

// Arms the actions counter c's value v meets: c's own transfers whose trigger value it is, and the
// transfer into c's chunk whose gate it is (only the same chunk of another rank moves into c's chunk,
// so the gates are looked for there). `reached`: every value up to v (a watching spare, which sees
// the counter, not each increment), else v alone (the increment that made it).
fn arm_at(c: u32, v: u32, reached: bool) {
    let f = table.entries[c];
    if (f.to0 != NONE && (v == f.at0 || (reached && v > f.at0))) {
        arm(2u * c, SOURCE, needs(f.g0));
    }
    if (f.to1 != NONE && (v == f.at1 || (reached && v > f.at1))) {
        arm(2u * c + 1u, SOURCE, needs(f.g1));
    }
    let nch = chunks_per_rank();
    for (var q = c % nch; q < n_chunks(); q += nch) {
        let g = table.entries[q];
        if (g.to0 == c && g.g0 != 0u && (g.g0 == v || (reached && v > g.g0))) {
            arm(2u * q, GATE, SOURCE | GATE);
        }
        if (g.to1 == c && g.g1 != 0u && (g.g1 == v || (reached && v > g.g1))) {
            arm(2u * q + 1u, GATE, SOURCE | GATE);
        }
    }
}

// Landing (T3's update into a chunk its destination is still producing): a ring's last hop, which
// reduces into its destination's own chunk, the one that rank produces last, would wait for every
// tile of it (its gate) and so run after the GEMM. Instead it is a copy into an inbox of its own
// (an entry past the chunks', never gated, whose counter its last piece bumps), and the inbox is
// added into the chunk tile by tile, by the spares, as the tiles are stored: each tile records
// itself in a slot of the chunk's landing state after its tracker's release (`tile_landed`,
// shaders/gemm/jobs.wgsl), and a spare claims the next slot in issue order once the inbox has
// arrived and that slot is filled, adds the inbox's part of that tile into it (the only write of
// that tile after its store: the gate's exclusivity, tile by tile), and counts it; the add that
// completes the chunk bumps its counter, as the hop's last piece did. Landing state: claimed
// slots, landed tiles, then a slot per tile (host twin: `landing` in core/src/lower/fused/table.rs). Nothing
// waits: a slot not filled yet is claimed in a later round, and every tile is stored without
// waiting, so every landing is claimed (the finisher, after the GEMM, at the latest).
var<workgroup> wg_land: vec2<u32>;

// Claims the next landing whose inbox has arrived and whose next slot is filled; returns, uniformly,
// (inbox entry, slot) or NONE.
fn land_claim(t: u32) -> vec2<u32> {
    if (t == 0u) {
        wg_land = vec2<u32>(NONE, 0u);
        let first = table.header.inboxes;
        for (var i = min(first, n_chunks()); i < n_chunks(); i++) {
            let f = table.entries[i];
            if (atomicLoad(&counters[i]) == 0u) {
                continue;
            }
            let s = f.land - 1u;
            let k = atomicLoad(&counters[s]);
            if (k < f.tiles && atomicLoad(&counters[s + 2u + k]) != 0u) {
                if (atomicCompareExchangeWeak(&counters[s], k, k + 1u).exchanged) {
                    wg_land = vec2<u32>(i, k);
                    break;
                }
            }
        }
    }
    return workgroupUniformLoad(&wg_land);
}

// Adds inbox entry i's part of the tile in slot k into the chunk it lands in, counts it, and bumps
// the chunk's counter with the chunk's last tile. Slot k is the chunk's k-th tile in the GEMM's
// issue order: row-major over the chunk's tiles, or where the header's tile_group (GROUP) is not 0 the
// cooperative kernel's grouped order (gemm_coop.wgsl `grouped`, the same arithmetic).
fn land_tile(i: u32, k: u32, t: u32) {
    let f = table.entries[i];
    let h = table.header;
    let s = f.land - 1u;
    storageBarrier();
    let bm = h.bm;
    let bn = h.bn;
    let n = h.cols;
    let per_row = (n + bn - 1u) / bn;
    let chunk_rows = f.len / n;
    var r0 = (k / per_row) * bm;
    var c0 = (k % per_row) * bn;
    if (h.tile_group != 0u) {
        let span = h.tile_group * per_row;
        let first = (k / span) * h.tile_group;
        let tall = min((chunk_rows + bm - 1u) / bm - first, h.tile_group);
        let j = k % span;
        r0 = (first + j % tall) * bm;
        c0 = (j / tall) * bn;
    }
    let rows = min(r0 + bm, chunk_rows) - r0;
    let cols = min(c0 + bn, n) - c0;
    let d = table.entries[f.into].off + r0 * n + c0;
    let src = f.off + r0 * n + c0;
    if (((d | src | n | cols) & 3u) == 0u) {
        let w4 = cols >> 2u;
        for (var e = t; e < rows * w4; e += INVOCATIONS) {
            let at = (e / w4) * n + (e % w4) * 4u;
            reduce4((d + at) >> 2u, load4((src + at) >> 2u));
        }
    } else {
        for (var e = t; e < rows * cols; e += INVOCATIONS) {
            let at = (e / cols) * n + e % cols;
            move_one(1u, d + at, load_bits(src + at));
        }
    }
    settle();
    if (t == 0u && !sink_read(i)) {
        let landed = atomicAdd(&counters[s + 1u], 1u) + 1u;
        atomicAdd(&counters[tail_at() + 2u], 1u);
        wg_act = select(NONE, f.into, landed == f.tiles);
    }
    let c = workgroupUniformLoad(&wg_act);
    if (c != NONE) {
        bump(c, t);
    }
}

// Pipeline-overridable: true only in the watching spares' pipeline of a fused mode whose last hops
// land (`T3_FUSED_LAND`); elsewhere the landing's code, and its registers, are not in the build.
override LAND: bool = false;

// Lands tiles while any is ready; returns, uniformly, whether it landed any.
fn land(t: u32) -> bool {
    if (!LAND) {
        return false;
    }
    var moved = false;
    loop {
        let a = land_claim(t);
        if (a.x == NONE) {
            break;
        }
        land_tile(a.x, a.y, t);
        moved = true;
    }
    return moved;
}

// The trigger as a watcher (WATCH: the GEMM only counts its tiles, watched.wgsl): arms what
// every counter's value meets, the workgroup's invocations sharing the counters. Counters only grow,
// and a chunk's counter counts its tiles before any transfer into it (the gates), then the
// transfers in the schedule's order, so a value at or past a trigger value or gate means what it
// means at that value. A counter at 0 meets nothing (no trigger value or gate is 0: an action with
// a gate of 0 has none, and a trigger value counts at least the chunk's tiles or one transfer).
fn watch(t: u32) {
    for (var c = t; c < n_chunks(); c += INVOCATIONS) {
        let v = atomicLoad(&counters[c]);
        if (v != 0u) {
            log_seen(c, v);
            arm_at(c, v, true);
        }
    }
}

// Claims one unclaimed piece of any published transfer; returns, uniformly, its action (the piece in
// wg_piece) or NONE. Scans the live list from its head, moving the head past
// transfers whose pieces are all claimed.
fn claim(t: u32) -> u32 {
    if (t == 0u) {
        wg_act = NONE;
        let tail = min(atomicLoad(&counters[tail_at()]), 2u * n_chunks());
        var j = atomicLoad(&counters[tail_at() + 1u]);
        var front = true;
        for (; j < tail; j++) {
            let a1 = atomicLoad(&counters[live_at(j)]);
            if (a1 == 0u) {
                front = false;
                continue;
            }
            let a = min(a1 - 1u, 2u * n_chunks() - 1u);
            let pc = action(a).z;
            if (atomicLoad(&counters[claim_at(a)]) < pc) {
                let k = atomicAdd(&counters[claim_at(a)], 1u);
                if (k < pc) {
                    wg_act = a;
                    wg_piece = k;
                    if (k == 0u) {
                        log_mark(n_chunks() + a);
                    }
                    break;
                }
            }
            if (front) {
                atomicMax(&counters[tail_at() + 1u], j + 1u);
            }
        }
    }
    let a = workgroupUniformLoad(&wg_act);
    return a;
}

// Element j of a transfer's destination takes the source's bits v (op 1 = reduce, 2 = copy).
fn move_one(op: u32, j: u32, v: u32) {
    if (op == 1u) {
        reduce_into(j, bitcast<f32>(v));
    } else {
        store_bits(j, v);
    }
}

// From element i of a piece to this invocation's next: a piece's rows are WG lanes wide whatever the
// workgroup's size, so that a GEMM workgroup (WG invocations) and a spare of the spare pipeline
// (shaders/fused/spares.wgsl, fewer) move the same elements of it; a workgroup of INVOCATIONS < WG
// walks each row in WG / INVOCATIONS turns. Constant-folded to `stride` where INVOCATIONS == WG.
const_assert INVOCATIONS <= WG;

fn lane_step(i: u32, stride: u32) -> u32 {
    if (INVOCATIONS == WG) {
        return stride;
    }
    if (i % WG + INVOCATIONS < WG) {
        return INVOCATIONS;
    }
    return stride - WG + INVOCATIONS;
}

// Moves piece k of action a's chunk (16-byte elements in rows of WG from k*WG, every pc-th row, as a
// step workgroup does, `lane_step` walking them, where source, destination and length are whole
// vec4s: every preset; else 4-byte elements), then counts it; the last piece bumps the destination counter (which may publish the
// next transfer).
fn do_piece(a: u32, k: u32, t: u32) {
    let f = table.entries[a / 2u];
    let act = action(a);
    let d = table.entries[act.x].off;
    let stride = act.z * WG;
    storageBarrier();
    if (((f.off | d | f.len) & 3u) == 0u) {
        let s4 = f.off >> 2u;
        let d4 = d >> 2u;
        let n4 = f.len >> 2u;
        for (var i = k * WG + t; i < n4; i += lane_step(i, stride)) {
            let v = load4(s4 + i);
            if (act.y == 1u) {
                reduce4(d4 + i, v);
            } else {
                store4(d4 + i, v);
            }
        }
    } else {
        for (var i = k * WG + t; i < f.len; i += lane_step(i, stride)) {
            move_one(act.y, d + i, load_bits(f.off + i));
        }
    }
    settle();
    if (t == 0u && !sink_read(a)) {
        let n = atomicAdd(&counters[done_at(a)], 1u) + 1u;
        atomicAdd(&counters[tail_at() + 2u], 1u);
        log_tick();
        if (n == act.z) {
            log_mark(3u * n_chunks() + a);
        }
        wg_act = select(NONE, a, n == act.z);
    }
    if (workgroupUniformLoad(&wg_act) != NONE) {
        bump(act.x, t);
    }
}

// Does pieces while any is unclaimed; returns, uniformly, whether it did any.
fn help(t: u32) -> bool {
    var moved = false;
    loop {
        let a = claim(t);
        if (a == NONE) {
            break;
        }
        do_piece(a, workgroupUniformLoad(&wg_piece), t);
        moved = true;
    }
    return moved;
}

// Where spare `slot`'s pause reads: past the live list (2 nc entries), PAUSE_SLOTS words of their own
// PAUSE_STRIDE words apart, so that the pauses of many spares do not all queue at one L2 slice.
fn pause_at(slot: u32) -> u32 {
    return live_at(2u * n_chunks()) + (slot % PAUSE_SLOTS) * PAUSE_STRIDE;
}

// An idle spare's pause between polls (the header's `pause` reads; 0: none): invocation 0 reads a word
// nobody writes (0), each read's address the word's plus the previous read's value capped at 1, so
// the reads are dependent and each waits out a round trip to the point of coherence (atomics bypass
// a non-coherent L1) while issuing one instruction; the rest of the workgroup waits at the barrier.
// A pause that computes takes the GEMM's issue slots instead, and slows it. The
// value is folded into `seen`, so the reads are not dead.
fn pause(t: u32, slot: u32) {
    let n = table.header.pause;
    if (t == 0u) {
        let at = pause_at(slot);
        var v = 0u;
        for (var i = 0u; i < n; i++) {
            v = atomicLoad(&counters[at + min(v, 1u)]);
        }
        seen |= v;
    }
    workgroupBarrier();
}

// After a tile's bump: the GEMM workgroup helps (the header's `helping` = 0), never does (1: the spares run after
// the GEMM and move every piece), or helps only while no spare is alive (2: the spares run beside it,
// core/src/config/fused.rs `Help::Idle`). Why 2 leaves no published piece behind: a publisher reads the
// alive count with an atomic read-modify-write after a device-scope barrier that follows its
// publication (`bump`); a spare takes itself off the count with one before a barrier and a last
// `help`. The two read-modify-writes are ordered on the one word: if the publisher's comes first it
// saw the spare alive, and the spare's last scan, after its own, sees the publication (barrier,
// read-modify-write chain, barrier) and claims whatever is unclaimed; if the spare's comes first, a
// publisher that saw no spare alive helps itself. A claimed piece is moved by its claimer without
// waiting, as ever.
fn tile_done(counter: u32, t: u32) {
    if (t == 0u) {
        log_tick();
    }
    bump(counter, t);
    let helping = table.header.helping;
    if (helping == 0u) {
        help(t);
    } else if (helping == 2u) {
        storageBarrier();
        if (t == 0u) {
            wg_act = atomicAdd(&counters[alive_at()], 0u);
        }
        if (workgroupUniformLoad(&wg_act) == 0u) {
            help(t);
        }
    }
}

// A workgroup dispatched past the GEMM's (or in a dispatch of its own, shaders/fused/spares.wgsl):
// counted alive, helps, polling for newly published transfers until every piece is done or its poll
// budget is spent (bounded: see the top of this file), then leaves the count and helps once more
// (see `tile_done`). An idle round is followed by a pause (`pause`; `slot`: the spare's index).
fn spare_wg(t: u32, slot: u32) {
    let h = table.header;
    if (t == 0u) {
        atomicAdd(&counters[alive_at()], 1u);
    }
    for (var polls = 0u; polls < h.polls; polls++) {
        let moved = spare_round(t);
        if (t == 0u) {
            wg_act = atomicLoad(&counters[tail_at() + 2u]);
        }
        if (workgroupUniformLoad(&wg_act) >= h.pieces) {
            break;
        }
        if (!moved && h.pause != 0u) {
            pause(t, slot);
        }
    }
    storageBarrier();
    if (t == 0u) {
        // The result is used (as `tile_done`'s read is), so the decrement is performed before the
        // barrier, not left as a fire-and-forget reduction.
        wg_act = atomicSub(&counters[alive_at()], 1u);
    }
    storageBarrier();
    spare_round(t);
}

// One round of a spare: where the spares are the trigger (`watch`), arming what the counters meet,
// then moving pieces while any is unclaimed; returns, uniformly, whether it moved any.
fn spare_round(t: u32) -> bool {
    if (WATCH) {
        watch(t);
        storageBarrier();
    }
    let moved = help(t);
    return land(t) || moved;
}
