//! How each end of a link reaches host memory, as asked (`--link-path`) and as a device can take it.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::gpu::Gpu;

/// How one end of a link reaches host memory. Asked for, each path falls back to the next where a
/// device cannot take it: zero-copy (or engine), then mapped, then staged.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Path {
    /// Engine for the direct all-reduce, zero-copy for every other collective ([`Path::resolve`]).
    Auto,
    /// Both ends bind one host allocation imported into both devices ([`super::shared`]): the sender's
    /// kernel writes the chunk into host memory and the receiver's kernels read it there; no host copy.
    #[serde(rename = "zero-copy")]
    ZeroCopy,
    /// Host memory both devices bind, as zero-copy, landed by a copy: the sender's step kernel
    /// writes the chunk into it, and the receiver's copy engine (a transfer queue beside wgpu's,
    /// src/sidequeue.rs) copies it into an inbox in the receiver's memory, where its kernels read
    /// it: the landing takes none of the SMs its GEMM runs on and waits behind none of its passes.
    /// A device with no transfer queue copies on its own queue.
    Engine,
    /// The kernels' buffer is itself mapped (the device has MAPPABLE_PRIMARY_BUFFERS); the host copies
    /// the sender's outbox into the receiver's inbox.
    Mapped,
    /// A copy_buffer_to_buffer to (sender) or from (receiver) a mapped staging buffer.
    Staged,
}

impl Path {
    pub fn name(self) -> &'static str {
        match self {
            Path::Auto => "auto",
            Path::ZeroCopy => "zero-copy",
            Path::Engine => "engine",
            Path::Mapped => "mapped",
            Path::Staged => "staged",
        }
    }

    /// Every path: the default first, the host-copy paths last (zero-copy and engine fall back to
    /// mapped, mapped to staged).
    pub const ALL: [Path; 5] = [
        Path::Auto,
        Path::ZeroCopy,
        Path::Engine,
        Path::Mapped,
        Path::Staged,
    ];

    /// The path asked of links that carry `config`'s steps (None: not known): [`Path::Auto`] is
    /// the engine link for the direct all-reduce, whose every chunk crosses as its GEMM makes it, so
    /// that landing it by the receiver's copy engine keeps its SMs for the GEMM (1-12% less time
    /// than zero-copy on TP-2 presets, BENCHMARKS.md), and zero-copy for the rest (whose landings
    /// gain nothing by it: within -5% and +7% of zero-copy) and wherever the flag handoff or the
    /// device's trigger is asked (zero-copy links alone have their gates and watched sends); any
    /// other path is itself.
    pub fn resolve(self, config: Option<&crate::config::Config>) -> Path {
        use crate::config::host::{Handoff, SendTrigger};
        let engine = config.is_some_and(|c| {
            c.collective == crate::schedule::Collective::DirectAllReduce
                && c.host.handoff != Some(Handoff::Flag)
                && c.host.trigger != Some(SendTrigger::Device)
        });
        match self {
            Path::Auto if engine => Path::Engine,
            Path::Auto => Path::ZeroCopy,
            p => p,
        }
    }

    /// The host-copy path a device takes when `want` is asked: mapped only where the device has the
    /// feature (a zero-copy link is decided per link, by [`super::HostLink::new`]).
    pub(super) fn on(gpu: &Gpu, want: Path) -> Path {
        if want != Path::Staged && gpu.has(wgpu::Features::MAPPABLE_PRIMARY_BUFFERS) {
            Path::Mapped
        } else {
            Path::Staged
        }
    }
}

impl Default for Path {
    /// Auto, falling back where a device cannot take it.
    fn default() -> Self {
        Path::Auto
    }
}

impl std::str::FromStr for Path {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        Path::ALL
            .into_iter()
            .find(|p| p.name() == s.trim())
            .ok_or_else(|| {
                Error::invalid("link path", s, "auto, zero-copy, engine, mapped or staged")
            })
    }
}
