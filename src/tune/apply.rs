//! A run's configuration per mode: the tune table's choice for the point, else the model's (its
//! chunk count; fused mode's own configuration on one GPU), every knob given as a flag winning over
//! both; and the runs of several configurations (one per distinct choice) merged into one report,
//! its baselines those of sequential's or the point's configuration, each mode's row naming its
//! configuration and source.

use serde::Serialize;

use crate::config::Config;
use crate::consistency::Check;
use crate::error::Result;
use crate::experiment::{self, ModeResult, Options, Rep, Report};
use crate::modes::{ModeKind, System};
use crate::ranks::Inputs;
use crate::stats::Warmup;
use crate::timing::FUSED_SEQ;

pub use super::knobs::Given;
use super::knobs::{Knobs, Source};
use super::model;
use super::search::{Devices, LEAST_LEAD};
use super::table::{Key, Table};

/// A mode's tuned best that ran slower than sequential, or led it by less than
/// [`LEAST_LEAD`] (or, where the point left no room to overlap, by no more than the point's noise).
#[derive(Clone, Debug, Serialize)]
pub struct Fallback {
    /// Its speedup over sequential when tuned (below 1, or a lead within the least a choice needs
    /// or the noise of a point without room to overlap).
    pub speedup: f64,
    /// Whether its point left no room to overlap (the table's `no_room`).
    pub no_room: bool,
    /// Its configuration in words.
    pub config: String,
}

/// How one mode runs.
#[derive(Clone, Debug)]
pub struct ModePlan {
    pub mode: ModeKind,
    pub config: Config,
    pub source: Source,
    pub fallback: Option<Fallback>,
    /// The table's choice for the point where it cannot run here (with the flags given), in words
    /// with why: the mode runs at `config` instead, and the run says so.
    pub not_taken: Option<String>,
}

/// Each mode's configuration for the point `base` (as the flags and defaults make it) on
/// `devices` devices of `kind`: the table's choice where it has one (given flags winning), else
/// fused mode's own where the model gives it one ([`model::fused_defaults`]), else `base`, whose
/// chunk count came from the model where `model_chunks`. A choice that cannot run here with the
/// flags given is said in `not_taken`.
pub fn plan(
    base: &Config,
    modes: &[ModeKind],
    table: Option<&Table>,
    devices: usize,
    kind: wgpu::DeviceType,
    given: &Given,
    model_chunks: bool,
) -> Vec<ModePlan> {
    let key = Key::of(base, devices);
    let flags = Knobs::of(base);
    let untuned = if model_chunks {
        Source::Model
    } else {
        Source::Flags
    };
    let fused = model::fused_defaults(base, given, kind, devices);
    modes
        .iter()
        .map(|&mode| {
            let tuned = table.and_then(|t| t.choice(&key, mode)).map(|(p, c)| {
                let knobs = given.overlay(&c.knobs, &flags);
                (
                    knobs.runnable_or_why(base, mode),
                    knobs,
                    c,
                    p.no_room.is_some(),
                )
            });
            match tuned {
                Some((Ok(config), _, c, no_room)) => ModePlan {
                    mode,
                    fallback: c.fallback.then(|| Fallback {
                        speedup: c.speedup,
                        config: c.knobs.describe(mode),
                        no_room,
                    }),
                    config,
                    source: Source::Table,
                    not_taken: None,
                },
                other => {
                    let own = fused.as_ref().filter(|_| mode == ModeKind::Fused);
                    let config = own.unwrap_or(base).clone();
                    let source = own.map_or(untuned, |_| Source::Model);
                    let not_taken = match other {
                        Some((Err(why), knobs, c, _)) => {
                            not_taken(mode, &c.knobs, &knobs, &why, &config, source)
                        }
                        _ => None,
                    };
                    ModePlan {
                        mode,
                        config,
                        source,
                        fallback: None,
                        not_taken,
                    }
                }
            }
        })
        .collect()
}

/// What a run says of `mode`'s table choice (`table`, `flagged` with the flags given over it) that
/// cannot run here (`why`), where the mode runs `untuned` (from `source`) instead; nothing where
/// it cannot run that either, as its row then says it is skipped and why.
fn not_taken(
    mode: ModeKind,
    table: &Knobs,
    flagged: &Knobs,
    why: &crate::error::Error,
    untuned: &Config,
    source: Source,
) -> Option<String> {
    super::knobs::runs(untuned, mode).is_ok().then(|| {
        let flags = if flagged == table {
            String::new()
        } else {
            format!(" with the flags given ({})", flagged.describe(mode))
        };
        format!(
            "the tune table's {mode} configuration ({}){flags} cannot run here: {why}; {mode} \
             runs at its [{}] configuration instead",
            table.describe(mode),
            source.name()
        )
    })
}

/// Why a fallback whose tuned best read `speedup` fell back, where that is not plain (empty below
/// 1): at or above 1.0x its lead was under [`LEAST_LEAD`], or within the noise of a point without
/// room to overlap (`no_room`), which asks more.
pub fn fallback_why(speedup: f64, no_room: bool) -> String {
    if speedup < 1.0 {
        String::new()
    } else if no_room {
        ", within the noise of a point without room to overlap".into()
    } else {
        format!(
            ", a lead under the {:.1}% a choice needs",
            LEAST_LEAD * 100.0
        )
    }
}

