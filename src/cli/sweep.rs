//! `t3 sweep`: a grid of configurations checked before any GPU work, one CSV row per point and mode
//! as each point finishes.

use std::collections::HashSet;
use std::io::IsTerminal;
use web_time::Instant;

use anyhow::{Context, Result};

use t3_wgpu::gpu::Gpu;
use t3_wgpu::modes::Config;
use t3_wgpu::report::{self, Row};
use t3_wgpu::schedule::{Collective, Order};
use t3_wgpu::shapes::Shape;
use t3_wgpu::steps::Link;
use t3_wgpu::workload;

use t3_wgpu::modes::StepLead;
use t3_wgpu::plan::ReduceVia;
use t3_wgpu::tune::apply::{plan, run_plans, Given, ModePlan};
use t3_wgpu::tune::search;

use super::args::*;
use super::output::{counted, out};
use super::run::{check_devices, kernels_on, options, validate, wrong};
use super::tables::{given_knobs, model_chunks, recount_chunks, table_for};
use super::values::*;

/// Most points of a sweep grid (each point runs every mode; a bigger grid is a typing slip).
pub const MAX_POINTS: usize = 100_000;

/// A workload: its shape, its preset's TP degree (None for a bare shape), its collective, its name.
pub type NamedWorkload = (Shape, Option<usize>, Collective, String);

/// The workloads `p` names, each with its TP degree where a preset gives one, checked before any
/// GPU work.
pub fn workloads(p: &Points) -> Result<Vec<NamedWorkload>> {
    once("--presets", &p.presets, String::clone)?;
    once("--ranks", &p.ranks, usize::to_string)?;
    match p.shape {
        Some(s) => Ok(vec![(
            s,
            None,
            p.collective.map_or(Collective::ReduceScatter, |c| c.0),
            s.to_string(),
        )]),
        None if p.presets.is_empty() => Err(t3_wgpu::Error::invalid(
            "workload",
            "none given",
            "--presets NAME,... or --shape MxNxK",
        )
        .into()),
        None => p
            .presets
            .iter()
            .map(|name| {
                let pr = workload::find(name, p.tokens, p.scale).context("preset vanished")?;
                Ok((
                    Shape::new(pr.m, pr.n, pr.k)?,
                    Some(pr.tp),
                    p.collective.map_or(pr.collective, |c| c.0),
                    pr.name,
                ))
            })
            .collect(),
    }
}

/// Refuses a comma list `flag` that names one value (`name` of it) twice: its points would run
/// twice.
pub fn once<T: PartialEq>(
    flag: &'static str,
    list: &[T],
    name: impl Fn(&T) -> String,
) -> Result<()> {
    for (i, v) in list.iter().enumerate() {
        if list[..i].contains(v) {
            return Err(t3_wgpu::Error::invalid(
                flag,
                format!("{} named twice", name(v)),
                "a list naming each value once",
            )
            .into());
        }
    }
    Ok(())
}

/// Refuses a swept list of the sweep's own that names one value twice ([`once`]).
fn lists_once(a: &SweepArgs) -> Result<()> {
    once("--chunks", &a.chunks, usize::to_string)?;
    once("--link-workgroups", &a.link_workgroups, u32::to_string)?;
    once("--arbitrate", &a.arbitrate, u32::to_string)?;
    once("--gemm-grid", &a.gemm_grid, u32::to_string)?;
    once("--step-lead", &a.step_lead, |l| l.describe())?;
    once("--order", &a.knobs.order, |o| o.name().to_string())
}

/// One point of a sweep: its workload's name, its configuration as the flags and the model make it,
/// which knobs the flags give (the tune table's choices yield to them), and whether its chunk count
/// is the model's.
pub struct SweepPoint {
    pub label: String,
    pub config: Config,
    pub given: Given,
    pub model_chunks: bool,
}

