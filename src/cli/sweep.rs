//! `t3 sweep`: a grid of configurations checked before any GPU work, one CSV row per point and mode
//! as each point finishes.

use std::io::IsTerminal;
use web_time::Instant;

use anyhow::{Context, Result};

use t3_wgpu::experiment;
use t3_wgpu::gpu::Gpu;
use t3_wgpu::modes::Config;
use t3_wgpu::report::{self, Row};
use t3_wgpu::schedule::Collective;
use t3_wgpu::settings::Environment;
use t3_wgpu::shapes::Shape;
use t3_wgpu::steps::Link;
use t3_wgpu::workload;

use super::args::*;
use super::output::out;
use super::run::{check_devices, kernels_on, options, validate, wrong};
use super::values::*;

/// Most points of a sweep grid (each point runs every mode; a bigger grid is a typing slip).
pub const MAX_POINTS: usize = 100_000;

/// Every point of a sweep, checked before any GPU work.
pub fn sweep_points(a: &SweepArgs, env: &Environment) -> Result<Vec<(String, Config)>> {
    let workloads: Vec<(Shape, Option<usize>, Collective, String)> = if let Some(s) = a.shape {
        vec![(
            s,
            None,
            a.collective.map_or(Collective::ReduceScatter, |c| c.0),
            format!("{s}"),
        )]
    } else {
        if a.presets.is_empty() {
            return Err(t3_wgpu::Error::invalid(
                "workload",
                "none given",
                "--presets NAME,... or --shape MxNxK",
            )
            .into());
        }
        a.presets
            .iter()
            .map(|p| {
                let pr = workload::find(p, a.tokens, a.scale).context("preset vanished")?;
                Ok((
                    Shape::new(pr.m, pr.n, pr.k)?,
                    Some(pr.tp),
                    a.collective.map_or(pr.collective, |c| c.0),
                    pr.name,
                ))
            })
            .collect::<Result<_>>()?
    };
    let rank_lists = workloads.len() * a.ranks.len().max(1);
    let count = [
        a.chunks.len(),
        a.link_workgroups.len(),
        a.arbitrate.len(),
        a.gemm_grid.len(),
        a.step_lead.len(),
    ]
    .iter()
    .try_fold(rank_lists, |n, &l| n.checked_mul(l))
    .unwrap_or(usize::MAX);
    if count > MAX_POINTS {
        return Err(t3_wgpu::Error::invalid(
            "sweep grid",
            format!(
                "{count} points ({} workloads x {} rank counts x {} chunk counts x {} link budgets x {} arbitration caps x {} GEMM grids x {} step leads)",
                workloads.len(),
                a.ranks.len().max(1),
                a.chunks.len(),
                a.link_workgroups.len(),
                a.arbitrate.len(),
                a.gemm_grid.len(),
                a.step_lead.len()
            ),
            format!("at most {MAX_POINTS} points"),
        )
        .into());
    }
    let mut points = Vec::new();
    for (shape, tp, coll, label) in &workloads {
        let rs: Vec<usize> = if a.ranks.is_empty() {
            vec![tp.unwrap_or(4)]
        } else {
            a.ranks.clone()
        };
        for &r in &rs {
            for &c in &a.chunks {
                for &w in &a.link_workgroups {
                    let caps = a
                        .arbitrate
                        .iter()
                        .flat_map(|&arb| a.gemm_grid.iter().map(move |&g| (arb, g)));
                    for (arb, grid) in caps {
                        for &step_lead in &a.step_lead {
                            let config = Config {
                                shape: *shape,
                                ranks: r,
                                chunks: c,
                                collective: *coll,
                                via: a.reduce.0,
                                link: if w == 0 {
                                    Link::Unthrottled
                                } else {
                                    Link::Workgroups(w)
                                },
                                dtype: a.gemm.dtype.0,
                                arbitrate: (arb > 0).then_some(arb),
                                gemm_grid: (grid > 0).then_some(grid),
                                fused: env.fused,
                                host: env.host,
                                step_lead,
                            };
                            validate(&config, &mode_list(&a.mode))
                                .and_then(|()| {
                                    check_devices(&a.devices, config.ranks, &mode_list(&a.mode))
                                })
                                .with_context(|| {
                                    format!("sweep point {label} ranks {r} chunks {c}")
                                })?;
                            points.push((label.clone(), config));
                        }
                    }
                }
            }
        }
    }
    Ok(points)
}

pub fn describe_point(label: &str, config: &Config) -> String {
    format!(
        "{label} ranks {} chunks {} link {}{}{} step lead {}",
        config.ranks,
        config.chunks,
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

pub fn sweep(
    gpus: &[Gpu],
    a: &SweepArgs,
    points: Vec<(String, Config)>,
    env: &Environment,
) -> Result<()> {
    super::run::check_spanning(&mode_list(&a.mode), gpus.len())?;
    let kernels = kernels_on(gpus, a.gemm, env.fused_put)?;
    let bar = if std::io::stderr().is_terminal() {
        let b = indicatif::ProgressBar::new(points.len() as u64);
        b.set_style(
            indicatif::ProgressStyle::with_template(
                "{bar:40} {pos}/{len} {msg} [{elapsed} < {eta}]",
            )
            .expect("template"),
        );
        Some(b)
    } else {
        None
    };
    let say = |line: &str| match &bar {
        Some(b) => b.println(line),
        None => note!("{line}"),
    };
    say(&format!(
        "sweep: {} points x {} modes (estimate after the first point)",
        points.len(),
        mode_list(&a.mode).modes.len()
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
    for (i, (label, config)) in points.iter().enumerate() {
        let msg = describe_point(label, config);
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
        let rows = match experiment::prepare_on(gpus, &kernels, &opts, a.devices.link_path)
            .and_then(|(mut sys, inputs)| experiment::measure(&mut sys, &inputs, &opts))
        {
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
        note!("wrote {} ({} points)", a.csv, points.len());
    }
    anyhow::ensure!(
        failures == 0,
        "{failures} of {} points failed (their rows say why)",
        points.len()
    );
    Ok(())
}