/// What a mode's row says of a fallback: taken (`shown` false), or shown as run (`--no-fallback`).
fn fallback_note(f: &Fallback, shown: bool) -> String {
    let what = if shown {
        "shown as run (--no-fallback)"
    } else {
        "fell back to sequential"
    };
    // Four places: what a fallback's best misses or leads by is often a few ten-thousandths, which
    // three would round to 1.000x or to the least lead itself.
    format!(
        "{what}: its tuned best ({}) ran {:.4}x of sequential{}",
        f.config,
        f.speedup,
        fallback_why(f.speedup, f.no_room)
    )
}

/// What `other`, an experiment of `modes` at their own configuration, says of those modes beside
/// their rows: fused mode's configuration as resolved on the device, each mode's own sequential run,
/// its checks ([`mode_checks`]) and warm-ups ([`mode_warmups`]), and the device memory and
/// measurements at their most, and the time it took added.
fn take_mode_figures(merged: &mut Report, other: &mut Report, modes: &[ModeKind]) {
    if modes.contains(&ModeKind::Fused) && other.fused_config.is_some() {
        merged.fused_config = other.fused_config.take();
        merged.fused_tuning = other.fused_tuning.take();
    }
    let ran = |m: ModeKind| modes.contains(&m);
    merged.own.extend(
        std::mem::take(&mut other.own)
            .into_iter()
            .filter(|o| ran(o.mode)),
    );
    merged
        .checks
        .extend(mode_checks(std::mem::take(&mut other.checks), modes));
    merged
        .warmups
        .extend(mode_warmups(std::mem::take(&mut other.warmups), modes));
    merged.device_memory_bytes = merged.device_memory_bytes.max(other.device_memory_bytes);
    merged.attempts = merged.attempts.max(other.attempts);
    // The run's time is every experiment's.
    merged.took += other.took;
}

/// The checks of an experiment of `modes` at their own configuration that the merged report keeps:
/// its modes', and its failed baselines' as each mode's (they bear on that mode's efficiency, not
/// on the baselines the report shows, and would otherwise leave a row failed without a word).
fn mode_checks(checks: Vec<Check>, modes: &[ModeKind]) -> Vec<Check> {
    let names: Vec<&str> = modes.iter().map(|m| m.name()).collect();
    let mut kept = Vec::new();
    for c in checks {
        match c.subject.as_deref() {
            Some(s) if names.contains(&s) => kept.push(c),
            None if !c.ok => kept.extend(names.iter().map(|&m| Check {
                name: at_configuration(&c.name, m),
                subject: Some(m.into()),
                beside: m.into(),
                ..c.clone()
            })),
            _ => {}
        }
    }
    kept
}

/// The warm-ups of an experiment of `modes` at their own configuration, every one kept (the report
/// says whether all settled, and by when): its modes' (and fused mode's own sequential run) as they
/// are, the rest named as each mode's ("sequential (at host's configuration)"), as the merged
/// report's own are the baselines'.
fn mode_warmups(warmups: Vec<Warmup>, modes: &[ModeKind]) -> Vec<Warmup> {
    let own = |what: &str| {
        modes
            .iter()
            .any(|m| m.name() == what || (*m == ModeKind::Fused && what == FUSED_SEQ))
    };
    let mut kept = Vec::new();
    for w in warmups {
        if own(&w.what) {
            kept.push(w);
        } else {
            kept.extend(modes.iter().map(|m| Warmup {
                what: at_configuration(&w.what, m.name()),
                ..w.clone()
            }));
        }
    }
    kept
}

/// A baseline's name in an experiment of `mode` at its own configuration, as the merged report
/// says it ("sequential (at host's configuration)"): its own baselines keep the plain names.
fn at_configuration(what: &str, mode: &str) -> String {
    format!("{what} (at {mode}'s configuration)")
}