/// Every point of a sweep, checked before any GPU work.
pub fn sweep_points(a: &SweepArgs) -> Result<Vec<SweepPoint>> {
    let workloads = workloads(&a.points)?;
    lists_once(a)?;
    let rank_lists = workloads.len() * a.points.ranks.len().max(1);
    let chunk_list: Vec<Option<usize>> = if a.chunks.is_empty() {
        vec![None]
    } else {
        a.chunks.iter().map(|&c| Some(c)).collect()
    };
    let link_workgroups = or_default(&a.link_workgroups, 0);
    let arbitrate = or_default(&a.arbitrate, 0);
    let gemm_grid = or_default(&a.gemm_grid, 0);
    let step_leads = or_default(&a.step_lead, StepLead::Auto);
    let orders = or_default(&a.knobs.order, Order::default());
    let count = [
        chunk_list.len(),
        link_workgroups.len(),
        arbitrate.len(),
        gemm_grid.len(),
        step_leads.len(),
        orders.len(),
    ]
    .iter()
    .try_fold(rank_lists, |n, &l| n.checked_mul(l))
    .unwrap_or(usize::MAX);
    if count > MAX_POINTS {
        return Err(t3_wgpu::Error::invalid(
            "sweep grid",
            format!(
                "{count} points ({} workloads x {} rank counts x {} chunk counts x {} link budgets x {} arbitration caps x {} GEMM grids x {} step leads x {} orders)",
                workloads.len(),
                a.points.ranks.len().max(1),
                chunk_list.len(),
                link_workgroups.len(),
                arbitrate.len(),
                gemm_grid.len(),
                step_leads.len(),
                orders.len()
            ),
            format!("at most {MAX_POINTS} points"),
        )
        .into());
    }
    // Every point's combinations of the knobs swept beside its workload, ranks, chunks and link.
    let mut knob_sets = Vec::new();
    for &arb in &arbitrate {
        for &grid in &gemm_grid {
            for &lead in &step_leads {
                knob_sets.extend(orders.iter().map(|&o| (arb, grid, lead, o)));
            }
        }
    }
    let (mut points, mut left_out) = (Vec::new(), 0);
    for (shape, tp, coll, label) in &workloads {
        let rs: Vec<usize> = if a.points.ranks.is_empty() {
            vec![tp.unwrap_or(4)]
        } else {
            a.points.ranks.clone()
        };
        for &r in &rs {
            for &c in &chunk_list {
                for &w in &link_workgroups {
                    for &(arb, grid, step_lead, order) in &knob_sets {
                        let mut config = Config {
                            shape: *shape,
                            ranks: r,
                            chunks: c.unwrap_or(1),
                            collective: *coll,
                            order,
                            via: a.reduce.map_or(ReduceVia::Update, |v| v.0),
                            link: if w == 0 {
                                Link::Unthrottled
                            } else {
                                Link::Workgroups(w)
                            },
                            dtype: a.gemm.dtype.0,
                            out_dtype: a.gemm.out(a.devices.across()),
                            arbitrate: (arb > 0).then_some(arb),
                            gemm_grid: (grid > 0).then_some(grid),
                            fused: a.knobs.fused(),
                            host: a.knobs.host(),
                            step_lead,
                        };
                        let model = match c {
                            Some(_) => None,
                            None => {
                                model_chunks(a.devices.devices.as_ref().map(|s| s.count()), &config)
                            }
                        };
                        if let Some(n) = model {
                            config.chunks = n;
                        }
                        // Swept against the stage order, the chunk order leaves out the chunk
                        // counts it cannot take rather than refuse the grid; given alone, it is
                        // checked as any knob.
                        if orders.len() > 1 && order == Order::Chunk && config.chunks < 2 {
                            left_out += 1;
                            continue;
                        }
                        validate(&config, &mode_list(&a.mode))
                            .and_then(|()| {
                                check_devices(&a.devices, config.ranks, &mode_list(&a.mode))
                            })
                            .with_context(|| {
                                format!(
                                    "sweep point {label} ranks {r} chunks {} order {}",
                                    config.chunks,
                                    order.name()
                                )
                            })?;
                        points.push(SweepPoint {
                            label: label.clone(),
                            config,
                            // A list not given leaves the table's choice standing; one
                            // given, whatever its values, wins.
                            given: Given {
                                chunks: c.is_some(),
                                reduce: a.reduce.is_some(),
                                gemm_grid: !a.gemm_grid.is_empty(),
                                step_lead: !a.step_lead.is_empty(),
                                link: !a.link_workgroups.is_empty(),
                                arbitrate: !a.arbitrate.is_empty(),
                                collective: a.points.collective.is_some(),
                                ..given_knobs(&a.knobs)
                            },
                            model_chunks: model.is_some(),
                        });
                    }
                }
            }
        }
    }
    if left_out > 0 {
        note!(
            "sweep: {} left out: the chunk order needs 2 or more chunks per rank",
            counted(left_out, "point")
        );
    }
    if points.is_empty() && left_out > 0 {
        return Err(t3_wgpu::Error::invalid(
            "sweep grid",
            "no point the chunk order can take",
            "a chunk count of 2 or more with --order chunk",
        )
        .into());
    }
    Ok(points)
}

