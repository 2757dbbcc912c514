//! `t3 run` and the demo: a run checked before any GPU work, measured, and written out.

use anyhow::{Context, Result};

use t3_wgpu::config::fused::FusedOptions;
use t3_wgpu::devices::{Devices, Placement};
use t3_wgpu::experiment::{self, ModeResult, Options, Report, Stability, Verify};
use t3_wgpu::files;
use t3_wgpu::gemm::FusedPut;
use t3_wgpu::gpu::{Gpu, GpuOptions};
use t3_wgpu::link::{self, LinkTable};
use t3_wgpu::modes::{Config, Kernels, ModeKind, StepLead};
use t3_wgpu::plan::ReduceVia;
use t3_wgpu::report::{self, Row};
use t3_wgpu::schedule::Collective;

use super::progress::Progress;
use t3_wgpu::settings::{self, KernelFiles};
use t3_wgpu::shapes::{Dtype, Shape};
use t3_wgpu::steps::Link;
use t3_wgpu::{gantt, trace, workload};

use t3_wgpu::tune::apply::{plan, run_plans, Given};
use t3_wgpu::tune::search;
use t3_wgpu::tune::Table;

use super::args::*;
use super::output::out;
use super::tables::{given_knobs, model_chunks, recount_chunks, table_for};
use super::values::*;

pub fn open_gpu(g: &GpuArgs) -> Result<Gpu> {
    Ok(Gpu::new(&gpu_options(g)?)?)
}

/// The devices the ranks run on: those `--devices` names, else the one device the options pick.
pub fn open_devices(g: &GpuArgs, d: &DevicesArg) -> Result<Vec<Gpu>> {
    Ok(match &d.devices {
        Some(spec) => Devices::open(spec, &gpu_options(g)?)?.gpus,
        None => vec![open_gpu(g)?],
    })
}

/// Refuses, before any device is opened, a device count the ranks cannot fill, or a mode named
/// explicitly that cannot span the devices (it would only be listed as skipped: nothing measured).
pub fn check_devices(d: &DevicesArg, ranks: usize, modes: &ModeList) -> t3_wgpu::Result<()> {
    match d.devices.as_ref().and_then(|s| s.count()) {
        Some(n) => {
            Placement::new(ranks, n)?;
            check_spanning(modes, n)
        }
        None => Ok(()),
    }
}

/// Refuses a mode named explicitly that runs on one device where the ranks span `devices`.
pub fn check_spanning(modes: &ModeList, devices: usize) -> t3_wgpu::Result<()> {
    match modes.named.iter().find(|m| !m.spans_devices()) {
        Some(m) if devices > 1 => Err(t3_wgpu::Error::invalid(
            "--mode",
            format!("{m} with the ranks on {devices} devices"),
            "sequential or host where the ranks span devices (encoded and fused mode run on one; `all` lists them as skipped)",
        )),
        _ => Ok(()),
    }
}

/// What the flags say of the devices to open.
pub fn flag_options(g: &GpuArgs) -> GpuOptions {
    GpuOptions {
        backend: g.backend.clone(),
        adapter: g.adapter.clone(),
        timeout: g.timeout,
        sms: g.sms,
        kernels: g.kernels(),
        ..Default::default()
    }
}

/// The options every device is opened with: the flags, and the environment where they are silent.
pub fn gpu_options(g: &GpuArgs) -> t3_wgpu::Result<GpuOptions> {
    settings::with_environment(flag_options(g))
}

/// Shape, ranks and collective from --shape or --preset (and their overrides).
pub fn resolve(
    w: &Workload,
    ranks: Option<usize>,
    collective: Option<Collective>,
) -> Result<(Shape, usize, Collective, String)> {
    match (&w.shape, &w.preset) {
        (Some(s), _) => Ok((
            *s,
            ranks.unwrap_or(4),
            collective.unwrap_or(Collective::ReduceScatter),
            s.to_string(),
        )),
        (None, Some(p)) => {
            let pr = workload::find(p, w.tokens, w.scale).context("preset vanished")?;
            let r = ranks.unwrap_or(pr.tp);
            // Every rank owns a row: said here of the flags that shrank the rows, not of the ranks.
            if r > pr.m {
                return Err(t3_wgpu::Error::invalid(
                    "preset's output rows",
                    format!(
                        "{} ({} at --tokens {} --scale {})",
                        pr.m, pr.name, w.tokens, w.scale
                    ),
                    format!("at least its {r} ranks, a row each: a larger --tokens or --scale"),
                )
                .into());
            }
            Ok((
                Shape::new(pr.m, pr.n, pr.k)?,
                r,
                collective.unwrap_or(pr.collective),
                pr.name,
            ))
        }
        (None, None) => Err(t3_wgpu::Error::invalid(
            "workload",
            "none given",
            "--shape MxNxK or --preset NAME (see `t3 presets`)",
        )
        .into()),
    }
}

