//! Every figure and setting of a run (`--verbose`): the configuration, each baseline with its spread
//! and failed checks, a mode's own baseline, the full table and the warm-up.

use super::{human_bytes, mode_checks, ms, spread};
use crate::consistency::Kind;
use crate::experiment::Report;
use crate::stats::Spread;

/// Every figure and setting of a run (`--verbose`): the configuration, each baseline with its spread
/// and failed checks, a mode's own baseline, and the full table.
pub fn text(r: &Report) -> String {
    let mut s = configuration(r);
    s += &baselines(r);
    let kind = r.t_seq_spread.map(|x| x.kind).unwrap_or("min/max");
    s += &format!(
        "run        median [{kind}] of {} reps, {} measurement(s); timeline grain: {}; device memory {:.1} MiB; check: {:?}\n",
        r.reps,
        r.attempts,
        r.grain,
        r.device_memory_bytes as f64 / (1 << 20) as f64,
        r.verify
    );
    s += &format!("warm-up    {}\n", warmup_text(r));
    s += &table(r);
    s += &after_gemm(r);
    s += &early_landings(r);
    s += &failed_checks(r);
    s
}

/// How long each mode's last repetition went on after its last GEMM work, against T_comm: what of
/// the collective nothing hid (sequential's is about T_comm; an overlapped mode's tail is what
/// keeps its efficiency below 1). Nothing where no mode has a timeline.
fn after_gemm(r: &Report) -> String {
    let parts: Vec<String> = r
        .results
        .iter()
        .filter_map(|m| {
            let a = m.after_gemm_ms?;
            let share = if r.t_comm_ms > 0.0 {
                format!(" ({:.2} of T_comm)", a / r.t_comm_ms)
            } else {
                String::new()
            };
            Some(format!("{} {a:.3} ms{share}", m.mode))
        })
        .collect();
    if parts.is_empty() {
        return String::new();
    }
    format!(
        "\nafter GEMM {} (each mode's last repetition: from its last GEMM work's end to its last GPU work's)\n",
        parts.join(", ")
    )
}

/// What crossed ahead of the fence in each mode's last repetition: sends the device triggered beside
/// the GEMM making their chunks and chunks landed ahead of their puts (`--host-loop
/// trigger=device`), and the flag handoff's waiting landings, a share of which gave up: time the handoff did not win (those chunks
/// landed after their senders' fences).
fn early_landings(r: &Report) -> String {
    let parts: Vec<String> = r
        .results
        .iter()
        .filter_map(|m| {
            let e = m
                .early_landings
                .filter(|e| e.landed + e.gave_up + e.watched + e.ahead > 0)?;
            let mut said = Vec::new();
            if e.watched + e.ahead > 0 {
                said.push(format!(
                    "{} sends triggered beside their GEMM work{}, {} chunks landed ahead of their puts",
                    e.watched - e.watch_gave_up,
                    if e.watch_gave_up > 0 {
                        format!(" ({} more waited and went again)", e.watch_gave_up)
                    } else {
                        String::new()
                    },
                    e.ahead
                ));
            }
            if e.landed + e.gave_up > 0 {
                said.push(format!(
                    "{} of {} waiting landings landed beside GEMM work{}",
                    e.landed,
                    e.landed + e.gave_up,
                    if e.gave_up > 0 {
                        format!(
                            " ({} gave up and landed after their senders' fences)",
                            e.gave_up
                        )
                    } else {
                        String::new()
                    }
                ));
            }
            Some(format!("{}: {}", m.mode, said.join("; ")))
        })
        .collect();
    if parts.is_empty() {
        return String::new();
    }
    format!(
        "handoff    {} (each mode's last repetition; --host-loop trigger, handoff)\n",
        parts.join(", ")
    )
}

