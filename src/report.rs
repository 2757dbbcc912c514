//! Reports: the results table a person reads (its first screen and every figure), the JSON and CSV a
//! script reads, and the files a run can write (NumPy dumps of every rank's inputs and outputs); the
//! formatting they share.

mod dump;
mod rows;
mod summary;
mod text;

pub use dump::dump;
pub use rows::{csv_text, Row};
pub use summary::summary;
pub use text::text;

use crate::consistency::Kind;
use crate::experiment::Report;
use crate::stats::Spread;

/// A figure to three decimals (ms, a ratio), or "-".
fn ms(v: Option<f64>) -> String {
    v.map(|x| format!("{x:.3}")).unwrap_or_else(|| "-".into())
}

/// A relative error in scientific notation, or "-".
fn sci(v: Option<f64>) -> String {
    v.map(|x| format!("{x:.2e}")).unwrap_or_else(|| "-".into())
}

/// A mode row's error against the f64 reference, marked where the result is wrong (past its bound,
/// or elements past their own): then every time on the row is a wrong computation's.
fn error_cell(m: &crate::experiment::ModeResult) -> String {
    if m.result_wrong() {
        format!("{} WRONG", sci(m.max_rel_error))
    } else {
        sci(m.max_rel_error)
    }
}

/// A mode row's checks: its own failures by name, the baselines' as one word (their lines name them).
/// No room to overlap (T_seq within noise of ideal: one rank, or a collective lost in the GEMM's
/// noise) is said as such, not as a failure: every figure may be right, only an efficiency would
/// mean nothing (and is left empty).
fn mode_checks(r: &Report, failed: &[String]) -> String {
    let kind = |n: &String| r.checks.iter().find(|c| &c.name == n).map(|c| c.kind);
    let room = failed.iter().any(|n| kind(n) == Some(Kind::Room));
    let failed: Vec<&String> = failed
        .iter()
        .filter(|n| kind(n) != Some(Kind::Room))
        .collect();
    let verdict = if failed.is_empty() {
        "ok".to_string()
    } else {
        let baseline = |n: &String| r.checks.iter().any(|c| &c.name == n && c.subject.is_none());
        let mut names: Vec<&str> = failed
            .iter()
            .filter(|n| !baseline(n))
            .map(|n| n.as_str())
            .collect();
        if failed.iter().any(|n| baseline(n)) {
            names.insert(0, "baselines");
        }
        format!("FAILED: {}", names.join(", "))
    };
    if room {
        verdict + ", no room to overlap"
    } else {
        verdict
    }
}

/// lo..hi of a spread, or "-".
fn spread(sp: Option<Spread>) -> String {
    sp.map(|x| format!("[{:.3}..{:.3}]", x.lo, x.hi))
        .unwrap_or_else(|| "-".into())
}

/// A rate in GB/s to three significant figures or so, however small (a CPU adapter's links).
pub fn gbps(g: f64) -> String {
    if g >= 10.0 {
        format!("{g:.1}")
    } else if g >= 0.01 {
        format!("{g:.2}")
    } else {
        format!("{g:.2e}")
    }
}

/// What a workload line adds of the GEMM's order: nothing for the default (shard by shard).
fn order_said(c: &crate::config::Config) -> &'static str {
    match c.order {
        crate::schedule::Order::Stage => "",
        crate::schedule::Order::Chunk => ", GEMM in chunk order",
    }
}

pub fn human_bytes(b: u64) -> String {
    let b = b as f64;
    if b >= 1e9 {
        format!("{:.2} GB", b / 1e9)
    } else if b >= 1e6 {
        format!("{:.2} MB", b / 1e6)
    } else {
        format!("{:.1} kB", b / 1e3)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_round_trip_through_csv_with_one_header() {
        let row = Row {
            workload: "w, quoted \"name\"".into(),
            m: 7,
            arbitrate: Some(3),
            gemm_grid: None,
            order: "chunk".into(),
            mode: "host".into(),
            speedup: Some(1.25),
            trackers_ok: Some(true),
            skipped: Some("line\nbreak".into()),
            ..Row::default()
        };
        let text = csv_text(&[row.clone(), Row::default()], true).unwrap();
        assert!(
            text.starts_with("workload,adapter,m,n,k,ranks,chunks,collective,order,reduce_via,"),
            "{text}"
        );
        let back: Vec<Row> = csv::Reader::from_reader(text.as_bytes())
            .deserialize()
            .collect::<std::result::Result<_, _>>()
            .unwrap();
        assert_eq!(back, vec![row, Row::default()]);
        assert!(!csv_text(&[Row::default()], false)
            .unwrap()
            .contains("workload"));
        // Columns missing or unparsable read as empty.
        let short: Row = csv::Reader::from_reader("mode,speedup\nhost,fast\n".as_bytes())
            .deserialize()
            .next()
            .unwrap()
            .unwrap();
        assert_eq!((short.mode.as_str(), short.speedup), ("host", None));
        // A CSV from before the order column reads, its order not known.
        let old: Row = csv::Reader::from_reader(
            "chunks,collective,reduce_via,mode\n2,all-reduce,update,host\n".as_bytes(),
        )
        .deserialize()
        .next()
        .unwrap()
        .unwrap();
        assert_eq!((old.chunks, old.order.as_str()), (2, ""));
    }

    #[test]
    fn rank_files_are_recognised_and_nothing_else() {
        for yes in ["rank0_a.npy", "rank12_out.npy", "rank3_b.npy"] {
            assert!(super::dump::rank_file(yes), "{yes}");
        }
        for no in [
            "rank_a.npy",
            "rankx_a.npy",
            "rank0_c.npy",
            "meta.json",
            "rank0_a.npy.bak",
            "my.npy",
        ] {
            assert!(!super::dump::rank_file(no), "{no}");
        }
    }
}