/// Refuses a configuration that cannot apply, or a mode named for it that cannot run it.
pub fn validate(config: &Config, modes: &ModeList) -> t3_wgpu::Result<()> {
    config.validate()?;
    modes.named.iter().try_for_each(|&m| config.check_mode(m))
}

/// `--link-gbps`: the table and the budget it picks, before any GPU work (the adapter is checked
/// once the GPU is open).
pub struct LinkChoice {
    pub table: LinkTable,
    pub asked: f64,
    pub emulated: f64,
    pub link: Link,
}

pub fn link_choice(a: &RunArgs) -> Result<Option<LinkChoice>> {
    let Some(asked) = a.link_gbps else {
        return Ok(None);
    };
    let table = LinkTable::load(&a.link_table)?;
    let (link, emulated) = table.budget_for(asked)?;
    Ok(Some(LinkChoice {
        table,
        asked,
        emulated,
        link,
    }))
}

/// Says what the link emulates against what was asked (stderr: stdout may carry the JSON).
pub fn say_link(a: &RunArgs, c: &LinkChoice) {
    let off = (c.emulated / c.asked - 1.0) * 100.0;
    let warn = if off.abs() > 10.0 {
        format!(" ({off:+.0}%: no budget in the table comes closer)")
    } else {
        String::new()
    };
    note!(
        "link: asked {} GB/s, emulating {:.1} GB/s with {} (measured in {}){warn}",
        c.asked,
        c.emulated,
        c.link.describe(),
        a.link_table
    );
}

/// A run checked before any GPU work: workload, combinations, output paths and link table.
pub struct Checked {
    pub label: String,
    pub config: Config,
    pub link: Option<LinkChoice>,
    /// Fused mode's put, chosen when the kernels are made.
    pub put: FusedPut,
    /// The knobs given explicitly (they win over the tune table's), whether the chunk count is the
    /// model's, and a `--tune FILE` table as read.
    pub given: Given,
    pub model_chunks: bool,
    pub tune_table: Option<Table>,
}

pub fn check_run(kernels: &KernelFiles, a: &RunArgs) -> Result<Checked> {
    let mut files = super::kernel_inputs(kernels, files::Files::default());
    if a.link_gbps.is_some() {
        files = files.input("--link-table", &a.link_table);
    }
    for (what, path) in [
        ("--json", &a.json),
        ("--csv", &a.csv),
        ("--trace", &a.trace),
        ("--svg", &a.svg),
    ] {
        if let Some(p) = path {
            files = files.output(what, p);
        }
    }
    if let Some(d) = &a.dump {
        files = files.dump("--dump", d);
    }
    let (files, tune_table) = super::tables::check_tune(&a.tune, files)?;
    files.check()?;
    let (shape, ranks, collective, label) =
        resolve(&a.workload, a.ranks, a.collective.map(|c| c.0))?;
    let link = link_choice(a)?;
    let mut config = Config {
        shape,
        ranks,
        chunks: a.chunks.unwrap_or(1),
        collective,
        order: a.knobs.one_order()?,
        via: a.reduce.map_or(ReduceVia::Update, |r| r.0),
        link: match (a.link_workgroups, &link) {
            (Some(w), _) => Link::Workgroups(w),
            (None, Some(c)) => c.link,
            (None, None) => Link::Unthrottled,
        },
        dtype: a.gemm.dtype.0,
        out_dtype: a.gemm.out(a.devices.across()),
        arbitrate: a.arbitrate,
        gemm_grid: a.gemm_grid.filter(|&g| g > 0),
        // The progress log only where a file carries the timeline.
        fused: FusedOptions {
            timeline: a.json.is_some() || a.svg.is_some() || a.trace.is_some(),
            ..a.knobs.fused()
        },
        host: a.knobs.host(),
        step_lead: a.step_lead.unwrap_or(StepLead::Auto),
    };
    let model = match a.chunks {
        Some(_) => None,
        None => model_chunks(a.devices.devices.as_ref().map(|s| s.count()), &config),
    };
    if let Some(n) = model {
        config.chunks = n;
    }
    validate(&config, &mode_list(&a.mode))?;
    check_devices(&a.devices, config.ranks, &mode_list(&a.mode))?;
    Ok(Checked {
        label,
        config,
        link,
        put: a.knobs.put(),
        given: Given {
            chunks: a.chunks.is_some(),
            reduce: a.reduce.is_some(),
            gemm_grid: a.gemm_grid.is_some(),
            step_lead: a.step_lead.is_some(),
            link: a.link_workgroups.is_some() || a.link_gbps.is_some(),
            arbitrate: a.arbitrate.is_some(),
            collective: a.collective.is_some(),
            ..given_knobs(&a.knobs)
        },
        model_chunks: model.is_some(),
        tune_table,
    })
}

