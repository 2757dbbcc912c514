//! The modes as data: which way of realising triggers a run asks for, named once for the core, the
//! command line, the report and the page.

use crate::error::{Error, Result};

/// How a run realises its triggers (DESIGN.md's "mode"); the runner of each is in src/modes/.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum ModeKind {
    /// The baseline: every GEMM, then the collective.
    Sequential,
    /// The host reads the trackers after each submission and submits the chunks that are ready.
    Host,
    /// The order is planned ahead: steps share passes with later GEMM work.
    Encoded,
    /// On the GPU itself: the GEMM's epilogue or spare workgroups trigger and move each chunk.
    Fused,
}

/// When a mode decides that a step may start: the report marks the modes that track chunk completion
/// at run time (T3's trigger) apart from those whose order is fixed before anything runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Trigger {
    /// No overlap: every step after every GEMM (sequential).
    None,
    /// Planned ahead: the order of GEMMs and steps is encoded before the run (encoded).
    Planned,
    /// Tracked at run time: a chunk's counter reaching its threshold starts its steps (host, fused).
    Tracked,
}

impl Trigger {
    /// Its word in the report's table and CSV.
    pub fn name(self) -> &'static str {
        match self {
            Trigger::None => "none",
            Trigger::Planned => "planned",
            Trigger::Tracked => "tracked",
        }
    }
}

impl ModeKind {
    /// Every mode, in report order.
    pub const ALL: [ModeKind; 4] = [
        ModeKind::Sequential,
        ModeKind::Host,
        ModeKind::Encoded,
        ModeKind::Fused,
    ];

    /// Its name on the command line, in the report and the JSON.
    pub fn name(self) -> &'static str {
        match self {
            ModeKind::Sequential => "sequential",
            ModeKind::Host => "host",
            ModeKind::Encoded => "encoded",
            ModeKind::Fused => "fused",
        }
    }

    /// Every mode's name, in report order.
    pub fn names() -> [&'static str; 4] {
        Self::ALL.map(Self::name)
    }

    /// The mode named `s`; an unknown name is an error listing the modes.
    pub fn parse(s: &str) -> Result<ModeKind> {
        Self::ALL
            .into_iter()
            .find(|m| m.name() == s.trim())
            .ok_or_else(|| {
                Error::invalid(
                    "mode",
                    format!("'{s}'"),
                    format!("one of {}", Self::names().join(", ")),
                )
            })
    }

    /// When its steps may start.
    pub fn trigger(self) -> Trigger {
        match self {
            ModeKind::Sequential => Trigger::None,
            ModeKind::Encoded => Trigger::Planned,
            ModeKind::Host | ModeKind::Fused => Trigger::Tracked,
        }
    }

    /// Whether it runs with the ranks spread over several devices: the host loop can hold the
    /// host's copies between submissions; encoded mode's single submission and fused mode's epilogue
    /// writing the peers' buffers cannot.
    pub fn spans_devices(self) -> bool {
        matches!(self, ModeKind::Sequential | ModeKind::Host)
    }

    /// Whether its efficiency is against a sequential run of its own (fused mode packs its GEMM
    /// differently from the others, so T_seq is not its baseline).
    pub fn own_baseline(self) -> bool {
        self == ModeKind::Fused
    }
}

impl std::fmt::Display for ModeKind {
    /// Its name, padded to the format's width (the results table's columns: `{:<10}`).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.name())
    }
}

impl std::str::FromStr for ModeKind {
    type Err = Error;
    fn from_str(s: &str) -> Result<ModeKind> {
        ModeKind::parse(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_names_are_refused() {
        for m in ModeKind::ALL {
            assert_eq!(ModeKind::parse(m.name()).unwrap(), m);
            assert_eq!(serde_json::to_string(&m).unwrap(), format!("\"{m}\""));
        }
        let e = ModeKind::parse("bogus").unwrap_err().to_string();
        assert!(
            e.contains("bogus") && e.contains("sequential, host, encoded, fused"),
            "{e}"
        );
        assert!(ModeKind::ALL.iter().filter(|m| m.spans_devices()).count() == 2);
    }

    #[test]
    fn a_name_fills_its_column() {
        // The results table aligns its columns with `{:<10}`.
        assert_eq!(format!("[{:<10}]", ModeKind::Host), "[host      ]");
        assert_eq!(format!("[{:>7}]", ModeKind::Fused), "[  fused]");
    }
}
