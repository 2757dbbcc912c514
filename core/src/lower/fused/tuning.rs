//! Fused mode's tuning: how its transfers are split and drained (spares, pieces, polls, pause, the
//! GEMM grid), resolved for a device from the caller's options, within the driver's loop caps.

use super::*;

/// Elements one invocation of a piece moves where the link does not bound the pieces.
pub(super) const PIECE_PER_INVOCATION: usize = 16;

/// Invocations of a spare workgroup of their own dispatch (shaders/fused/spares.wgsl
/// `INVOCATIONS`).
pub const SPARE_INVOCATIONS: u32 = 64;

/// Most spares [`FusedTuning::paying`] dispatches (`--fused spares=N` runs as asked): past what it
/// gives any GPU made (a 304-multiprocessor one whose free ones hold 32 each: 1748), so that a
/// multiprocessor count given wrong (`--sms`) cannot crowd the device with polling spares.
pub const MAX_PAYING_SPARES: u32 = 2048;

/// Spares a multiprocessor the GEMM leaves free holds at once: 2048 resident invocations (NVIDIA
/// since Volta) of 64 each.
pub(super) const SPARES_PER_FREE_SM: u32 = 2048 / SPARE_INVOCATIONS;

/// GEMM flops per byte the transfers move below which the cooperative GEMM's grid leaves an eighth
/// of the multiprocessors to the spares: beside a cooperative GEMM workgroup (61440 registers) only
/// two spares fit on its SM and move pieces at a fraction of the link's rate, so where the
/// transfers take about as long as the GEMM, whole SMs of spares pay for a GEMM an eighth slower;
/// where the GEMM weighs several times the transfers, the GEMM time they cost outweighs what they
/// save (the threshold lies between the f16 presets on either side of it: see BENCHMARKS.md).
pub(super) const FREE_SMS_BELOW: f64 = 200.0;

/// How fused mode's transfers are split and drained, resolved for a device from the caller's
/// [`FusedOptions`] (the variants its benchmark compares, so that one device run can time them all).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct FusedTuning {
    /// Pieces per transfer: None = the link's workgroups (as a step of the other modes gets);
    /// Some(1) = one workgroup moves the whole chunk (the first fused mode).
    pub pieces: Option<u32>,
    /// Spare workgroups dispatched past the GEMM's to drain the transfers; None = ranks x pieces.
    pub spares: Option<u32>,
    /// Each spare's poll budget: how often it looks for new work once none is left to claim.
    pub polls: u32,
    /// An idle spare's pause between polls, in dependent reads of a word of its own at the device's
    /// point of coherence (shaders/fused/epilogue.wgsl `pause`): each waits out a round trip while
    /// issuing one instruction, so spares beside the GEMM poll less often without taking its issue
    /// slots (a pause that computes does, and slows the GEMM); 0: none.
    pub pause: u32,
    /// Bytes of the output's first window at most (None: the largest binding).
    pub window: Option<u32>,
    /// Where the spares run.
    pub spare_dispatch: SpareDispatch,
    /// Spares of their own dispatch encoded before the GEMM's (else after it): the hardware issues
    /// workgroups in dispatch order, so spares after a GEMM of a workgroup per tile get slots only
    /// in its last wave, and before it they take theirs first and the GEMM fills the rest.
    pub spares_first: bool,
    /// GEMM workgroups of a persistent grid (each loops over tiles), 0: one per tile.
    pub grid: u32,
    /// Whether GEMM workgroups move pieces of the transfers they publish (and any left unclaimed
    /// when they finish a tile).
    pub help: Help,
    /// What triggers a transfer whose source chunk the GEMM completes.
    pub trigger: Trigger,
    /// Whether a ring's last hop lands (only where the spares trigger): a copy into an inbox,
    /// added into its destination's own chunk tile by tile as the tiles are stored, instead of a
    /// reduce that waits for every tile of that chunk, the last its rank produces (shaders/fused/
    /// epilogue.wgsl `land`; [`landing`]).
    pub land: bool,
}