/// Writes every output a run asked for, the files before standard output (a closed pipe ends the
/// printing, never the files); says where on stderr (stdout may carry the JSON or CSV). Returns the
/// text for standard output, if an output goes there.
pub fn outputs(a: &RunArgs, label: &str, r: &Report) -> Result<Option<String>> {
    let mut texts: Vec<(&str, String, &str)> = Vec::new();
    if let Some(path) = &a.json {
        texts.push((path, serde_json::to_string_pretty(r)? + "\n", ""));
    }
    if let Some(path) = &a.csv {
        texts.push((path, report::csv_text(&Row::measured(label, r), true)?, ""));
    }
    if let Some(path) = &a.trace {
        let t = serde_json::to_string(&trace::chrome_trace(&r.timelines))?;
        texts.push((
            path,
            t,
            " (open in https://ui.perfetto.dev or chrome://tracing)",
        ));
    }
    if let Some(path) = &a.svg {
        texts.push((path, gantt::gantt_svg(&r.timelines), ""));
    }
    let mut stdout = None;
    for (path, text, what) in texts {
        if path == "-" {
            stdout = Some(text);
            continue;
        }
        files::write(path, &text)?;
        note!("wrote {path}{what}");
    }
    Ok(stdout)
}

/// Whether any mode's check failed: a wrong number is a failure, never just a row.
pub fn wrong(r: &Report) -> bool {
    r.results.iter().any(ModeResult::wrong)
}

/// The mode whose run left the outputs: the last one measured (sequential always runs first).
pub fn last_mode(r: &Report) -> ModeKind {
    r.results
        .iter()
        .rev()
        .find(|m| m.skipped.is_none())
        .map_or(ModeKind::Sequential, |m| m.mode)
}

/// What `run` and `sweep` measure a point with: its modes, (reps, warm-up rounds, warm-up bound in
/// seconds), seed and checks.
pub fn options(
    config: Config,
    modes: &[String],
    (reps, warmup, warmup_s): (usize, usize, f64),
    seed: u64,
    no_verify: bool,
) -> Options {
    Options {
        config,
        modes: mode_list(modes).modes,
        reps,
        warmup,
        seed,
        verify: if no_verify { Some(Verify::Off) } else { None },
        stability: Stability {
            warmup_s,
            min_warmup_s: t3_wgpu::experiment::MIN_WARMUP_S,
            ..Default::default()
        },
        baselines: Default::default(),
    }
}

/// The model's defaults on `config`: on one device `model::one_gpu_defaults` (a persistent GEMM grid
/// with the cooperative-matrix kernel, a step lead of 0 with the SIMT one), across devices
/// `model::across_devices_defaults` (host mode's grain); whether it set any.
pub fn model_defaults(
    config: &mut Config,
    given: &Given,
    gpus: &[Gpu],
    kernels: &[Kernels],
) -> bool {
    let ([gpu], [k]) = (gpus, kernels) else {
        return gpus.first().is_some_and(|g| {
            t3_wgpu::tune::model::across_devices_defaults(
                config,
                given,
                g.info.device_type,
                gpus.len(),
            )
        });
    };
    let coop = k.gemm.engine != t3_wgpu::gemm::Engine::Simt;
    t3_wgpu::tune::model::one_gpu_defaults(config, given, gpu.info.device_type, coop, gpu.sms)
}

/// Each device's kernels for `gemm`'s operands.
pub fn kernels_on(
    gpus: &[Gpu],
    gemm: GemmArgs,
    put: FusedPut,
    across: bool,
) -> Result<Vec<Kernels>> {
    Ok(gpus
        .iter()
        .map(|g| gemm.kernels(g, put, across))
        .collect::<t3_wgpu::Result<_>>()?)
}