/// The adapter, the workload, the GEMM, the outputs and the configuration's lines.
fn configuration(r: &Report) -> String {
    let c = &r.config;
    let mut s = String::new();
    s += &format!("adapter    {}\n", r.adapter);
    for d in &r.devices {
        s += &format!("           {d}\n");
    }
    if !r.links.is_empty() {
        let each: Vec<String> = r
            .links
            .iter()
            .map(|l| {
                format!(
                    "{}->{} {} at {} GB/s",
                    l.from,
                    l.to,
                    human_bytes(l.bytes),
                    super::gbps(l.gbps)
                )
            })
            .collect();
        s += &format!(
            "links      the collective alone (sequential's, over T_comm): {}{}\n",
            each.join(", "),
            super::summary::against_calibration(r)
        );
    }
    s += &format!(
        "workload   {} x {} ranks (M x N x K per rank), {} chunk(s) per rank, {}{}, reduce via {}, link {}{}, step lead {}\n",
        c.shape,
        c.ranks,
        c.chunks,
        c.collective,
        super::order_said(c),
        c.via.name(),
        c.link.describe(),
        c.arbitrate.map(|w| format!(", arbitration {w} workgroups")).unwrap_or_default()
            + &c.gemm_grid.map(|w| format!(", GEMM grid {w} workgroups")).unwrap_or_default(),
        c.step_lead.describe()
    );
    s += &format!(
        "gemm       {} operands, f32 accumulation, {} kernel\n",
        c.dtype.name(),
        r.gemm_kernel.name()
    );
    // Each mode's outputs: the run's, f32 for a mode that moves no other (fused).
    let outs: Vec<String> = r
        .results
        .iter()
        .filter(|m| m.skipped.is_none())
        .map(|m| format!("{} {}", m.mode, m.output_dtype.name()))
        .collect();
    s += &format!(
        "outputs    {} (each mode: {}); error bound {:.2e} (GEMM {:.0e} + one unit roundoff per \
         rounding along the schedule)\n",
        c.out_dtype.name(),
        outs.join(", "),
        r.results.first().map_or(0.0, |m| m.tolerance),
        crate::reference::GEMM_BOUND
    );
    if let Some(f) = &r.fused_config {
        s += &format!("fused      {f}\n");
    }
    for l in super::summary::config_lines(r) {
        s += &format!("{l}\n");
    }
    s
}

/// Each baseline on its own line (median, spread, any failed check beside it), then each mode's own.
fn baselines(r: &Report) -> String {
    let mut s = String::new();
    let flags = |figure: &str| -> String {
        let f: Vec<&str> = r
            .checks
            .iter()
            .filter(|c| !c.ok && c.beside == figure)
            .map(|c| c.name.as_str())
            .collect();
        if f.is_empty() {
            String::new()
        } else {
            format!("  CHECK FAILED: {}", f.join(", "))
        }
    };
    let figure_line =
        |head: &str, label: &str, ms_: f64, sp: Option<Spread>, extra: String, figure: &str| {
            let line = format!(
                "{head:<11}{label:<10}{:>10} ms  {:<26}{extra}{}",
                format!("{ms_:.3}"),
                spread(sp),
                flags(figure)
            );
            line.trim_end().to_string() + "\n"
        };
    let baseline = |label: &str, ms_: f64, sp: Option<Spread>, extra: String, figure: &str| {
        let head = if label == "T_gemm" { "baselines" } else { "" };
        figure_line(head, label, ms_, sp, extra, figure)
    };
    s += &baseline(
        "T_gemm",
        r.t_gemm_ms,
        r.t_gemm_spread,
        format!("{:.2} TFLOP/s", r.gemm_tflops),
        "T_gemm",
    );
    s += &baseline(
        "untracked",
        r.t_gemm_untracked_ms,
        r.t_gemm_untracked_spread,
        format!("tracker overhead {:+.1}%", r.tracker_overhead * 100.0),
        "gemm_untracked",
    );
    s += &baseline(
        "T_comm",
        r.t_comm_ms,
        r.t_comm_spread,
        String::new(),
        "T_comm",
    );
    s += &baseline("T_seq", r.t_seq_ms, r.t_seq_spread, String::new(), "T_seq");
    s += &baseline("ideal", r.ideal_ms, None, String::new(), "ideal");
    // A mode's own sequential run: the baseline its efficiency is against.
    for o in &r.own {
        let m = o.mode.name();
        let comm = if o.own_comm {
            "its transfers"
        } else {
            "T_comm"
        };
        let lines = [
            (
                "gemm",
                o.gemm_ms,
                Some(o.gemm_spread),
                "every rank's GEMM in one pass on the packed buffers, tracked only".to_string(),
            ),
            (
                "comm",
                o.comm_ms,
                Some(o.comm_spread),
                "its transfers alone, after it".to_string(),
            ),
            (
                "seq",
                o.seq_ms,
                Some(o.seq_spread),
                format!("its GEMM, then {comm} (the faster): its efficiency's baseline"),
            ),
            ("ideal", o.ideal_ms, None, String::new()),
        ];
        for (k, (label, ms_, sp, extra)) in lines.into_iter().enumerate() {
            let head = if k == 0 {
                format!("{m} own")
            } else {
                String::new()
            };
            s += &figure_line(&head, label, ms_, sp, extra, &format!("{m}_{label}"));
        }
    }
    s
}