impl FusedTuning {
    /// The tuning `o` chooses for `target` and `link`: each knob as set, else its default. Where
    /// the multiprocessors are known (`Target::sms`, src/sms.rs) the defaults are the paying
    /// configuration ([`FusedTuning::paying`]) unless the trigger was set to the epilogue (or the
    /// spares to the GEMM's dispatch), else the link's pieces, ranks x pieces spares, 16384 polls
    /// or with their own dispatch 1048576 (either shrunk by a pause, [`paused_polls`]), the largest
    /// binding, the GEMM's dispatch, no grid, help always, the epilogue's trigger, no pause.
    /// `intensity`: the GEMM's flops per byte the transfers move (the paying defaults' grid follows
    /// it). A knob out of range, or a combination that cannot run here, is refused naming the
    /// environment variable that sets it (docs/environment.md).
    pub fn resolve(
        o: &FusedOptions,
        target: &Target,
        link: Link,
        intensity: f64,
    ) -> std::result::Result<Self, String> {
        let range = |name: &str, auto: &str, v: Option<u32>, min: u32, max: u32| match v {
            Some(n) if n < min || n > max => Err(format!(
                "{name}=\"{n}\": expected {auto} or a whole number {min}..={max}"
            )),
            _ => Ok(()),
        };
        let pieces = match o.pieces {
            Pieces::Count(n) => Some(n),
            _ => None,
        };
        range("--fused pieces", "link", pieces, 1, MAX_KNOB)?;
        range("--fused spares", "auto", o.spares, 0, MAX_KNOB)?;
        range("--fused polls", "default", o.polls, 0, MAX_KNOB)?;
        range("--fused window", "default", o.window, MIN_WINDOW, u32::MAX)?;
        range("--fused grid", "off", o.grid, 0, MAX_KNOB)?;
        range("--fused pause", "auto", o.pause, 0, MAX_KNOB)?;
        // Not where the trigger was set to the epilogue: that configuration keeps its own defaults.
        let paying = target
            .sms
            .filter(|_| o.trigger != Some(Trigger::Epilogue))
            .map(|sms| Self::paying(sms, target.gemm_per_sm, link, intensity));
        let spare_dispatch = o
            .spare_dispatch
            .unwrap_or(paying.map_or(SpareDispatch::Gemm, |p| p.spare_dispatch));
        let own = spare_dispatch == SpareDispatch::Own;
        // Spares of their own dispatch start with the GEMM and poll until its last transfer is
        // done (they leave as soon as every piece is): a budget for the whole GEMM.
        let polls = match spare_dispatch {
            SpareDispatch::Gemm => 1 << 14,
            SpareDispatch::Own => OWN_POLLS,
        };
        let help = match o.help {
            Help::Never if !own || o.alias => {
                return Err(
                    "--fused help=\"never\": expected always, idle, or never with --fused spare-dispatch=own and --fused alias=off (the spares must run after the GEMM)".into()
                )
            }
            h => h,
        };
        let trigger = match o.trigger {
            // The paying trigger needs the spares' own dispatch (a knob may have set the other).
            None => paying
                .filter(|_| own)
                .map_or(Trigger::Epilogue, |p| p.trigger),
            Some(Trigger::Spares) if !own => {
                return Err(
                    "--fused trigger=\"spares\": expected epilogue, or spares with --fused spare-dispatch=own (the watched GEMM has no spares in its dispatch)".into()
                )
            }
            Some(t) => t,
        };
        // A default: the paying one where the knob is unset and the paying trigger runs (a knob
        // that chose the GEMM's dispatch for the spares gets the epilogue's defaults).
        let paying = paying.filter(|_| trigger == Trigger::Spares);
        let spares_first = match o.spares_first {
            // Before the GEMM only on views of their own: on the GEMM's buffers wgpu's barrier would
            // hold the GEMM until the spares had spent their poll budget.
            None => paying.is_some_and(|p| p.spares_first) && o.alias,
            Some(false) => false,
            Some(true) if own && o.alias => true,
            Some(true) => {
                return Err(
                    "--fused spares-at=\"before\": expected after, or before with --fused spare-dispatch=own and the aliased views (not --fused alias=off)".into()
                )
            }
        };
        let pause = o.pause.unwrap_or(paying.map_or(0, |p| p.pause));
        let land = match o.land {
            // The paying defaults' where they apply (beside the SIMT GEMM), else wherever the
            // spares trigger.
            None => trigger == Trigger::Spares && paying.is_none_or(|p| p.land),
            Some(true) if trigger == Trigger::Spares => true,
            Some(false) => false,
            Some(true) => {
                return Err(
                    "--fused land=\"on\": expected off, or on where the spares trigger (--fused trigger=spares: only they land)".into()
                )
            }
        };
        Ok(FusedTuning {
            land,
            trigger,
            spares_first,
            pieces: match o.pieces {
                Pieces::Auto => paying.and_then(|p| p.pieces),
                Pieces::Link => None,
                Pieces::Count(n) => Some(n),
            },
            spares: o.spares.or(paying.and_then(|p| p.spares)),
            polls: o.polls.unwrap_or(paused_polls(polls, pause)),
            pause,
            window: o.window,
            spare_dispatch,
            grid: o.grid.unwrap_or(paying.map_or(0, |p| p.grid)),
            help,
        })
    }

