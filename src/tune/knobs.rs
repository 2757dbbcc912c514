//! One tuned configuration as data: the knobs `t3 tune` searches, how they are applied onto a
//! [`Config`], read back from one, and said in words; and where a run's configuration came from.

use serde::{Deserialize, Serialize};

use crate::config::fused::{Pieces, MAX_KNOB};
use crate::config::host::{HostGrain, MAX_IN_FLIGHT};
use crate::config::{Config, ModeKind, StepLead};
use crate::error::{Error, Result};
use crate::plan::ReduceVia;
use crate::schedule::{Collective, Order};
use crate::steps::{Link, MAX_LINK_WORKGROUPS};

/// The knobs of one configuration. `None` leaves a knob to its default (the mode's or the device's);
/// the table stores this struct, so its names are the table's.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(default)]
pub struct Knobs {
    /// Chunks per rank's share of the output.
    pub chunks: usize,
    /// "update", "land" or "forward".
    pub reduce: String,
    /// A persistent GEMM grid's workgroups (None: off).
    pub gemm_grid: Option<u32>,
    /// GEMM workgroups after the steps (None: auto).
    pub step_lead: Option<u32>,
    /// Each step's workgroup budget (None: unthrottled).
    pub link_workgroups: Option<u32>,
    /// Workgroups the steps of a pass share beside GEMM work (`--arbitrate`; None: off, and on
    /// several devices the link's kernels' default).
    pub arbitrate: Option<u32>,
    /// Host mode's grain, "chunk", "stage" or chunks per submission (None: a stage; the model's
    /// grain on four devices or more is written out, as "2").
    pub host_grain: Option<String>,
    /// Host mode's submissions in flight per device (None: its default).
    pub host_depth: Option<usize>,
    /// Fused mode's spare workgroups (None: its default).
    pub fused_spares: Option<u32>,
    /// Fused mode's pieces per transfer (None: auto; 0: the link's).
    pub fused_pieces: Option<u32>,
    /// Fused mode's pause between an idle spare's polls (None: its default).
    pub fused_pause: Option<u32>,
    /// The collective run in the point's place ([`Collective::alternative`]: the direct all-reduce
    /// for the ring's at two ranks), by its name (None: the point's own). [`Knobs::of`] names the
    /// direct all-reduce wherever a configuration runs it, the point's own or not.
    pub collective: Option<String>,
    /// The order the GEMM makes its chunks in, "chunk" (None: shard by shard, the stage order).
    pub order: Option<String>,
}

/// Where a mode's configuration came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// The tune table for this adapter and point (flags given on the command line still win).
    Table,
    /// The cost model (no table, or none for this point).
    Model,
    /// Flags (and environment settings) alone, or the built-in defaults where none is given.
    Flags,
}

impl Source {
    pub fn name(self) -> &'static str {
        match self {
            Source::Table => "table",
            Source::Model => "model",
            Source::Flags => "flags",
        }
    }
}

/// Whether `mode` can run `c`: the configuration valid and the mode able to run it (no GPU work).
pub fn runs(c: &Config, mode: ModeKind) -> Result<()> {
    c.validate()?;
    c.check_mode(mode)
}

/// A reduce realisation by its name.
pub fn parse_reduce(s: &str) -> Result<ReduceVia> {
    [ReduceVia::Update, ReduceVia::Land, ReduceVia::Forward]
        .into_iter()
        .find(|v| v.name() == s)
        .ok_or_else(|| Error::invalid("tuned reduce", s, "update, land or forward"))
}

/// A tuned collective by its name: the point's own (`own` at `ranks` ranks), or the alternative the
/// tuner may run in its place.
pub fn check_collective(s: &str, own: Collective, ranks: usize) -> Result<Collective> {
    let alternative = own.alternative(ranks);
    Collective::parse(s)
        .filter(|&c| c == own || Some(c) == alternative)
        .ok_or_else(|| {
            Error::invalid(
                "tuned collective",
                s,
                match alternative {
                    Some(a) => format!("the point's ({own}) or {a}"),
                    None => format!("the point's ({own}): it has no alternative at {ranks} ranks"),
                },
            )
        })
}

/// A host grain by its name ([`HostGrain::name`]).
pub fn parse_grain(s: &str) -> Result<HostGrain> {
    match s {
        "chunk" => Ok(HostGrain::Chunk),
        "stage" => Ok(HostGrain::Stage),
        _ => match s.parse::<usize>() {
            Ok(n) if n >= 1 => Ok(HostGrain::chunks(n)),
            _ => Err(Error::invalid(
                "tuned host grain",
                s,
                "chunk, stage or a chunk count of at least 1",
            )),
        },
    }
}

