//! `t3 tune`: the points it tunes, the table it extends, the tuning and its summary.

use std::io::IsTerminal;

use anyhow::{Context, Result};
use web_time::{Duration, Instant};

use t3_wgpu::files;
use t3_wgpu::gpu::Gpu;
use t3_wgpu::modes::{Config, ModeKind};
use t3_wgpu::tune::apply::{fallback_why, Given};
use t3_wgpu::tune::search::{self, Job, Settings};
use t3_wgpu::tune::space::Context as SpaceContext;
use t3_wgpu::tune::table::{Key, Point, Table};

use super::args::*;
use super::output::counted;
use super::run::{check_devices, check_spanning, kernels_on, validate};
use super::tables::{default_table, given_knobs, model_chunks};
use super::values::*;

/// Every point `t3 tune` tunes: its name and its configuration as the defaults make it.
pub fn tune_jobs(a: &TuneCmdArgs) -> Result<Vec<(String, Config)>> {
    let workloads = super::sweep::workloads(&a.points)?;
    let modes = mode_list(&a.mode);
    // Sequential alone has nothing to choose, and its table would replace each point's choices.
    if modes.modes.iter().all(|&m| m == ModeKind::Sequential) {
        return Err(t3_wgpu::Error::invalid(
            "--mode",
            a.mode.join(","),
            "a mode to tune besides sequential (host, encoded, fused or all): sequential is \
             timed beside each",
        )
        .into());
    }
    let mut jobs = Vec::new();
    for (shape, tp, collective, label) in workloads {
        let ranks = if a.points.ranks.is_empty() {
            vec![tp.unwrap_or(4)]
        } else {
            a.points.ranks.clone()
        };
        for r in ranks {
            let mut config = Config {
                collective,
                dtype: a.gemm.dtype.0,
                out_dtype: a.gemm.out(a.devices.across()),
                fused: a.knobs.fused(),
                host: a.knobs.host(),
                order: a.knobs.one_order()?,
                ..Config::new(shape, r)
            };
            let devices = a.devices.devices.as_ref().map(|s| s.count());
            config.chunks = model_chunks(devices, &config).unwrap_or(1);
            validate(&config, &modes)
                .and_then(|()| check_devices(&a.devices, r, &modes))
                .with_context(|| format!("tune point {label} ranks {r}"))?;
            let name = if a.points.ranks.is_empty() {
                label.clone()
            } else {
                format!("{label} ranks {r}")
            };
            jobs.push((name, config));
        }
    }
    Ok(jobs)
}

/// The table `t3 tune` adds to: the one at `out` where it is this adapter's and sound, else a new
/// one (a bad or stale one is said, and replaced when the first point is saved). Another adapter's
/// is refused, as is a file that is no tune table: they would be lost.
fn table_to_extend(out: &str, gpu: &Gpu) -> Result<Table> {
    let new = || {
        Table::new(
            &gpu.describe(),
            &format!("{:?}", gpu.info.backend),
            &gpu.info.driver_info,
        )
    };
    if !std::path::Path::new(out).exists() {
        return Ok(new());
    }
    match Table::load(out) {
        Ok(t) => {
            t.check_adapter(out, &gpu.describe())?;
            Ok(t)
        }
        // An empty file (a path made beforehand) holds nothing to lose.
        Err(e) if Table::is_table(out) || std::fs::metadata(out).is_ok_and(|m| m.len() == 0) => {
            note!("warning: {e}; starting a new table");
            Ok(new())
        }
        // Not a table at all (a file given by mistake): replacing it would lose it.
        Err(e) => Err(t3_wgpu::Error::invalid(
            "--out",
            out,
            format!("a tune table to extend, or a path not yet taken; this one: {e}"),
        )
        .into()),
    }
}