pub fn run(gpus: &[Gpu], a: &RunArgs, c: Checked) -> Result<()> {
    // `--devices all`: the count is known once they are open, before any work.
    let modes = mode_list(&a.mode);
    check_spanning(&modes, gpus.len())?;
    // A mode's knobs where the run times no such mode change nothing: said, not dropped silently.
    // Across devices sequential mode runs the host links' trigger loop too, which --host-loop's
    // wait, copy threads, handoff and trigger configure.
    for (given, mode, flag) in [
        (
            a.knobs.host_loop.is_some() && gpus.len() == 1,
            ModeKind::Host,
            "--host-loop",
        ),
        (a.knobs.fused.is_some(), ModeKind::Fused, "--fused"),
    ] {
        if given && !modes.modes.contains(&mode) {
            note!("note: {flag} configures {mode} mode, which this run does not time");
        }
    }
    if let Some(l) = &c.link {
        for g in gpus {
            l.table.check_adapter(&a.link_table, &g.describe())?;
        }
        say_link(a, l);
    }
    let kernels = kernels_on(gpus, a.gemm, c.put, a.devices.across())?;
    let mut config = c.config;
    recount_chunks(&mut config, c.model_chunks, gpus.len());
    validate(&config, &modes)?;
    let defaults = model_defaults(&mut config, &c.given, gpus, &kernels);
    let opts = options(
        config,
        &a.mode,
        (a.reps, a.warmup, a.warmup_s),
        a.seed,
        a.no_verify,
    );
    let progress = Progress::start("lowering the plan and uploading the inputs");
    let table = table_for(&a.tune, c.tune_table, &gpus[0])?;
    let plans = plan(
        &opts.config,
        &opts.modes,
        table.as_ref(),
        gpus.len(),
        gpus[0].info.device_type,
        &c.given,
        c.model_chunks || defaults,
    );
    for w in plans.iter().filter_map(|p| p.not_taken.as_ref()) {
        note!("warning: {w}");
    }
    let devices = search::Devices {
        gpus,
        kernels: &kernels,
        path: a.devices.link_path,
    };
    // A dump holds one run: the last configuration's, its last mode's outputs.
    let mut dumped = false;
    let mut after = |sys: &t3_wgpu::modes::System, inputs: &t3_wgpu::ranks::Inputs, r: &Report| {
        if let Some(dir) = &a.dump {
            let outputs = experiment::outputs(sys)?;
            report::dump(
                dir,
                &sys.config,
                &sys.chunking,
                inputs,
                &outputs,
                last_mode(r).name(),
            )?;
            dumped = true;
        }
        Ok(())
    };
    progress.phase(if a.no_verify {
        "lowering the plan, uploading the inputs, warming up"
    } else {
        "lowering the plan, uploading the inputs, checking every mode against the f64 reference"
    });
    let r = run_plans(
        &devices,
        &plans,
        &opts,
        a.tune.no_fallback,
        &|w, r| progress.timed(w, r),
        &mut after,
    )?;
    drop(progress);
    let mut r = r;
    links_against_calibration(&mut r);
    // Every file first: what standard output's reader does cannot lose them.
    let stdout = outputs(a, &c.label, &r)?;
    if let Some(dir) = a.dump.as_ref().filter(|_| dumped) {
        note!("wrote {dir}/rank*_{{a,b,out}}.npy and {dir}/meta.json");
    }
    let shown = match stdout {
        Some(text) => out(&text),
        None if a.verbose => outln!("{}\n{}", c.label, report::text(&r)),
        None => outln!("{}\n{}", c.label, report::summary(&r)),
    };
    // A failed check fails the run whether or not its table could be shown.
    anyhow::ensure!(
        !wrong(&r),
        "a mode's result or tracker check failed (see the table)"
    );
    // Modes named, and every mode but sequential skipped (as a configuration fused mode cannot
    // lower): nothing asked for ran.
    if let Some(why) = r
        .results
        .iter()
        .filter(|m| m.mode != ModeKind::Sequential)
        .map(|m| m.skipped.as_ref().map(|w| format!("{}: {w}", m.mode)))
        .collect::<Option<Vec<_>>>()
        .filter(|w| !modes.named.is_empty() && !w.is_empty())
    {
        anyhow::bail!("every mode named was skipped ({})", why.join("; "));
    }
    shown
}