impl Knobs {
    /// The same configuration written one way, so that a search measures it once: a host grain of
    /// a whole stage, or of at least the chunks per rank, is None (a stage), and any other by its
    /// name (one chunk at a time is `chunk`). In the chunk order a stage holds a chunk of every
    /// shard, not `chunks` of one, so a grain stands as written there.
    pub fn canonical(&self) -> Knobs {
        let mut k = self.clone();
        if k.order.is_some() {
            return k;
        }
        if let Some(g) = k.host_grain.as_deref().and_then(|g| parse_grain(g).ok()) {
            k.host_grain = g
                .chunks_per_submission()
                .filter(|&n| n < k.chunks)
                .map(|_| g.name());
        }
        k
    }

    /// How many knobs differ between `self` and `other`.
    pub fn differences(&self, other: &Knobs) -> usize {
        [
            self.chunks != other.chunks,
            self.reduce != other.reduce,
            self.gemm_grid != other.gemm_grid,
            self.step_lead != other.step_lead,
            self.link_workgroups != other.link_workgroups,
            self.arbitrate != other.arbitrate,
            self.host_grain != other.host_grain,
            self.host_depth != other.host_depth,
            self.fused_spares != other.fused_spares,
            self.fused_pieces != other.fused_pieces,
            self.fused_pause != other.fused_pause,
            self.collective != other.collective,
            self.order != other.order,
        ]
        .into_iter()
        .filter(|&d| d)
        .count()
    }

    /// The knobs `c` runs with.
    pub fn of(c: &Config) -> Self {
        Knobs {
            chunks: c.chunks,
            reduce: c.via.name().into(),
            gemm_grid: c.gemm_grid,
            step_lead: match c.step_lead {
                StepLead::Auto => None,
                StepLead::Workgroups(w) => Some(w),
            },
            link_workgroups: c.link.cap(),
            arbitrate: c.arbitrate,
            host_grain: c.host.grain.map(HostGrain::name),
            host_depth: c.host.in_flight,
            fused_spares: c.fused.spares,
            fused_pieces: match c.fused.pieces {
                Pieces::Auto => None,
                Pieces::Link => Some(0),
                Pieces::Count(n) => Some(n),
            },
            fused_pause: c.fused.pause,
            // Named wherever a configuration runs it: a configuration does not say whose
            // alternative it is, and the ring's all-reduce has only this one.
            collective: (c.collective == Collective::DirectAllReduce)
                .then(|| c.collective.name().into()),
            order: (c.order != Order::Stage).then(|| c.order.name().into()),
        }
    }

    /// `base` with these knobs; refuses a knob whose value cannot be read (a hand-edited table).
    pub fn apply(&self, base: &Config) -> Result<Config> {
        if self.chunks == 0 {
            return Err(Error::invalid("tuned chunks", 0, "at least 1"));
        }
        // Fused mode's own bounds, said here as the table's (its lowering names the flags).
        for (what, v) in [
            ("tuned fused spares", self.fused_spares),
            ("tuned fused pieces", self.fused_pieces),
            ("tuned fused pause", self.fused_pause),
        ] {
            if let Some(n) = v.filter(|&n| n > MAX_KNOB) {
                return Err(Error::invalid(what, n, format!("at most {MAX_KNOB}")));
            }
        }
        // The flags' bounds, said as the table's: a value no flag takes is no tuned choice.
        if let Some(d) = self.host_depth.filter(|d| !(1..=MAX_IN_FLIGHT).contains(d)) {
            let must = format!("1 to {MAX_IN_FLIGHT}");
            return Err(Error::invalid("tuned host depth", d, must));
        }
        if let Some(w) = self
            .link_workgroups
            .filter(|w| !(1..=MAX_LINK_WORKGROUPS).contains(w))
        {
            let must = format!("1 to {MAX_LINK_WORKGROUPS}");
            return Err(Error::invalid("tuned link workgroups", w, must));
        }
        let mut c = base.clone();
        c.chunks = self.chunks;
        c.via = parse_reduce(&self.reduce)?;
        c.gemm_grid = self.gemm_grid.filter(|&g| g > 0);
        c.step_lead = self.step_lead.map_or(StepLead::Auto, StepLead::Workgroups);
        // An emulated link's budget stands for the rate asked of it: only a real link's is tuned.
        if let Some(w) = self.link_workgroups {
            c.link = Link::Workgroups(w);
        }
        c.arbitrate = self.arbitrate.filter(|&w| w > 0);
        c.host.grain = self.host_grain.as_deref().map(parse_grain).transpose()?;
        c.host.in_flight = self.host_depth;
        c.fused.spares = self.fused_spares;
        c.fused.pieces = match self.fused_pieces {
            None => Pieces::Auto,
            Some(0) => Pieces::Link,
            Some(n) => Pieces::Count(n),
        };
        c.fused.pause = self.fused_pause;
        if let Some(name) = &self.collective {
            c.collective = check_collective(name, base.collective, base.ranks)?;
        }
        c.order = match self.order.as_deref() {
            None => Order::Stage,
            Some(o) => {
                Order::parse(o).ok_or_else(|| Error::invalid("tuned order", o, "stage or chunk"))?
            }
        };
        Ok(c)
    }