/// A tuned point in words: its sequential time, then each mode's choice.
pub fn describe_point(p: &Point) -> String {
    let k = &p.key;
    let mut s = format!(
        "{}: {}x{}x{} x {} ranks, {}, {} on {}: sequential {:.3} ms\n",
        p.workload,
        k.m,
        k.n,
        k.k,
        k.ranks,
        k.collective,
        k.dtype,
        counted(k.devices, "device"),
        p.sequential_ms
    );
    if let Some(why) = &p.no_room {
        s += &format!("  {why}\n");
    }
    for c in &p.modes {
        let what = if c.fallback {
            format!(
                "falls back to sequential (its best, {}, {})",
                c.knobs.describe(c.mode),
                if c.speedup < 1.0 {
                    format!("is {:.2}% slower", (1.0 / c.speedup - 1.0) * 100.0)
                } else {
                    format!(
                        "is {:.2}% faster{}",
                        (c.speedup - 1.0) * 100.0,
                        fallback_why(c.speedup, p.no_room.is_some())
                    )
                }
            )
        } else {
            c.knobs.describe(c.mode)
        };
        // The speedup is of its slowest figure's time on warm clocks: said where that is not the
        // time printed.
        let warm = p.sequential_ms / c.speedup;
        let beside = c
            .sequential_ms
            .filter(|_| (warm / c.median_ms - 1.0).abs() >= 0.005)
            .map(|s| {
                format!(
                    concat!(
                        ", sequential beside it {:.3} ms; ",
                        "its slowest figure {:.3} ms on warm clocks"
                    ),
                    s, warm
                )
            })
            .unwrap_or_default();
        // The configuration as given stood in the place of the confirmed one fastest by its slowest
        // figure: which, and why.
        let kept = c
            .confirmed
            .first()
            .filter(|f| f.knobs.canonical() != c.knobs.canonical())
            .and_then(|f| {
                Some(format!(
                    "; kept as given: {} read {:.3} ms, not clearly faster",
                    f.knobs.describe(c.mode),
                    f.median_ms?
                ))
            })
            .unwrap_or_default();
        s += &format!(
            "  {:<8} {:>10.3} ms {:>7.3}x  {what} ({} measured{beside}{}{kept})\n",
            c.mode,
            c.median_ms,
            c.speedup,
            c.alternatives.len(),
            c.model_ms
                .map(|m| format!(", model {m:.3} ms"))
                .unwrap_or_default()
                + &c.given_ms
                    .map(|m| format!(", as given {m:.3} ms"))
                    .unwrap_or_default()
        );
    }
    for n in &p.not_run {
        s += &format!("  {:<8} not tuned: {}\n", n.mode, n.why);
    }
    s
}

/// `t3 tune`: every point of `a` on `gpus`, within `--budget-s`, into the adapter's table.
pub fn tune(gpus: &[Gpu], a: &TuneCmdArgs, jobs: Vec<(String, Config)>) -> Result<()> {
    check_spanning(&mode_list(&a.mode), gpus.len())?;
    let out = a.out.clone().unwrap_or_else(|| default_table(&gpus[0]));
    files::Files::default().output("--out", &out).check()?;
    let kernels = kernels_on(gpus, a.gemm, a.knobs.put(), a.devices.across())?;
    let mut table = table_to_extend(&out, &gpus[0])?;
    let devices = search::Devices {
        gpus,
        kernels: &kernels,
        path: a.devices.link_path,
    };
    let settings = Settings {
        reps: a.reps,
        warmup: a.warmup,
        warmup_s: a.warmup_s,
        seed: a.seed,
        exhaustive: a.exhaustive,
        search_no_room: a.search_no_room,
        ..Settings::default()
    };
    let ctx = SpaceContext {
        devices: gpus.len(),
        sms: gpus[0].sms,
    };
    let modes = mode_list(&a.mode).modes;
    let bar = std::io::stderr().is_terminal().then(|| {
        let b = indicatif::ProgressBar::new(jobs.len() as u64);
        b.set_style(
            indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} {msg} [{elapsed}]")
                .expect("template"),
        );
        b
    });
    let start = Instant::now();
    // Each measurement's start on the tuning's clock where no bar shows it: a log then says what
    // each measurement took, and which carried a point past its share.
    let progress = |msg: &str| match &bar {
        Some(b) => b.set_message(msg.to_string()),
        None => note!("tune: [{:.1} s] {msg}", start.elapsed().as_secs_f64()),
    };
    // A point's lines, printed above the bar, which then counts the point.
    let say = |text: &str| -> Result<()> {
        match &bar {
            Some(b) => b.suspend(|| outln!("{text}"))?,
            None => outln!("{text}")?,
        }
        if let Some(b) = &bar {
            b.inc(1);
        }
        Ok(())
    };
    let end = start + Duration::from_secs_f64(a.budget_s);
    // Presets of one shape are one point (the table keys a choice by it): tuned once, under the
    // first name, so that a second tuning does not spend its share again only to replace the first.
    let keys: Vec<Key> = jobs.iter().map(|(_, c)| Key::of(c, gpus.len())).collect();
    let tuned: Vec<bool> = (0..jobs.len())
        .map(|i| !keys[..i].contains(&keys[i]))
        .collect();
    let weights: Vec<f64> = jobs
        .iter()
        .map(|(_, c)| run_weight(c, gpus[0].info.device_type, gpus.len()))
        .collect();
    for (i, (workload, base)) in jobs.iter().enumerate() {
        if let Some(j) = keys[..i].iter().position(|k| *k == keys[i]) {
            say(&format!(
                "{workload}: the same point as {}, tuned above",
                jobs[j].0
            ))?;
            continue;
        }
        let t0 = Instant::now();
        let its_share = share(end.saturating_duration_since(t0), &weights, &tuned, i);
        let deadline = t0 + its_share;
        // As given: what a run without a table gets, the model's defaults (one GPU's, or the grain
        // across four devices or more) included.
        let given = Given {
            collective: a.points.collective.is_some(),
            ..given_knobs(&a.knobs)
        };
        let mut base = base.clone();
        // `--devices all` was counted as two devices until they were open.
        super::tables::recount_chunks(&mut base, a.devices.devices.is_some(), gpus.len());
        super::run::model_defaults(&mut base, &given, gpus, &kernels);
        // Fused mode's own, where the model gives it one: `run` and `sweep` run it so untuned.
        let fused = t3_wgpu::tune::model::fused_defaults(
            &base,
            &given,
            gpus[0].info.device_type,
            gpus.len(),
        );
        let job = Job {
            workload: workload.clone(),
            base,
            modes: modes.clone(),
            given,
            fused,
        };
        let point = search::tune_point(&devices, &job, &settings, ctx, deadline, &progress)?;
        let text = describe_point(&point);
        // Saved after every point, before it is printed: an interrupted tuning, or a closed
        // standard output, keeps what it measured.
        table.insert(point);
        table.save(&out)?;
        // The point's own time beside its share: what one preset costs to tune, where the
        // measurements made whatever the budget carry it past.
        say(&format!(
            "{}\n  tuned in {:.0} s of its {:.0} s share",
            text.trim_end(),
            t0.elapsed().as_secs_f64(),
            its_share.as_secs_f64()
        ))?;
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    note!(
        "wrote {out} ({}, {:.0} s of a {:.0} s budget)",
        counted(table.points.len(), "point"),
        start.elapsed().as_secs_f64(),
        a.budget_s
    );
    Ok(())
}

