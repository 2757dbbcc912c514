//! The first screen of a run: the results table first, in 100 columns, then a line each for the
//! baselines, the workload and the devices, and what failed.

use super::{mode_checks, ms};
use crate::config::ModeKind;
use crate::consistency::Kind;
use crate::experiment::{ModeResult, Report};
use crate::stats::Spread;

/// "1.2 TFLOP/s", or GFLOP/s below one TFLOP/s (a CPU adapter's rate would print as 0.00).
fn rate(tflops: f64) -> String {
    if tflops >= 1.0 {
        format!("{tflops:.1} TFLOP/s")
    } else {
        format!("{:.1} GFLOP/s", tflops * 1e3)
    }
}

/// The first screen of a run: the results table first, in 100 columns, then the baselines and the
/// workload in a line each, and what failed; [`text`] has every figure and setting (`--verbose`).
pub fn summary(r: &Report) -> String {
    let c = &r.config;
    let mut s = String::new();
    let mut line = |l: String| {
        s += &clip(&l, 100);
        s.push('\n');
    };
    if r.emulated {
        line("note: a CPU adapter emulates the GPU here: its times are not a GPU's, and overlap may not pay".into());
    }
    line("mode       trigger   median ms   speedup  overlap eff  max rel err  checks".into());
    for m in &r.results {
        if let Some(why) = &m.skipped {
            line(format!(
                "{:<10} {:<8}  skipped: {why}",
                m.mode,
                m.trigger.name()
            ));
            continue;
        }
        let eff = match m.overlap_efficiency {
            // Sequential is the baseline: no overlap to rate.
            _ if m.mode == ModeKind::Sequential => "-".to_string(),
            _ => efficiency(m),
        };
        // The verdict only: the failed checks are listed below the table by name.
        let full = mode_checks(r, &m.checks_failed);
        let room = full.ends_with("no room to overlap");
        let mut checks = match (full.starts_with("FAILED"), room) {
            (false, _) => full,
            (true, true) => "FAILED, no room to overlap".into(),
            (true, false) => "FAILED (below)".into(),
        };
        if m.trackers_ok == Some(false) {
            checks = format!("trackers WRONG; {checks}");
        }
        if let Some(n) = m.elements_past_rounding.filter(|&n| n > 0) {
            checks = format!("{n} elements past the rounding bound; {checks}");
        }
        if m.fallback
            .as_ref()
            .is_some_and(|f| f.starts_with("fell back"))
        {
            checks = format!("{checks}; fell back to sequential (below)");
        }
        line(format!(
            "{:<10} {:<8} {:>10} {:>9} {:>12} {:>12}  {checks}",
            m.mode,
            m.trigger.name(),
            ms(m.median_ms),
            speedup(m),
            eff,
            super::error_cell(m),
        ));
    }
    if r.results.iter().any(|m| m.own_baseline) {
        line("* efficiency against the mode's own GEMM (--verbose: its own baseline)".into());
    }
    for l in own_sequential_notes(r)
        .into_iter()
        .chain(above_ideal_notes(&r.results))
        .chain(untuned_loss_notes(&r.results, r.t_seq_spread, r.emulated))
    {
        line(l);
    }
    line(String::new());
    line(format!(
        "baselines  ms: T_gemm {:.3} ({}), T_comm {:.3}, T_seq {:.3}, ideal {:.3}",
        r.t_gemm_ms,
        rate(r.gemm_tflops),
        r.t_comm_ms,
        r.t_seq_ms,
        r.ideal_ms,
    ));
    let on = match r
        .devices
        .iter()
        .filter(|d| d.starts_with("device "))
        .count()
    {
        // The adapter's name without its driver's details (--verbose has them).
        0 | 1 => r.adapter.split(" (").next().unwrap_or_default().to_string(),
        n => {
            let links: Vec<&String> = r
                .devices
                .iter()
                .filter(|d| d.starts_with("link "))
                .collect();
            // Each link's line names its path first ("link 0->1: zero-copy, ...").
            let mut kinds: Vec<&str> = Vec::new();
            for l in &links {
                let path = l.split(": ").nth(1).unwrap_or_default();
                let kind = ["zero-copy", "engine"]
                    .into_iter()
                    .find(|k| path.starts_with(k))
                    .unwrap_or("host-copy");
                if !kinds.contains(&kind) {
                    kinds.push(kind);
                }
            }
            format!(
                "{n} devices, {} links{}",
                kinds.join(" and "),
                links_seen(r)
            )
        }
    };
    line(format!(
        "workload   {} x {} ranks, {} chunks/rank, {} ({}{}), {} {}, {} outputs",
        c.shape,
        c.ranks,
        c.chunks,
        c.collective,
        c.via.name(),
        super::order_said(c),
        c.dtype.name(),
        r.gemm_kernel.name(),
        c.out_dtype.name(),
    ));
    line(format!("on         {on}"));
    if r.links_against_calibration().is_some() {
        line(format!(
            "links      the collective alone{}",
            against_calibration(r)
        ));
    }
    for l in config_lines(r) {
        line(l);
    }
    let (room, failed): (Vec<_>, Vec<_>) = r
        .checks
        .iter()
        .filter(|c| !c.ok)
        .partition(|c| c.kind == Kind::Room);
    if !failed.is_empty() {
        line("checks failed (overlap efficiency left empty where they bear on it):".into());
        for c in failed {
            line(format!("  {}: {}", c.name, c.detail));
        }
    }
    if !room.is_empty() {
        line("no room to overlap (T_seq within noise of ideal: efficiencies left empty, the times stand)".into());
    }
    line("(every figure, spread and setting: --verbose or --json)".into());
    s
}