/// Every mode's row, and what a starred efficiency is against.
fn table(r: &Report) -> String {
    let mut s = String::new();
    s += "\nmode       trigger   median ms  spread ms             speedup  overlap eff  bytes moved   max rel err  trackers  trigger µs (med/p99)  checks\n";
    for m in &r.results {
        if let Some(why) = &m.skipped {
            s += &format!("{:<10} {:<8}  skipped: {why}\n", m.mode, m.trigger.name());
            continue;
        }
        s += &format!(
            "{:<10} {:<8} {:>10}  {:<20} {:>8} {:>12} {:>12} {:>13} {:>9} {:>20}  {}\n",
            m.mode,
            m.trigger.name(),
            ms(m.median_ms),
            spread(m.spread_ms),
            super::summary::speedup(m),
            super::summary::efficiency(m),
            human_bytes(m.bytes_moved),
            super::error_cell(m),
            m.trackers_ok
                .map(|x| if x { "ok" } else { "WRONG" })
                .unwrap_or("-"),
            match (m.trigger_latency_median_us, m.trigger_latency_p99_us) {
                (Some(a), Some(b)) => format!("{a:.0}/{b:.0}"),
                _ => "-".into(),
            },
            mode_checks(r, &m.checks_failed)
        );
    }
    for l in super::summary::own_sequential_notes(r)
        .into_iter()
        .chain(super::summary::above_ideal_notes(&r.results))
        .chain(super::summary::untuned_loss_notes(
            &r.results,
            r.t_seq_spread,
            r.emulated,
        ))
    {
        s += &l;
        s.push('\n');
    }
    for m in r.results.iter().filter(|m| m.own_baseline) {
        s += &format!(
            "* {}: speedup over T_seq; efficiency against its own GEMM ({} own seq {} ms, ideal {} ms), so that its GEMM's gain or loss against T_gemm is not counted as overlap\n",
            m.mode,
            m.mode,
            ms(m.seq_ms),
            ms(m.ideal_ms)
        );
    }
    s
}

/// The failed checks, and apart from them where there was no room to overlap.
fn failed_checks(r: &Report) -> String {
    let mut s = String::new();
    // No room to overlap is not a failure (see `mode_checks`): said apart, so that a report whose
    // every figure may be right does not list it under failed checks.
    let (room, failed): (Vec<_>, Vec<_>) = r
        .checks
        .iter()
        .filter(|c| !c.ok)
        .partition(|c| c.kind == Kind::Room);
    if !failed.is_empty() {
        s += &format!(
            "\nchecks failed after {} measurement(s); overlap efficiency left empty where they bear on it:\n",
            r.attempts
        );
        for c in failed {
            s += &format!("  {}: {}\n", c.name, c.detail);
        }
    }
    if !room.is_empty() {
        s += "\nno room to overlap (overlap efficiency left empty; the times stand):\n";
        for c in room {
            s += &format!("  {}: {}\n", c.name, c.detail);
        }
    }
    s
}

/// Which timed things settled and when, and which did not within the bound.
fn warmup_text(r: &Report) -> String {
    let (done, not): (Vec<_>, Vec<_>) = r.warmups.iter().partition(|w| w.settled);
    let runs = r.warmups.iter().map(|w| w.runs).max().unwrap_or(0);
    let mut s = format!("{runs} round(s) (at least {}", r.warmup);
    if r.stability.warmup_s > 0.0 {
        s += &format!(
            ", then until the last {} runs of each lie within {:.0}% of their median, at most {} s",
            r.stability.settle.window,
            r.stability.settle.tolerance * 100.0,
            r.stability.warmup_s
        );
        // The least warm-up is bounded by the most.
        let least = r.stability.min_warmup_s.min(r.stability.warmup_s);
        if least > 0.0 {
            s += &format!(" and at least {least} s");
        }
    }
    s += ")";
    let last = done.iter().map(|w| w.seconds).fold(0.0, f64::max);
    if !done.is_empty() {
        s += &format!("; settled: all by {last:.2} s");
        if !not.is_empty() {
            let names: Vec<&str> = done.iter().map(|w| w.what.as_str()).collect();
            s += &format!(" ({})", names.join(", "));
        }
    }
    if !not.is_empty() {
        let names: Vec<&str> = not.iter().map(|w| w.what.as_str()).collect();
        s += &format!("; NOT settled: {}", names.join(", "));
    }
    s
}
