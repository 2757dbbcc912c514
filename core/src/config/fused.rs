//! Fused mode's choices as the caller makes them: each knob set, or left to its default, which
//! lowering resolves against the device (`lower::FusedTuning::resolve`). The binary fills them in
//! from `--fused KEY=VALUE` (src/cli/knobs.rs, docs/environment.md); nothing
//! below it reads the environment.

/// What triggers the transfers of the chunks the GEMM completes (`--fused trigger`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Trigger {
    /// The GEMM's epilogue: the tile whose increment meets a transfer's last condition publishes it
    /// (shaders/fused/epilogue.wgsl `bump`), and moves pieces as [`Help`] says.
    Epilogue,
    /// The spares: the GEMM only counts its tiles (the watched GEMM, shaders/fused/watched.wgsl:
    /// the tracked GEMM's epilogue, no help), and spare workgroups of their own dispatch watch the
    /// counters and publish what they meet (`watch`); the spare pipeline runs once more after both
    /// (the finisher), so nothing rests on the spares running beside the GEMM.
    Spares,
}

/// Whether GEMM workgroups move pieces after a tile (shaders/fused/epilogue.wgsl, `tile_done`;
/// `--fused help`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Help {
    /// Always: as the publisher of a transfer, and whenever pieces are left unclaimed.
    #[default]
    Always,
    /// Never: only where every spare is sure to run after the GEMM (their own dispatch bound to the
    /// GEMM's own buffers, without aliased views, so wgpu's barrier orders them); the spares move
    /// every piece, and the last one polling carries every chain on.
    Never,
    /// Only while no spare is alive: spares beside the GEMM move the pieces while they last, the
    /// GEMM's workgroups before they start and after they leave.
    Idle,
}

impl Help {
    /// The header's code for it (`op0` of the forward table's last entry).
    pub(crate) fn code(self) -> u32 {
        match self {
            Help::Always => 0,
            Help::Never => 1,
            Help::Idle => 2,
        }
    }

    /// Its word (`--fused help`'s value).
    pub fn name(self) -> &'static str {
        match self {
            Help::Always => "always",
            Help::Never => "never",
            Help::Idle => "idle",
        }
    }
}

/// Where fused mode's spare workgroups run (`--fused spare-dispatch`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SpareDispatch {
    /// Past the GEMM's workgroups in its dispatch (the GEMM's pipeline: a GEMM workgroup's
    /// registers and workgroup memory each, issued once every GEMM workgroup has been).
    Gemm,
    /// A dispatch of their own right after the GEMM's (or before it: `FusedTuning::spares_first`),
    /// in the same pass, on the spare pipeline (shaders/fused/spares.wgsl) and views of their own
    /// of what the GEMM writes (src/alias.rs): beside the GEMM where the device aliases buffers and
    /// the GEMM leaves room (a persistent grid, or the spares first), after it otherwise.
    Own,
}

/// Pieces per transfer, as chosen (`--fused pieces`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Pieces {
    /// The paying defaults' where they apply, else the link's.
    #[default]
    Auto,
    /// The link's workgroups, as a step of the other modes gets (`link`).
    Link,
    /// This many (>= 1; 1: one workgroup moves the whole chunk, the first fused mode).
    Count(u32),
}

/// The largest count a fused knob takes (pieces, spares, polls, GEMM grid, pause).
pub const MAX_KNOB: u32 = 1 << 20;

/// The smallest window of the output (its first, or each of four), bytes.
pub const MIN_WINDOW: u32 = 256;

/// Fused mode's knobs: how its transfers are split and drained, each None (or its Auto) where the
/// caller leaves it to the default. `Default` is every default, with aliased views where the device
/// makes them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct FusedOptions {
    pub pieces: Pieces,
    /// Spare workgroups (None: the paying defaults' where they apply, else ranks x pieces).
    pub spares: Option<u32>,
    /// Each spare's poll budget (None: the default, shrunk by a pause).
    pub polls: Option<u32>,
    /// An idle spare's pause between polls, in reads (None: the paying defaults' or none).
    pub pause: Option<u32>,
    /// Bytes of the output's first window (and of B's) at most; of each of its four where it passes
    /// one buffer (None: the largest binding, or half the largest buffer there).
    pub window: Option<u32>,
    /// GEMM workgroups of a persistent grid (None: the paying defaults' or none; 0: none, a
    /// workgroup per tile).
    pub grid: Option<u32>,
    /// Where the spares run (None: the paying defaults' where they apply, else the GEMM's dispatch).
    pub spare_dispatch: Option<SpareDispatch>,
    /// Whether GEMM workgroups move pieces.
    pub help: Help,
    /// What triggers a transfer (None: the paying defaults' where they apply, else the epilogue;
    /// `Epilogue` also keeps the other knobs off the paying defaults).
    pub trigger: Option<Trigger>,
    /// Spares of their own dispatch before the GEMM's (Some(true)) or after it (None: the paying
    /// defaults' where they apply and the views are made, else after).
    pub spares_first: Option<bool>,
    /// Whether a ring's last hops land (None: wherever the spares trigger, unless the paying
    /// defaults say otherwise).
    pub land: Option<bool>,
    /// Whether pool buffers with views get them (aliased buffers, src/alias.rs; `--fused alias`): off
    /// binds one buffer for both, so one device run can time the spares beside the GEMM against
    /// after it.
    pub alias: bool,
    /// Whether fused mode keeps its progress log, its timeline at chunk grain (a timeline is asked
    /// for: the CLI's --json, --svg or --trace, the page); off, the log costs nothing.
    pub timeline: bool,
}

impl Default for FusedOptions {
    fn default() -> Self {
        FusedOptions {
            pieces: Pieces::Auto,
            spares: None,
            polls: None,
            pause: None,
            window: None,
            grid: None,
            spare_dispatch: None,
            help: Help::Always,
            trigger: None,
            spares_first: None,
            land: None,
            alias: true,
            timeline: false,
        }
    }
}
