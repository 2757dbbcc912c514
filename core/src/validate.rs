//! What a configuration must satisfy before any GPU work: combinations of collective, reduce and
//! mode that apply, and the memory every rank's buffers need together.

use crate::config::{Config, ModeKind};
use crate::error::{Error, Result};
use crate::kernels::gemm::Padding;
use crate::kernels::step::{Link, MAX_LINK_WORKGROUPS};
use crate::plan::ReduceVia;
use crate::schedule::a_rows;
use crate::schedule::{Collective, Order};
use crate::shapes::{Chunking, Dtype};

/// Host bytes the plan, the schedule and every mode's lowering take per chunk and per step, an upper
/// bound: on lavapipe (2026-11-27, peak RSS less the process' 110 MB) 9.2 KB per chunk at one rank
/// (16384 to 32768 chunks), 12.5-17 KB per step at 16 and 32 ranks. Without it a run of 16M chunks
/// passed the check and was killed at 22 GB (issue 41).
pub const PLAN_BYTES_PER_ITEM: u64 = 16 << 10;

/// Why fused mode cannot run the direct all-reduce.
pub(crate) const FUSED_KEEPS_NO_PARTIAL: &str = "fused mode's spares add each partial straight into its destination, where the direct all-reduce's own partials must stay whole until sent";

/// Bytes a run needs at once: on the device (every rank's operands, outputs and inboxes) and on the
/// host (the inputs and the largest packed upload).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Footprint {
    pub device: u64,
    pub host: u64,
}

impl Config {
    /// Refuses combinations that cannot apply, naming why: a usage error, not a silent row.
    pub fn validate(&self) -> Result<()> {
        let c = self.collective;
        match (self.via, c) {
            (ReduceVia::Land | ReduceVia::Forward, Collective::AllGather) => {
                return Err(Error::invalid(
                    "reduce",
                    format!("{} with {c}", self.via.name()),
                    "update: an all-gather has no reduce steps to realise otherwise",
                ))
            }
            (ReduceVia::Land | ReduceVia::Forward, Collective::DirectAllReduce) => {
                return Err(Error::invalid(
                    "reduce",
                    format!("{} with {c}", self.via.name()),
                    "update: the direct all-reduce adds each peer's partial into the rank's inbox as it arrives, then the inbox into its output",
                ))
            }
            (ReduceVia::Forward, Collective::DirectReduceScatter) => {
                return Err(Error::invalid(
                    "reduce",
                    format!("forward with {c}"),
                    "update or land: forwarding passes partial sums along a ring, and the direct reduce-scatter sends every partial straight to its owner",
                ))
            }
            _ => {}
        }
        if !self.order.fits(c) {
            return Err(Error::invalid(
                "order",
                format!("{} with {c}", self.order.name()),
                "stage: the chunk order follows the ring's reduce-scatter and all-reduce, whose steps each carry one chunk index",
            ));
        }
        if self.order == Order::Chunk && self.chunks < 2 {
            return Err(Error::invalid(
                "chunks per rank in the chunk order",
                self.chunks,
                "at least 2: with one the whole GEMM is a single stage, and nothing crosses before it ends",
            ));
        }
        if self.out_dtype != Dtype::F32 && self.out_dtype != self.dtype {
            return Err(Error::invalid(
                "output dtype",
                format!(
                    "{} outputs of {} operands",
                    self.out_dtype.name(),
                    self.dtype.name()
                ),
                format!("f32 or the operands' type ({})", self.dtype.name()),
            ));
        }
        if let Link::Workgroups(w) = self.link {
            if !(1..=MAX_LINK_WORKGROUPS).contains(&w) {
                return Err(Error::invalid(
                    "link workgroups",
                    w,
                    format!("1 to {MAX_LINK_WORKGROUPS} (a dispatch's limit per dimension)"),
                ));
            }
        }
        Chunking::new(self.shape.m, self.ranks, self.chunks)?;
        Ok(())
    }

    /// Refuses a mode named explicitly that cannot run this configuration (under `all` such a
    /// mode is listed as skipped instead).
    pub fn check_mode(&self, mode: ModeKind) -> Result<()> {
        if mode == ModeKind::Fused && self.via != ReduceVia::Update {
            return Err(Error::invalid(
                "reduce",
                format!("{} with --mode fused", self.via.name()),
                "update: fused mode realises every reduce as an update (T3's semantics)",
            ));
        }
        if mode == ModeKind::Fused && !self.collective.fusable() {
            return Err(Error::invalid(
                "collective",
                format!("{} with --mode fused", self.collective),
                format!("a ring collective or the direct reduce-scatter: {FUSED_KEEPS_NO_PARTIAL}"),
            ));
        }
        Ok(())
    }

    /// The bytes the ranks' buffers and inputs take together (outputs and inboxes counted whole
    /// per rank: an upper bound within the trackers' few bytes).
    pub fn footprint(&self) -> Result<Footprint> {
        let s = self.shape;
        let chunking = Chunking::new(s.m, self.ranks, self.chunks)?;
        let (mut device, mut inputs, mut packed) = (0u64, 0u64, 0u64);
        for p in 0..self.ranks {
            let rows = a_rows(self.collective, &chunking, p).len();
            let (a, b) = Padding::new(rows, s.k, s.n).bytes(self.dtype);
            device += a + b;
            packed = packed.max(a + b);
            inputs += ((rows * s.k + s.k * s.n) * 4) as u64;
        }
        let ldc = Padding::ldc(s.n, self.out_dtype);
        let outputs = (s.m * ldc * self.out_dtype.bytes()) as u64 * self.ranks as u64;
        let inboxes = (self.via != ReduceVia::Update && self.collective != Collective::AllGather)
            || self.collective == Collective::DirectAllReduce;
        device += outputs * if inboxes { 2 } else { 1 };
        // Packing builds the padded f32 copy and its encoded bytes of one rank at a time.
        Ok(Footprint {
            device,
            host: inputs + 2 * packed + self.plan_bytes(),
        })
    }