/// Across devices, the links' rates read against `t3-hostlink.json` in the current folder where it
/// calibrated these devices; where it is there but cannot be read against them, a note says why.
fn links_against_calibration(r: &mut Report) {
    let file = t3_wgpu::hostlink::calibration::DEFAULT_TABLE;
    if r.links.is_empty() || !std::path::Path::new(file).exists() {
        return;
    }
    let why = match t3_wgpu::hostlink::calibration::HostLinkTable::load(file) {
        Ok(t) => match experiment::read_links_against(r, &t, file) {
            Ok(()) => return,
            Err(why) => why,
        },
        Err(e) => e.to_string(),
    };
    note!("the links' rates are not read against {file}: {why}");
}

/// The demo: T-NLG's output projection at 4 ranks, scaled to the adapter, every mode.
pub fn demo(gpu: &Gpu) -> Result<()> {
    let cpu = gpu.info.device_type == wgpu::DeviceType::Cpu;
    // On a CPU adapter (lavapipe) 1/16 of every dimension keeps the demo under a minute.
    let mut scale = if cpu { 1.0 / 16.0 } else { 1.0 };
    let preset = "tnlg-op-tp4";
    let pick = |scale: f64| {
        workload::find(preset, workload::DEFAULT_TOKENS, scale).expect("demo preset exists")
    };
    // Shrink until every buffer fits the adapter's binding limit.
    while (pick(scale).largest_buffer_bytes()) > gpu.max_binding && scale > 1e-3 {
        scale /= 2.0;
    }
    let pr = pick(scale);
    outln!(
        "demo: {} ({} x {} ranks, scale {scale})",
        pr.name,
        Shape::new(pr.m, pr.n, pr.k)?,
        pr.tp
    )?;
    let a = RunArgs {
        workload: Workload {
            shape: None,
            preset: Some(preset.into()),
            tokens: workload::DEFAULT_TOKENS,
            scale,
        },
        ranks: None,
        devices: DevicesArg::default(),
        collective: None,
        mode: vec!["all".into()],
        chunks: Some(2),
        knobs: Default::default(),
        gemm: GemmArgs {
            dtype: DtypeArg(Dtype::F32),
            out_dtype: None,
            gemm_kernel: KernelArg(None),
        },
        reduce: None,
        link_workgroups: None,
        arbitrate: None,
        gemm_grid: None,
        step_lead: None,
        tune: TuneArgs {
            tune: "auto".into(),
            no_fallback: false,
        },
        link_gbps: None,
        link_table: link::DEFAULT_TABLE.into(),
        reps: if cpu { 3 } else { 10 },
        warmup: if cpu { 1 } else { 3 },
        warmup_s: if cpu { 2.0 } else { 10.0 },
        seed: 1,
        verify: true,
        no_verify: false,
        json: Some("t3-results.json".into()),
        csv: None,
        trace: Some("t3-trace.json".into()),
        svg: Some("t3-timeline.svg".into()),
        dump: None,
        verbose: false,
    };
    let checked = check_run(&gpu.kernels, &a)?;
    run(std::slice::from_ref(gpu), &a, checked)?;
    let cwd = std::env::current_dir()
        .map(|d| d.display().to_string())
        .unwrap_or_default();
    outln!("\nwrote t3-timeline.svg, t3-trace.json and t3-results.json in {cwd}")
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[test]
    fn a_bare_run_builds_the_cores_defaults() {
        // `Config::new` says it gives the command line's defaults: a bare `t3 run --shape MxNxK
        // --ranks R` (one device, no tune table) builds exactly it.
        for (shape, ranks) in [("64x32x16", 1), ("96x40x24", 4), ("300x20x10", 8)] {
            let cli =
                Cli::try_parse_from(["t3", "run", "--shape", shape, "--ranks", &ranks.to_string()])
                    .unwrap();
            let Some(Cmd::Run(a)) = &cli.cmd else {
                panic!("not a run")
            };
            let checked = check_run(&cli.gpu.kernels(), a).unwrap();
            let want = Config::new(Shape::parse(shape).unwrap(), ranks);
            assert_eq!(
                serde_json::to_value(&checked.config).unwrap(),
                serde_json::to_value(&want).unwrap(),
                "{shape} on {ranks} ranks"
            );
            assert!(!checked.model_chunks);
        }
    }
}