    /// The defaults where the GPU's `sms` multiprocessors are known, each holding `gemm_per_sm` GEMM
    /// workgroups: the configuration under which fused mode beats encoded mode on the TP-8 presets,
    /// f16 and f32, on an H200 and an H100 (see BENCHMARKS.md). The spares trigger
    /// (the GEMM only counts its tiles) from a dispatch of their own beside the GEMM, three per
    /// multiprocessor beside one GEMM workgroup (the cooperative kernel; more than about three add
    /// nothing), two beside two (the SIMT kernel at 120 registers leaves 4096 of an SM's 65536,
    /// room for two 64-invocation spares at <= 32: a third only waits, and slows the GEMM
    /// slightly). Beside the cooperative GEMM the GEMM runs on a persistent grid of every slot (a
    /// grid per tile leaves spares after it only the GEMM's last wave); beside the SIMT GEMM the spares are
    /// dispatched first and the GEMM a workgroup per tile after them (the tracked GEMM itself,
    /// faster than on the grid, and the spares take their two slots before it fills the rest;
    /// dispatched first beside the cooperative GEMM, its three spares per SM would leave it no room
    /// until they gave up). Each transfer runs on as many invocations as the link gives a step (its
    /// step workgroups' lanes, in spares' pieces). Beside the cooperative GEMM, where the transfers
    /// weigh about as much as the GEMM (`intensity`, its flops per byte moved, below
    /// [`FREE_SMS_BELOW`]), its grid leaves an eighth of the SMs to spares, a full SM of them each,
    /// two beside each GEMM workgroup. Idle spares pause between polls, 128 reads beside the SIMT
    /// GEMM, 32 beside the cooperative one: spinning spares take the GEMM's issue slots, and a
    /// longer pause delays publications. Beside the SIMT GEMM the ring's last hops land (the reduce
    /// into the chunk a rank produces last then need not wait for all of its tiles); beside the
    /// cooperative one they do not: there the transfers beside the GEMM lag the link already, and
    /// landing adds the inbox's traffic. At most [`MAX_PAYING_SPARES`] spares in all.
    pub fn paying(sms: u32, gemm_per_sm: u32, link: Link, intensity: f64) -> Self {
        let simt = gemm_per_sm >= 2;
        let free = if !simt && intensity < FREE_SMS_BELOW {
            sms / 8
        } else {
            0
        };
        let gemm_sms = sms - free;
        let pause = if simt { 128 } else { 32 };
        FusedTuning {
            pieces: match link {
                Link::Workgroups(w) => Some((w * STEP_WG / SPARE_INVOCATIONS).max(1)),
                Link::Unthrottled => None,
            },
            spares: Some(
                match (simt, free) {
                    (true, _) => 2 * sms,
                    (false, 0) => 3 * sms,
                    (false, f) => 2 * gemm_sms + SPARES_PER_FREE_SM * f,
                }
                .min(MAX_PAYING_SPARES),
            ),
            polls: paused_polls(OWN_POLLS, pause),
            pause,
            window: None,
            spare_dispatch: SpareDispatch::Own,
            spares_first: simt,
            grid: if simt {
                0
            } else {
                gemm_sms * gemm_per_sm.max(1)
            },
            help: Help::Always,
            trigger: Trigger::Spares,
            land: simt,
        }
    }

    /// The configuration in words (the report's `fused` line).
    pub fn describe(&self) -> String {
        let trigger = match self.trigger {
            Trigger::Epilogue => "the GEMM's epilogue",
            Trigger::Spares => "the spares",
        };
        let dispatch = match self.spare_dispatch {
            SpareDispatch::Gemm => "in the GEMM's dispatch",
            SpareDispatch::Own if self.spares_first => "of their own dispatch before the GEMM's",
            SpareDispatch::Own => "of their own dispatch",
        };
        let or = |v: Option<u32>, none: &str| v.map_or(none.to_string(), |n| n.to_string());
        format!(
            "trigger {trigger}; spares {} {dispatch}; GEMM grid {}; pieces per transfer {}; help {}",
            or(self.spares, "auto"),
            if self.grid == 0 {
                "off (a workgroup per tile)".to_string()
            } else {
                self.grid.to_string()
            },
            or(self.pieces, "link"),
            format!("{:?}", self.help).to_lowercase()
        ) + &if self.pause > 0 {
            format!("; idle spares pause {} reads between polls", self.pause)
        } else {
            String::new()
        } + if self.land {
            "; last hops landed tile by tile"
        } else {
            ""
        }
    }