    /// The host bytes the plan and its lowerings take: [`PLAN_BYTES_PER_ITEM`] per chunk and per
    /// step (a chunk travels ranks - 1 hops; an all-reduce twice), saturating.
    pub fn plan_bytes(&self) -> u64 {
        let chunks = (self.ranks as u64).saturating_mul(self.chunks as u64);
        let hops = self.ranks.saturating_sub(1) as u64
            * match self.collective {
                Collective::AllReduce => 2,
                // Every chunk goes to every peer from every rank.
                Collective::DirectAllReduce => self.ranks as u64,
                _ => 1,
            };
        chunks
            .saturating_add(chunks.saturating_mul(hops))
            .saturating_mul(PLAN_BYTES_PER_ITEM)
    }

    /// Refuses a run whose buffers do not fit in memory together, before any is allocated: host
    /// memory always, and device memory too where the device is the host (a CPU adapter). A
    /// discrete device's own memory is not known to wgpu; its allocations fail as GPU errors.
    pub fn check_memory(&self, cpu_adapter: bool, available_host: Option<u64>) -> Result<()> {
        let f = self.footprint()?;
        let Some(limit) = available_host else {
            return Ok(());
        };
        let need = f.host + if cpu_adapter { f.device } else { 0 };
        if need <= limit {
            return Ok(());
        }
        Err(Error::TooLarge {
            what: format!(
                "{} ranks of {} at {} chunks each ({} host bytes of inputs and plan{})",
                self.ranks,
                self.shape,
                self.chunks,
                f.host,
                if cpu_adapter {
                    format!(
                        " + {} bytes of device buffers, in host memory on this CPU adapter",
                        f.device
                    )
                } else {
                    String::new()
                }
            ),
            bytes: need,
            limit_name: "available host memory (MemAvailable)",
            limit,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shapes::Shape;

    fn config(collective: Collective, via: ReduceVia) -> Config {
        Config {
            chunks: 2,
            collective,
            via,
            ..Config::new(Shape::new(64, 32, 16).unwrap(), 4)
        }
    }

    #[test]
    fn combinations_that_cannot_apply_are_refused() {
        for c in Collective::ALL {
            for via in [ReduceVia::Update, ReduceVia::Land, ReduceVia::Forward] {
                let ok = match (via, c) {
                    (ReduceVia::Update, _) => true,
                    (_, Collective::AllGather) => false,
                    (ReduceVia::Forward, Collective::DirectReduceScatter) => false,
                    (_, Collective::DirectAllReduce) => false,
                    _ => true,
                };
                let r = config(c, via).validate();
                assert_eq!(r.is_ok(), ok, "{c} {via:?}: {r:?}");
                if let Err(e) = r {
                    assert!(matches!(e, Error::Invalid { .. }));
                    assert!(e.to_string().contains(via.name()), "{e}");
                }
                let fused = config(c, via).check_mode(ModeKind::Fused);
                assert_eq!(
                    fused.is_ok(),
                    via == ReduceVia::Update && c != Collective::DirectAllReduce,
                    "{fused:?}"
                );
                assert!(config(c, via).check_mode(ModeKind::Host).is_ok());
            }
        }
        let mut c = config(Collective::ReduceScatter, ReduceVia::Update);
        c.chunks = 100;
        assert!(c.validate().is_err());
    }

    #[test]
    fn footprint_counts_every_rank_and_refuses_what_does_not_fit() {
        let c = config(Collective::ReduceScatter, ReduceVia::Land);
        let f = c.footprint().unwrap();
        // Outputs and inboxes: 2 x 4 ranks x 64 x 32 floats, plus the padded operands.
        assert!(f.device > 2 * 4 * 64 * 32 * 4, "{f:?}");
        assert!(f.host >= 4 * (64 * 16 + 16 * 32) * 4, "{f:?}");
        assert!(c.check_memory(true, Some(f.host + f.device)).is_ok());
        assert!(c.check_memory(false, Some(f.host)).is_ok());
        assert!(c.check_memory(true, None).is_ok());
        let e = c.check_memory(true, Some(f.host)).unwrap_err().to_string();
        assert!(
            e.contains(&(f.host + f.device).to_string()) && e.contains("MemAvailable"),
            "{e}"
        );
        // The plan counts: 16M chunks of one row each need far more than their buffers.
        let mut many = c.clone();
        many.shape = Shape::new(1 << 24, 1, 1).unwrap();
        many.ranks = 1;
        many.chunks = 1 << 24;
        assert!(many.footprint().unwrap().host >= (1u64 << 24) * PLAN_BYTES_PER_ITEM);
        let e = many
            .check_memory(false, Some(64 << 30))
            .unwrap_err()
            .to_string();
        assert!(e.contains("16777216 chunks") && e.contains("plan"), "{e}");
        // Steps count too: 64 ranks of 64 chunks all-reduced make half a million.
        let mut wide = c.clone();
        wide.collective = Collective::AllReduce;
        wide.ranks = 64;
        wide.chunks = 64;
        assert_eq!(wide.plan_bytes(), 4096 * (1 + 2 * 63) * PLAN_BYTES_PER_ITEM);
    }
}