/// A mode's speedup, marked where it ran at a configuration of its own ([`own_sequential_notes`]).
pub fn speedup(m: &ModeResult) -> String {
    let mark = if m.own_t_seq_ms.is_some() { "†" } else { "" };
    format!("{}{mark}", ms(m.speedup))
}

/// The overlap efficiency as the tables print it: `*` where against the mode's own GEMM, `^` where
/// above 1 ([`above_ideal_notes`] says why).
pub fn efficiency(m: &ModeResult) -> String {
    m.overlap_efficiency.map_or_else(
        || "-".into(),
        |x| {
            format!(
                "{x:.3}{}{}",
                if m.own_baseline { "*" } else { "" },
                if x > 1.0 { "^" } else { "" }
            )
        },
    )
}

/// A note per mode whose efficiency is above 1: it ran under the ideal its baselines give, which
/// overlap alone cannot do, within the noise the consistency checks allow (else no efficiency is
/// given): the figure says the baselines bound it loosely, not that it hid more than all.
pub fn above_ideal_notes(results: &[ModeResult]) -> Vec<String> {
    results
        .iter()
        .filter(|m| m.overlap_efficiency.is_some_and(|x| x > 1.0))
        .filter_map(|m| {
            let (t, ideal, seq) = (m.median_ms?, m.ideal_ms?, m.seq_ms?);
            Some(format!(
                "^ {}: {t:.3} ms, under its ideal {ideal:.3} within noise: read its efficiency as about 1 (sequential {seq:.3} ms; the baselines bound it loosely)",
                m.mode
            ))
        })
        .collect()
}

/// Where modes at the model's configuration (`[model]`: no tune table's choice) ran slower than
/// sequential (its spread `t_seq`) beyond the noise of both (the low end of the mode's spread above
/// the high end of sequential's, each of two repetitions or more): which, and what finds their
/// fastest or falls back. A table's choice says its own (its fallback included); one mode behind by
/// noise alone is not said to lose, nor any on an emulated GPU, whose times are not a GPU's.
pub fn untuned_loss_notes(
    results: &[ModeResult],
    t_seq: Option<Spread>,
    emulated: bool,
) -> Vec<String> {
    let Some(seq) = t_seq.filter(|x| x.n >= 2 && !emulated) else {
        return Vec::new();
    };
    let losing: Vec<&str> = results
        .iter()
        .filter(|m| m.mode != ModeKind::Sequential)
        .filter(|m| m.config_source == Some(crate::tune::Source::Model))
        .filter(|m| m.spread_ms.is_some_and(|x| x.n >= 2 && x.lo > seq.hi))
        .map(|m| m.mode.name())
        .collect();
    if losing.is_empty() {
        return Vec::new();
    }
    vec![
        format!(
            "untuned    {}: slower than sequential here at the model's configuration;",
            losing.join(", ")
        ),
        "           `t3 tune` finds each mode's fastest here, or falls back where none pays".into(),
    ]
}