/// What one run of point `c` costs, as the model puts it (ms; at least 1): its sequential time on a
/// device of `kind` over `devices` devices. A measurement of a large point costs more than its runs
/// (a system built, operands uploaded, a warm-up that settles) but grows with them.
fn run_weight(c: &Config, kind: wgpu::DeviceType, devices: usize) -> f64 {
    use t3_wgpu::tune::model;
    let costs = model::Prior::of(Some(kind), c.dtype, devices, None).costs(c, devices);
    let ms = model::predict_ms(
        t3_wgpu::config::ModeKind::Sequential,
        &costs,
        c.ranks,
        c.chunks,
    );
    if ms.is_finite() {
        ms.max(1.0)
    } else {
        1.0
    }
}

/// Point `i`'s share of the budget `left`, among the points from `i` on that are tuned (`tuned[j]`:
/// not the same point as an earlier one): half of an even share, plus its weight's part of the other
/// half. An even split leaves a point whose runs take ten times longer a tenth of the
/// configurations; a split by weight alone would leave a small point beside large ones too little
/// for its first measurement (a system built, a warm-up that settles), which costs seconds however
/// short its runs. Time a point leaves unused goes to the rest.
fn share(left: Duration, weights: &[f64], tuned: &[bool], i: usize) -> Duration {
    let rest: Vec<f64> = (i..weights.len())
        .filter(|&j| tuned[j])
        .map(|j| weights[j])
        .collect();
    let total: f64 = rest.iter().sum();
    let weighed = total.is_finite() && total > 0.0 && weights[i].is_finite();
    if rest.is_empty() || !weighed {
        return left;
    }
    let part = 0.5 / rest.len() as f64 + 0.5 * weights[i] / total;
    left.mul_f64(part.clamp(0.0, 1.0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use t3_wgpu::config::ModeKind;
    use t3_wgpu::shapes::Shape;
    use t3_wgpu::tune::table::{Choice, Key, Measured};
    use t3_wgpu::tune::Knobs;

    #[test]
    fn each_point_takes_half_an_even_share_and_its_part_by_cost() {
        let left = Duration::from_secs(240);
        // Three points: the second three times the first's cost, the third the first again (a
        // preset of the same shape, not tuned twice): a quarter of the even half and a quarter of
        // the weighted one.
        let (w, tuned) = ([10.0, 30.0, 10.0], [true, true, false]);
        assert_eq!(share(left, &w, &tuned, 0), Duration::from_secs(90));
        assert_eq!(share(left, &w, &tuned, 1), left);
        // The last point takes all that is left; a point a hundredth of the others' cost still
        // half of an even share.
        assert_eq!(share(left, &[5.0], &[true], 0), left);
        let tiny = share(left, &[1.0, 100.0, 100.0], &[true; 3], 0);
        assert!(tiny > left / 6 && tiny < left / 5, "{tiny:?}");
        // A larger shape of the same point weighs more.
        let small = Config::new(Shape::new(8192, 4256, 1064).unwrap(), 4);
        let large = Config::new(Shape::new(8192, 20480, 5120).unwrap(), 4);
        let gpu = wgpu::DeviceType::DiscreteGpu;
        assert!(run_weight(&large, gpu, 4) > 5.0 * run_weight(&small, gpu, 4));
        assert_eq!(
            run_weight(&Config::new(Shape::new(1, 1, 1).unwrap(), 1), gpu, 1),
            1.0
        );
    }

    /// `t3 tune --preset P` (as `t3 run` names one) tunes P, as `--presets P`; the default budget
    /// is 50 s.
    #[test]
    fn a_preset_named_as_run_names_one_is_tuned() {
        use clap::Parser;
        for flag in ["--preset", "--presets"] {
            let cli =
                crate::cli::args::Cli::try_parse_from(["t3", "tune", flag, "tnlg-op-tp8"]).unwrap();
            let Some(crate::cli::args::Cmd::Tune(a)) = &cli.cmd else {
                panic!("not a tune")
            };
            assert_eq!(a.points.presets, ["tnlg-op-tp8"], "{flag}");
            assert_eq!(a.budget_s, 50.0);
            let jobs = tune_jobs(a).unwrap();
            assert_eq!(jobs.len(), 1, "{flag}");
            assert_eq!(jobs[0].1.ranks, 8, "{flag}");
        }
    }

    /// The least lead the help texts name is the tuner's.
    #[test]
    fn the_help_names_the_least_lead_the_tuner_asks() {
        use clap::CommandFactory;
        let lead = format!("{:.1}%", search::LEAST_LEAD * 100.0);
        let mut cli = crate::cli::args::Cli::command();
        for (sub, arg, said) in [
            (
                "run",
                "no_fallback",
                format!("leads it by less than {lead}"),
            ),
            ("tune", "budget_s", format!("or under {lead} ahead")),
        ] {
            let sub = cli.find_subcommand_mut(sub).unwrap();
            let a = sub.get_arguments().find(|a| a.get_id() == arg).unwrap();
            let help = a.get_long_help().or(a.get_help()).unwrap().to_string();
            assert!(help.contains(&said), "--{arg}: {help}");
        }
    }

    /// Where the configuration as given stood in the fastest confirmed one's place, the line names
    /// that one and says why; where the fastest is the choice, it says nothing more.
    #[test]
    fn a_configuration_kept_as_given_is_said_with_the_faster_reading_one() {
        let config = Config::new(Shape::new(64, 48, 32).unwrap(), 2);
        let given = Knobs::of(&config);
        let mut grid = given.clone();
        grid.gemm_grid = Some(128);
        let measured = |k: &Knobs, t| Measured {
            knobs: k.clone(),
            median_ms: Some(t),
            sequential_ms: Some(2.0),
            consistent: true,
            error: None,
        };
        let point = |chosen: &Knobs| Point {
            workload: "w".into(),
            key: Key::of(&config, 1),
            sequential_ms: 2.0,
            modes: vec![Choice {
                mode: ModeKind::Encoded,
                knobs: chosen.clone(),
                median_ms: 1.0,
                sequential_ms: Some(2.0),
                speedup: 2.0,
                fallback: false,
                model_ms: None,
                given_ms: Some(1.0),
                alternatives: vec![measured(&grid, 0.99), measured(&given, 1.0)],
                confirmed: vec![measured(&grid, 0.99), measured(&given, 1.0)],
            }],
            not_run: Vec::new(),
            no_room: None,
        };
        let kept = describe_point(&point(&given));
        assert!(
            kept.contains("; kept as given: chunks 1, reduce update, grid 128, lead auto read 0.990 ms, not clearly faster)"),
            "{kept}"
        );
        assert!(!describe_point(&point(&grid)).contains("kept as given"));
        // Where no mode was searched, why, under the point's line.
        let mut unsearched = point(&given);
        unsearched.no_room = Some("no room to overlap: why".into());
        assert!(describe_point(&unsearched).contains(" ms\n  no room to overlap: why\n  encoded "));
        // There a lead within the room's bound falls back, said as a lead.
        unsearched.modes[0].speedup = 1.005;
        unsearched.modes[0].fallback = true;
        let text = describe_point(&unsearched);
        assert!(
            text.contains(
                ", is 0.50% faster, within the noise of a point without room to overlap)"
            ),
            "{text}"
        );
        // With room, a lead under the least a choice needs falls back, said as a lead.
        let mut tie = point(&given);
        tie.modes[0].speedup = 1.003;
        tie.modes[0].fallback = true;
        let text = describe_point(&tie);
        assert!(
            text.contains(", is 0.30% faster, a lead under the 0.5% a choice needs)"),
            "{text}"
        );
    }
}