    /// `base` with these knobs where `mode` can run it: the knobs read, the configuration valid,
    /// the mode able to run it (no GPU work); None otherwise. The tuner measures no other: a
    /// combination of knobs that cannot run (the direct all-reduce with a reduce but update) is no
    /// alternative.
    pub fn runnable(&self, base: &Config, mode: ModeKind) -> Option<Config> {
        self.runnable_or_why(base, mode).ok()
    }

    /// [`Knobs::runnable`], with why not where it cannot run.
    pub fn runnable_or_why(&self, base: &Config, mode: ModeKind) -> Result<Config> {
        let c = self.apply(base)?;
        runs(&c, mode)?;
        Ok(c)
    }

    /// The knobs in words, those that matter to `mode` only: "chunks 2, reduce update, grid 132, ...".
    pub fn describe(&self, mode: ModeKind) -> String {
        let opt = |v: Option<String>, default: &str| v.unwrap_or_else(|| default.into());
        let mut parts = vec![
            format!("chunks {}", self.chunks),
            format!("reduce {}", self.reduce),
        ];
        if let Some(c) = &self.collective {
            parts.insert(0, c.clone());
        }
        if let Some(o) = &self.order {
            parts.push(format!("{o} order"));
        }
        if mode != ModeKind::Fused {
            parts.push(format!(
                "grid {}",
                opt(self.gemm_grid.map(|g| g.to_string()), "off")
            ));
            parts.push(format!(
                "lead {}",
                opt(self.step_lead.map(|g| g.to_string()), "auto")
            ));
        }
        if let Some(w) = self.link_workgroups {
            parts.push(format!("link {w} wg"));
        }
        if let Some(w) = self.arbitrate {
            parts.push(format!("arbitrate {w} wg"));
        }
        if mode == ModeKind::Host {
            // A grain of N chunks per rank per submission reads as such, not as a bare number.
            let grain = match self.host_grain.as_deref().map(|g| (g, parse_grain(g))) {
                Some((_, Ok(HostGrain::Chunks(n)))) => format!("{n} chunks"),
                Some((_, Ok(g))) => g.name(),
                g => opt(g.map(|(g, _)| g.to_string()), "stage"),
            };
            parts.push(format!("grain {grain}"));
            parts.push(format!(
                "depth {}",
                opt(self.host_depth.map(|d| d.to_string()), "default")
            ));
        }
        if mode == ModeKind::Fused {
            let pieces = match self.fused_pieces {
                None => "auto".into(),
                Some(0) => "link".into(),
                Some(n) => n.to_string(),
            };
            parts.push(format!(
                "spares {}",
                opt(self.fused_spares.map(|s| s.to_string()), "auto")
            ));
            parts.push(format!("pieces {pieces}"));
            parts.push(format!(
                "pause {}",
                opt(self.fused_pause.map(|s| s.to_string()), "auto")
            ));
        }
        parts.join(", ")
    }
}

/// The knobs the command line set explicitly: they win over the table.
#[derive(Clone, Copy, Debug, Default)]
pub struct Given {
    pub chunks: bool,
    pub reduce: bool,
    pub gemm_grid: bool,
    pub step_lead: bool,
    pub link: bool,
    pub arbitrate: bool,
    pub host_grain: bool,
    pub host_depth: bool,
    pub fused_spares: bool,
    pub fused_pieces: bool,
    pub fused_pause: bool,
    /// `--collective`: the point's collective is run as named, not its alternative.
    pub collective: bool,
    /// `--order`: the GEMM's order as given, not searched.
    pub order: bool,
}

impl Given {
    /// `table`'s knobs with every given one taken from `flags`.
    pub fn overlay(&self, table: &Knobs, flags: &Knobs) -> Knobs {
        let mut k = table.clone();
        if self.chunks {
            k.chunks = flags.chunks;
        }
        if self.reduce {
            k.reduce = flags.reduce.clone();
        }
        if self.gemm_grid {
            k.gemm_grid = flags.gemm_grid;
        }
        if self.step_lead {
            k.step_lead = flags.step_lead;
        }
        if self.link {
            k.link_workgroups = flags.link_workgroups;
        }
        if self.arbitrate {
            k.arbitrate = flags.arbitrate;
        }
        if self.host_grain {
            k.host_grain = flags.host_grain.clone();
        }
        if self.host_depth {
            k.host_depth = flags.host_depth;
        }
        if self.fused_spares {
            k.fused_spares = flags.fused_spares;
        }
        if self.fused_pieces {
            k.fused_pieces = flags.fused_pieces;
        }
        if self.fused_pause {
            k.fused_pause = flags.fused_pause;
        }
        if self.collective {
            k.collective = flags.collective.clone();
        }
        if self.order {
            k.order = flags.order.clone();
        }
        k
    }
}