/// What a marked speedup is: over T_seq, while sequential at the mode's own configuration (a tune
/// table's choice, or fused mode's own on one GPU) took another time beside it.
pub fn own_sequential_notes(r: &Report) -> Vec<String> {
    r.results
        .iter()
        .filter_map(|m| {
            let own = m.own_t_seq_ms?;
            let t = m.median_ms?;
            Some(format!(
                "† {}: over T_seq; at its own configuration sequential took {own:.3} ms ({:.3}x that; its efficiency is against it)",
                m.mode,
                own / t
            ))
        })
        .collect()
}

/// Each mode's configuration and its source (modes that share both in one line; the source first,
/// so that a line cut to the screen's width keeps it and no line starts with a mode's name, as
/// the rows do), then what each fallback did and by how
/// much; nothing where no mode names one.
pub fn config_lines(r: &Report) -> Vec<String> {
    let mut groups: Vec<((String, &str), Vec<&str>)> = Vec::new();
    for m in r.results.iter().filter(|m| m.skipped.is_none()) {
        let Some(c) = &m.config else { continue };
        let what = (c.clone(), m.config_source.map_or("flags", |s| s.name()));
        match groups.iter_mut().find(|g| g.0 == what) {
            Some(g) => g.1.push(m.mode.name()),
            None => groups.push((what, vec![m.mode.name()])),
        }
    }
    let mut out: Vec<String> = groups
        .into_iter()
        .enumerate()
        .map(|(i, ((c, source), modes))| {
            let head = if i == 0 { "config" } else { "" };
            format!("{head:<10} [{source}] {}: {c}", modes.join(", "))
        })
        .collect();
    for m in &r.results {
        if let Some(f) = &m.fallback {
            out.push(format!("fallback   {}: {f}", m.mode));
        }
    }
    out
}

/// `line` cut to `width` characters, ending in "..." where cut.
fn clip(line: &str, width: usize) -> String {
    if line.chars().count() <= width {
        line.to_string()
    } else {
        line.chars().take(width - 3).collect::<String>() + "..."
    }
}

/// The links' rates read against the calibration's, where one was read: the share, or where the
/// collective outran the link by more than the noise, that one of the two figures is wrong.
pub(super) fn against_calibration(r: &Report) -> String {
    let Some((c, share, above)) = r.links_against_calibration() else {
        return String::new();
    };
    let streamed = super::gbps(c.streamed_gbps);
    if above {
        format!(
            "; ABOVE the {streamed} GB/s {} streamed with every link busy: one of the two figures is wrong",
            c.file
        )
    } else {
        format!(
            "; {share:.2} of the {streamed} GB/s {} streamed with every link busy",
            c.file
        )
    }
}