pub fn describe_point(label: &str, config: &Config) -> String {
    format!(
        "{label} ranks {} chunks {}{} link {}{}{} step lead {}",
        config.ranks,
        config.chunks,
        match config.order {
            Order::Stage => String::new(),
            o => format!(" ({} order)", o.name()),
        },
        config.link.describe(),
        config
            .arbitrate
            .map(|w| format!(" arbitrate {w}"))
            .unwrap_or_default(),
        config
            .gemm_grid
            .map(|w| format!(" gemm grid {w}"))
            .unwrap_or_default(),
        config.step_lead.describe()
    )
}

/// The sweep's CSV file and the rows so far.
struct Saved<'a> {
    path: &'a str,
    text: String,
    /// When the file was last written, and how long that took.
    at: Option<(Instant, std::time::Duration)>,
}

impl Saved<'_> {
    /// Writes the rows so far where the last write is a second old (or twenty times its own time,
    /// for a CSV so long that its writing would take a share of the sweep), or `last`.
    fn save(&mut self, last: bool) -> Result<()> {
        let due = self.at.is_none_or(|(at, took)| {
            at.elapsed() >= (took * 20).max(std::time::Duration::from_secs(1))
        });
        if due || last {
            let start = Instant::now();
            t3_wgpu::files::write(self.path, &self.text)?;
            self.at = Some((Instant::now(), start.elapsed()));
        }
        Ok(())
    }
}

/// A bar of `n` points on a terminal's stderr (none where stderr is not one).
fn progress_bar(n: usize) -> Option<indicatif::ProgressBar> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let b = indicatif::ProgressBar::new(n as u64);
    b.set_style(
        indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} {msg} [{elapsed} < {eta}]")
            .expect("template"),
    );
    Some(b)
}