    /// Pieces of a transfer of `len` elements over `link`.
    pub(super) fn pieces(self, link: Link, len: usize) -> u32 {
        let need = len.div_ceil(STEP_WG as usize * PIECE_PER_INVOCATION).max(1) as u32;
        match (self.pieces, link) {
            (Some(p), _) => p.min(need.max(1)),
            (None, Link::Workgroups(w)) => need.min(w.max(1)),
            (None, Link::Unthrottled) => need,
        }
    }
}

/// A poll budget of `polls` rounds for spares that pause `pause` reads after an idle one: fewer
/// rounds as the pause grows, so that a spare's whole life stays about as long as without it (a
/// GEMM left no room by the spares waits for them to give up; the bound is what the top of
/// shaders/fused/epilogue.wgsl rests on). A round costs about [`PAUSE_ROUND`] reads' time itself.
pub(super) fn paused_polls(polls: u32, pause: u32) -> u32 {
    let scaled =
        u64::from(polls) * u64::from(PAUSE_ROUND) / (u64::from(PAUSE_ROUND) + u64::from(pause));
    (scaled as u32).max(1)
}

/// The poll budget of spares of their own dispatch without a pause: they start with the GEMM and
/// poll until its last transfer is done, so it outlasts the GEMM (the presets' longest, f32
/// gpt3-fc2's, included).
pub(super) const OWN_POLLS: u32 = 1 << 20;

/// About a spare's round (a watch of every counter and a scan of the queue) in round trips to the
/// point of coherence: the unit an idle pause's reads are weighed in ([`paused_polls`]).
pub(super) const PAUSE_ROUND: u32 = 16;

/// The spares' poll budget where the driver caps an invocation's loop iterations in all (`limit`,
/// llvmpipe): `polls` at most, and well inside the cap. The cap counts per group of invocations the
/// driver runs as one vector: the group of invocation 0 (whose scans of the live list iterate, the
/// others' do not) reaches it first, its loops end and it leaves the shader while the rest of the
/// workgroup goes on reading broadcasts nobody writes any more, moving pieces again (lavapipe, direct
/// reduce-scatter on 8 ranks with 52 spares: 7 of 40 runs wrong before this cap, 0 of 180 after).
/// Per poll invocation 0 loops at most 2 + 2 nc times (the poll, the claim, a scan of the live list
/// of `counters` chunks' actions), and where it `watch`es at most 2 nc more (a counter, and the
/// counters of its chunk on every rank), and `pause` more where idle; half the cap is left for the
/// pieces the spare moves.
pub(super) fn polls_within(
    limit: Option<u32>,
    polls: u32,
    counters: usize,
    watching: bool,
    pause: u32,
) -> u32 {
    match limit {
        Some(limit) => {
            let nc = u32::try_from(counters).unwrap_or(u32::MAX / 8);
            let per_poll = (2 + 2 * nc + if watching { 2 * nc } else { 0 }).saturating_add(pause);
            polls.min(limit / 2 / per_poll)
        }
        None => polls,
    }
}

/// A persistent grid of `grid` workgroups over `tiles` tiles where the driver caps an invocation's
/// loop iterations in all (`limit`, llvmpipe): raised until each workgroup's share of tiles stays
/// within half the cap. Per tile invocation 0 loops about K times (the K loop's slices and their
/// inner steps) and scans the live list of `counters` chunks' actions a few times as it claims pieces
/// (`tile_done`); a grid of 1 over the 84 tiles of 7 ranks x 12 chunks ran past the cap on lavapipe
/// and lost tiles (as the fused property test found).
pub(super) fn grid_within(
    limit: Option<u32>,
    grid: u32,
    tiles: u32,
    counters: usize,
    k: usize,
) -> u32 {
    match limit {
        Some(limit) if grid > 0 => {
            let nc = u32::try_from(counters).unwrap_or(u32::MAX / 16);
            let per_tile = (4 * (2 + 2 * nc)).saturating_add(u32::try_from(k).unwrap_or(u32::MAX));
            let share = (limit / 2 / per_tile.max(1)).max(1);
            grid.max(tiles.div_ceil(share))
        }
        _ => grid,
    }
}