/// What the links carried in the collective alone, compact: the range over the links of their
/// bytes' rate over T_comm (`--verbose` and the JSON have each link's bytes and rate).
fn links_seen(r: &Report) -> String {
    if r.links.is_empty() || r.t_comm_ms <= 0.0 {
        return String::new();
    }
    let rates = r.links.iter().map(|l| l.gbps);
    let lo = super::gbps(rates.clone().fold(f64::INFINITY, f64::min));
    let hi = super::gbps(rates.fold(0.0, f64::max));
    let gbps = if lo == hi { hi } else { format!("{lo}-{hi}") };
    format!("; the collective alone {gbps} GB/s a link")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A host-mode row of `ms` with `efficiency` against sequential 9.167 and ideal 7.962 ms.
    fn row(ms: f64, efficiency: f64) -> ModeResult {
        ModeResult {
            median_ms: Some(ms),
            speedup: Some(9.167 / ms),
            overlap_efficiency: Some(efficiency),
            seq_ms: Some(9.167),
            ideal_ms: Some(7.962),
            ..ModeResult::blank(
                ModeKind::Host,
                crate::shapes::Dtype::F16,
                crate::reference::GEMM_BOUND,
            )
        }
    }

    #[test]
    fn an_efficiency_above_one_is_marked_and_said_to_be_loose() {
        // Two Vulkan devices on one H200: host mode ran under T_comm within its noise.
        let over = row(7.672, 1.241);
        assert_eq!(efficiency(&over), "1.241^");
        let notes = above_ideal_notes(std::slice::from_ref(&over));
        assert_eq!(notes.len(), 1);
        assert!(
            notes[0].starts_with("^ host: 7.672 ms, under its ideal 7.962 within noise: read its efficiency as about 1"),
            "{}",
            notes[0]
        );
        let fair = row(8.5, 0.553);
        assert_eq!(efficiency(&fair), "0.553");
        assert!(above_ideal_notes(&[fair]).is_empty());
        let own = ModeResult {
            own_baseline: true,
            ..row(8.5, 0.553)
        };
        assert_eq!(efficiency(&own), "0.553*");
    }

    #[test]
    fn modes_slower_than_sequential_at_the_models_configuration_are_said_with_the_tuner() {
        use crate::tune::Source;
        let spread = |lo: f64, hi: f64, n| Spread {
            median: (lo + hi) / 2.0,
            lo,
            hi,
            kind: "min/max",
            n,
        };
        // One H200, tnlg-op-tp2 f16 at the defaults: sequential 1.496-1.502 ms.
        let mode = |kind, lo, hi, source| ModeResult {
            mode: kind,
            spread_ms: Some(spread(lo, hi, 3)),
            config_source: Some(source),
            ..row(hi, 0.0)
        };
        let host = mode(ModeKind::Host, 1.733, 1.748, Source::Model);
        let encoded = mode(ModeKind::Encoded, 1.591, 1.593, Source::Model);
        let fused = mode(ModeKind::Fused, 1.368, 1.374, Source::Model);
        // Behind by less than the noise: not said to lose.
        let close = mode(ModeKind::Encoded, 1.500, 1.510, Source::Model);
        // A table's choice (or its fallback) says its own.
        let tabled = mode(ModeKind::Host, 1.733, 1.748, Source::Table);
        // One repetition: no spread to tell noise from a loss.
        let once = ModeResult {
            spread_ms: Some(spread(1.748, 1.748, 1)),
            ..host.clone()
        };
        let seq = Some(spread(1.496, 1.502, 3));
        let notes = untuned_loss_notes(&[host.clone(), encoded, fused.clone()], seq, false);
        assert_eq!(notes.len(), 2, "{notes:?}");
        assert!(
            notes[0].starts_with("untuned    host, encoded: slower than sequential"),
            "{}",
            notes[0]
        );
        assert!(notes[1].contains("`t3 tune`"), "{}", notes[1]);
        assert!(notes.iter().all(|l| l.chars().count() <= 100));
        for quiet in [fused, close, tabled, once] {
            assert!(untuned_loss_notes(&[quiet], seq, false).is_empty());
        }
        // No spread for sequential, or one of one repetition: no evidence either way; an emulated
        // GPU's times are not a GPU's.
        let one = Some(spread(1.496, 1.496, 1));
        for (t_seq, emulated) in [(None, false), (one, false), (seq, true)] {
            assert!(untuned_loss_notes(std::slice::from_ref(&host), t_seq, emulated).is_empty());
        }
    }

    #[test]
    fn a_result_past_its_bound_is_marked_wrong_beside_its_error() {
        // Host mode on two H200s whose f16 result came out 1.53e-3 from the reference, its bound
        // 1.08e-3: its row's error says so, as one within the bound does not.
        let past = ModeResult {
            max_rel_error: Some(1.53e-3),
            tolerance: 1.08e-3,
            ..row(3.831, -0.159)
        };
        assert_eq!(crate::report::error_cell(&past), "1.53e-3 WRONG");
        let within = ModeResult {
            max_rel_error: Some(6.48e-6),
            tolerance: 1.08e-3,
            ..row(3.496, 0.204)
        };
        assert_eq!(crate::report::error_cell(&within), "6.48e-6");
        let elements = ModeResult {
            elements_past_rounding: Some(3),
            ..within
        };
        assert!(crate::report::error_cell(&elements).ends_with("WRONG"));
    }
}