pub fn sweep(
    gpus: &[Gpu],
    a: &SweepArgs,
    (mut points, pre): (Vec<SweepPoint>, Option<t3_wgpu::tune::Table>),
) -> Result<()> {
    super::run::check_spanning(&mode_list(&a.mode), gpus.len())?;
    for p in &mut points {
        recount_chunks(&mut p.config, p.model_chunks, gpus.len());
        validate(&p.config, &mode_list(&a.mode))?;
    }
    let kernels = kernels_on(gpus, a.gemm, a.knobs.put(), a.devices.across())?;
    let table = table_for(&a.tune, pre, &gpus[0])?;
    let devices = search::Devices {
        gpus,
        kernels: &kernels,
        path: a.devices.link_path,
    };
    let bar = progress_bar(points.len());
    let say = |line: &str| match &bar {
        Some(b) => b.println(line),
        None => note!("{line}"),
    };
    let modes = mode_list(&a.mode).modes.len();
    say(&format!(
        "sweep: {} x {} (estimate after the first point)",
        counted(points.len(), "point"),
        counted(modes, "mode")
    ));
    let to_stdout = a.csv == "-";
    // Rows are saved as points finish, so an interrupted sweep keeps what it measured: the whole
    // CSV so far replaces the file atomically (a reader never sees half a row), at most about once
    // a second, and once at the end.
    let mut file = (!to_stdout).then(|| Saved {
        path: &a.csv,
        text: String::new(),
        at: None,
    });
    let mut failures = 0;
    let started = Instant::now();
    let mut said = HashSet::new();
    for (i, p) in points.iter().enumerate() {
        let label = &p.label;
        let mut config = p.config.clone();
        let defaults = super::run::model_defaults(&mut config, &p.given, gpus, &kernels);
        let msg = describe_point(label, &config);
        match &bar {
            Some(b) => b.set_message(msg.clone()),
            None => note!("[{}/{}] {msg}", i + 1, points.len()),
        }
        let opts = options(
            config.clone(),
            &a.mode,
            (a.reps, a.warmup, a.warmup_s),
            a.seed,
            a.no_verify,
        );
        // A failed point is recorded and the sweep goes on: hours of other points stay useful. A wait
        // past its bound ends the sweep once its row is saved: the GPU may still hold the point's
        // work, which would slow every later point and make its figures wrong.
        let mut timeout = None;
        let plans = plan(
            &config,
            &opts.modes,
            table.as_ref(),
            gpus.len(),
            gpus[0].info.device_type,
            &p.given,
            p.model_chunks || defaults,
        );
        say_unsaid(&plans, &mut said, &|w| say(&format!("warning: {msg}: {w}")));
        let rows = match run_plans(
            &devices,
            &plans,
            &opts,
            a.tune.no_fallback,
            &|_, _| Ok(()),
            &mut |_, _, _| Ok(()),
        ) {
            Ok(rep) => {
                if wrong(&rep) {
                    failures += 1;
                    say(&format!(
                        "error: {msg}: a mode's result or tracker check failed (see its row)"
                    ));
                }
                if !rep.consistent {
                    let failed: Vec<&str> = rep
                        .checks
                        .iter()
                        .filter(|c| c.remeasure())
                        .map(|c| c.name.as_str())
                        .collect();
                    say(&format!(
                        "warning: {msg}: checks failed after {} measurements: {} (column checks_failed)",
                        rep.attempts,
                        failed.join(", ")
                    ));
                }
                Row::measured(label, &rep)
            }
            Err(e) => {
                failures += 1;
                say(&format!("error: {msg}: {e}"));
                let row = vec![Row::failed(label, &opts.config, &e.to_string())];
                if matches!(e, t3_wgpu::Error::Timeout { .. }) {
                    timeout = Some(e);
                }
                row
            }
        };
        let text = report::csv_text(&rows, i == 0)?;
        match &mut file {
            None => out(&text)?,
            Some(f) => {
                f.text += &text;
                f.save(i + 1 == points.len() || timeout.is_some())?;
            }
        }
        if let Some(e) = timeout {
            return Err(anyhow::Error::new(e).context(format!(
                "the sweep stopped at point {} of {} (the rows before it are kept)",
                i + 1,
                points.len()
            )));
        }
        if i == 0 && points.len() > 1 {
            let each = started.elapsed().as_secs_f64();
            say(&format!(
                "sweep: the first point took {each:.1} s; all {} about {:.0} s",
                points.len(),
                each * points.len() as f64
            ));
        }
        if let Some(b) = &bar {
            b.inc(1);
        }
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    if !to_stdout {
        note!("wrote {} ({})", a.csv, counted(points.len(), "point"));
    }
    anyhow::ensure!(
        failures == 0,
        "{failures} of {} failed (their rows say why)",
        counted(points.len(), "point")
    );
    Ok(())
}

/// Says through `say` the warnings of `plans` not yet said in this sweep: each once, as a given
/// flag that clashes with the table does so at every point.
fn say_unsaid(plans: &[ModePlan], said: &mut HashSet<String>, say: &dyn Fn(&str)) {
    for w in plans.iter().filter_map(|m| m.not_taken.as_ref()) {
        if said.insert(w.clone()) {
            say(w);
        }
    }
}