/// Runs `plans` on `d` (one experiment per distinct configuration, `opts` for everything else)
/// and merges them into one report: the baselines are the first configuration's of `opts`'s
/// collective, and each mode's row comes from the run of its own configuration. A mode that falls
/// back (unless `no_fallback`) is not run: its row is sequential's, and says so.
/// `adjust` sees every timed run (`experiment::measure_with`'s seam); `after` sees each configuration's system and report once measured (a dump keeps the last).
pub fn run_plans(
    d: &Devices,
    plans: &[ModePlan],
    opts: &Options,
    no_fallback: bool,
    adjust: &dyn Fn(&str, &mut Rep) -> Result<()>,
    after: &mut dyn FnMut(&System, &Inputs, &Report) -> Result<()>,
) -> Result<Report> {
    let runs_itself = |p: &ModePlan| p.fallback.is_none() || no_fallback;
    let mut groups: Vec<(Config, Vec<ModeKind>, String)> = Vec::new();
    for p in plans.iter().filter(|p| runs_itself(p)) {
        let id = serde_json::to_string(&p.config).unwrap_or_default();
        match groups.iter_mut().find(|g| g.2 == id) {
            Some(g) => g.1.push(p.mode),
            None => groups.push((p.config.clone(), vec![p.mode], id)),
        }
    }
    match baseline_group(&groups, &opts.config) {
        Some(i) => groups[..=i].rotate_right(1),
        None => groups.insert(0, (opts.config.clone(), Vec::new(), String::new())),
    }
    let mut reports = Vec::new();
    for (config, modes, _) in &groups {
        let o = Options {
            config: config.clone(),
            modes: modes.clone(),
            ..opts.clone()
        };
        let (mut sys, inputs) = experiment::prepare_on(d.gpus, d.kernels, &o, d.path)?;
        let r = experiment::measure_with(&mut sys, &inputs, &o, adjust)?;
        after(&sys, &inputs, &r)?;
        reports.push(r);
    }
    let mut merged = reports[0].clone();
    merged.results.clear();
    for p in plans {
        let mut r = if runs_itself(p) {
            let g = groups
                .iter()
                .position(|g| g.1.contains(&p.mode))
                .unwrap_or(0);
            let found = reports[g]
                .results
                .iter()
                .find(|m| m.mode == p.mode)
                .cloned();
            match found {
                // Its speedup over T_seq, the one the report shows: over its own configuration's
                // sequential it would read as a gain where that sequential is the slower.
                Some(mut r)
                    if g != 0 && p.mode != ModeKind::Sequential && r.median_ms.is_some() =>
                {
                    r.own_t_seq_ms = Some(reports[g].t_seq_ms);
                    r.speedup = r.median_ms.map(|t| merged.t_seq_ms / t);
                    r
                }
                Some(r) => r,
                None => continue,
            }
        } else {
            sequential_row(&merged, p.mode)
        };
        r.config = Some(Knobs::of(&p.config).describe(p.mode));
        r.knobs = Some(Knobs::of(&p.config));
        r.config_source = Some(p.source);
        r.fallback = p
            .fallback
            .as_ref()
            .map(|f| fallback_note(f, runs_itself(p)));
        merged.results.push(r);
    }
    // A configuration run on other links than the point's (another collective, or its path
    // another: `--link-path auto`), said beside the point's.
    for other in reports.iter().skip(1) {
        for l in &other.devices {
            if let Some((head, path)) = l.split_once(": ").filter(|(h, _)| h.starts_with("link ")) {
                let said = format!("{head} ({}): {path}", other.config.collective);
                if !merged.devices.contains(l) && !merged.devices.contains(&said) {
                    merged.devices.push(said);
                }
            }
        }
    }
    for (mut other, (_, modes, _)) in reports.into_iter().zip(&groups).skip(1) {
        take_mode_figures(&mut merged, &mut other, modes);
        merged.timelines.extend(other.timelines);
        merged.samples.extend(other.samples);
        merged.consistent &= other.consistent;
    }
    Ok(merged)
}

/// Which of `groups` (configuration, its modes, its id) times the report's baselines: sequential's
/// own where it runs on the point's collective (a table's choice for it: the point's sequential at
/// its best), else the one that runs the configuration as given, `base`. None: no group runs
/// either, and `base` runs first for its baselines alone. Another mode's own configuration (a
/// table's, or fused mode's from the model) never times them: its speedup would be over a
/// sequential of its own layout, and would change with the modes asked. A mode the table runs as
/// another collective (the direct all-reduce for the ring's) is so over the ring's sequential.
fn baseline_group(groups: &[(Config, Vec<ModeKind>, String)], base: &Config) -> Option<usize> {
    let id = serde_json::to_string(base).unwrap_or_default();
    groups
        .iter()
        .position(|g| g.1.contains(&ModeKind::Sequential) && g.0.collective == base.collective)
        .or_else(|| groups.iter().position(|g| g.2 == id))
}

/// A row for `mode` that is sequential's run in `r`.
fn sequential_row(r: &Report, mode: ModeKind) -> ModeResult {
    let seq = r.results.iter().find(|m| m.mode == ModeKind::Sequential);
    ModeResult {
        trigger: ModeKind::Sequential.trigger(),
        median_ms: Some(r.t_seq_ms),
        spread_ms: r.t_seq_spread,
        speedup: Some(1.0),
        seq_ms: Some(r.t_seq_ms),
        ideal_ms: Some(r.ideal_ms),
        bytes_moved: seq.map_or(0, |s| s.bytes_moved),
        max_rel_error: seq.and_then(|s| s.max_rel_error),
        elements_past_rounding: seq.and_then(|s| s.elements_past_rounding),
        trackers_ok: seq.and_then(|s| s.trackers_ok),
        ..ModeResult::blank(
            mode,
            seq.map_or(r.config.out_dtype, |s| s.output_dtype),
            seq.map_or(crate::reference::GEMM_BOUND, |s| s.tolerance),
        )
    }
}

#[cfg(test)]
mod tests;
