//! The polled link (src/hostlink/polled.rs): chunks handed over slice by slice through flags in
//! memory both ends poll, with no submission between slices. Per scenario, whether every word
//! arrived as sent (mismatches, timeouts) and at what rate: a loopback on each device through its
//! own memory and through host memory, each device to and from host threads, and with two devices
//! or more each direction of a pair alone, both at once and the ring of every device at once.
//!
//! With `--beside-gemm MxNxK[:DTYPE]`, each scenario also runs with a GEMM in every device's pass
//! after the link's kernels (a receiver that waits beside GEMM work, the pattern a landing triggered
//! on the GPU needs), timed against each alone and the GEMM's rows checked exactly.
//!
//! Flags after `--` (`cargo bench --bench polled -- --help`): `--devices`, `--lanes`, `--slots`,
//! `--slice-kib`, `--mib`, `--spins`, `--only`, `--memory`, `--reps`, `--timeout-s`, `--beside-gemm`, `--json FILE` (a line
//! per link and run).

mod common;

use common::*;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use t3_wgpu::devices::{DeviceSpec, Devices};
use t3_wgpu::executor::{dispatch_parts, prepare_parts};
use t3_wgpu::gemm::{GemmKernel, StoreMode};
use t3_wgpu::hostlink::polled::{End, FlagLoad, Memory, Outcome, Polled, Ring};
use t3_wgpu::shapes::{Dtype, Shape};
use t3_wgpu::tracked::{ExactRow, TrackedGemm};

/// The polled link, by scenario.
#[derive(clap::Parser, Debug)]
#[command(name = "bench-polled")]
struct Args {
    /// The devices, as t3's `--devices`: all, a count N (N devices on the chosen adapter) or
    /// adapter indices (`0,1`).
    #[arg(long, default_value = "all")]
    devices: DeviceSpec,
    /// Lanes per link (a workgroup or host thread at each end).
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..=1024))]
    lanes: u32,
    /// Slots per lane.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=4096))]
    slots: u32,
    /// KiB per slice.
    #[arg(long, default_value_t = 128, value_parser = clap::value_parser!(u32).range(1..=65536))]
    slice_kib: u32,
    /// MiB each link moves per run (rounded to whole slices per lane).
    #[arg(long, default_value_t = 256, value_parser = clap::value_parser!(u32).range(1..=65536))]
    mib: u32,
    /// Flag loads a kernel's wait makes before it gives up.
    #[arg(long, default_value_t = 1 << 22, value_parser = clap::value_parser!(u32).range(1..))]
    spins: u32,
    /// How kernels read flags: atomic, rmw, volatile (a comma list: every scenario with each).
    #[arg(long, value_delimiter = ',', default_value = "atomic", value_parser = flag_load)]
    flag_load: Vec<FlagLoad>,
    /// Only the scenarios whose name contains one of these (a comma list).
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// Only the scenarios whose memory's name (the table's `memory` column) contains one of these,
    /// in any case (a comma list: host, device, bar, receiver).
    #[arg(long, value_delimiter = ',')]
    memory: Vec<String>,
    /// Runs per scenario (the median's rate reported).
    #[arg(long, default_value_t = 3, value_parser = reps)]
    reps: u32,
    /// Bound on each run, seconds.
    #[arg(long, default_value_t = 20.0, value_parser = seconds)]
    timeout_s: f64,
    /// Also run each scenario with a tracked GEMM of this shape (`MxNxK`, or `MxNxK:f16` / `:bf16`
    /// for those operands) after the link's kernels in every device's pass.
    #[arg(long, value_name = "MxNxK[:DTYPE]", value_parser = gemm_of)]
    beside_gemm: Option<(Shape, Dtype)>,
    #[command(flatten)]
    out: Out,
}

fn flag_load(s: &str) -> Result<FlagLoad, String> {
    FlagLoad::ALL
        .into_iter()
        .find(|l| l.name() == s)
        .ok_or_else(|| format!("'{s}': atomic, rmw or volatile"))
}

fn gemm_of(s: &str) -> Result<(Shape, Dtype), String> {
    t3_wgpu::shapes::gemm_of(s).map_err(|e| e.to_string())
}

fn main() -> ExitCode {
    exit_code(run(clap::Parser::parse()))
}

/// A scenario: its name, its links (run at once) and where their memory is.
type Scenario = (String, Vec<(End, End)>, Memory);

/// Every scenario `n` devices allow.
fn scenarios(n: usize) -> Vec<Scenario> {
    let d = End::Device;
    let mut v = Vec::new();
    for i in 0..n {
        v.push((format!("loopback {i}"), vec![(d(i), d(i))], Memory::Device));
        v.push((format!("loopback {i}"), vec![(d(i), d(i))], Memory::Host));
        v.push((
            format!("{i} -> host"),
            vec![(d(i), End::Host)],
            Memory::Host,
        ));
        v.push((
            format!("host -> {i}"),
            vec![(End::Host, d(i))],
            Memory::Host,
        ));
        v.push((format!("{i} -> host"), vec![(d(i), End::Host)], Memory::Bar));
        v.push((format!("host -> {i}"), vec![(End::Host, d(i))], Memory::Bar));
    }
    for memory in [Memory::Host, Memory::Bar, Memory::Peer] {
        if n >= 2 {
            v.push(("0 -> 1".into(), vec![(d(0), d(1))], memory));
            v.push(("1 -> 0".into(), vec![(d(1), d(0))], memory));
            let pair = vec![(d(0), d(1)), (d(1), d(0))];
            v.push(("0 <-> 1 at once".into(), pair, memory));
        }
        if n >= 3 {
            let ring = (0..n).map(|i| (d(i), d((i + 1) % n))).collect();
            v.push((format!("ring of {n} at once"), ring, memory));
        }
    }
    v
}

fn run(args: Args) -> anyhow::Result<()> {
    let devices = Devices::open(&args.devices, &gpu_options(None)?)
        .context("the polled link bench needs devices (see --devices, WGPU_BACKEND)")?;
    let words = args.slice_kib * 256;
    let per_lane = ((args.mib as u64) << 20) / args.lanes as u64;
    let ring = Ring {
        lanes: args.lanes,
        slots: args.slots,
        slices: (per_lane / (words as u64 * 4)).max(1) as u32,
        words,
        spins: args.spins,
    };
    for (i, g) in devices.gpus.iter().enumerate() {
        println!("device {i}: {}", g.describe());
    }
    println!(
        "{} lanes x {} slots x {} KiB slices, {:.0} MiB per link per run, {} runs",
        ring.lanes,
        ring.slots,
        args.slice_kib,
        ring.bytes() as f64 / (1 << 20) as f64,
        args.reps
    );
    println!(
        "{:<18} {:<13} {:<8} {:<9} {:<9} {:>8} {:>9} {:>8} {:>8} {:>9}",
        "scenario",
        "memory",
        "load",
        "from",
        "to",
        "GB/s",
        "mismatch",
        "timeout",
        "slices",
        "max wait"
    );
    let bound = Duration::from_secs_f64(args.timeout_s);
    let mut failed = 0;
    // Each device's GEMM for --beside-gemm, made once.
    let kernels = match args.beside_gemm {
        Some((_, dtype)) => devices
            .gpus
            .iter()
            .map(|g| GemmKernel::with(g, dtype, None))
            .collect::<Result<Vec<_>, _>>()?,
        None => Vec::new(),
    };
    let mut gemms: Vec<(TrackedGemm, Vec<ExactRow>)> = match args.beside_gemm {
        Some((shape, _)) => devices
            .gpus
            .iter()
            .zip(&kernels)
            .map(|(g, k)| TrackedGemm::exact(g, k, shape, "the GEMM beside the polled link"))
            .collect::<Result<Vec<_>, _>>()?,
        None => Vec::new(),
    };
    let chosen = scenarios(devices.gpus.len())
        .into_iter()
        .filter(|s| args.only.is_empty() || args.only.iter().any(|o| s.0.contains(o.as_str())))
        .filter(|s| {
            args.memory.is_empty()
                || args
                    .memory
                    .iter()
                    .any(|m| s.2.name().to_lowercase().contains(&m.to_lowercase()))
        });
    let chosen: Vec<_> = chosen.collect();
    for &load in &args.flag_load {
        for (name, links, memory) in &chosen {
            let (name, memory) = (name.as_str(), *memory);
            let head = format!("{name:<18} {:<13} {:<8}", memory.name(), load.name());
            let polled = match Polled::new(&devices.gpus, links, ring, memory, load) {
                Ok(p) => p,
                Err(e) => {
                    println!("{head} skipped: {e}");
                    continue;
                }
            };
            let mut runs: Vec<Vec<Outcome>> = Vec::new();
            for rep in 0..args.reps {
                let outcomes = match polled.run(rep + 1, bound) {
                    Ok(o) => o,
                    Err(e) => {
                        println!("{head} FAILED: {e}");
                        failed += 1;
                        break;
                    }
                };
                for o in &outcomes {
                    let mut v = serde_json::to_value(o)?;
                    v["bench"] = "polled".into();
                    v["scenario"] = name.into();
                    v["load"] = load.name().into();
                    v["rep"] = rep.into();
                    v["gbps"] = o.gbps().into();
                    args.out.line(&v)?;
                }
                runs.push(outcomes);
            }
            for l in 0..links.len().min(runs.first().map_or(0, Vec::len)) {
                let mut of: Vec<&Outcome> = runs.iter().map(|r| &r[l]).collect();
                of.sort_by(|a, b| a.gbps().total_cmp(&b.gbps()));
                let median = of[of.len() / 2];
                let ok = of.iter().all(|o| o.ok(&ring));
                failed += usize::from(!ok);
                println!(
                    "{head} {:<9} {:<9} {:>8.2} {:>9} {:>8} {:>8} {:>9}{}",
                    median.from,
                    median.to,
                    median.gbps(),
                    of.iter().map(|o| o.mismatches).sum::<u64>(),
                    of.iter().map(|o| o.timeouts).sum::<u32>(),
                    of.iter().map(|o| o.slices).min().unwrap_or(0),
                    of.iter().map(|o| o.longest_wait).max().unwrap_or(0),
                    if ok {
                        ""
                    } else {
                        "  FAILED: a word or a flag did not arrive"
                    }
                );
            }
            if let (Some(gemm), false) = (args.beside_gemm, runs.is_empty()) {
                let alone = median_seconds(&runs);
                failed += beside(&polled, &mut gemms, (&head, gemm, alone), &ring, &args)?;
            }
        }
    }
    anyhow::ensure!(
        failed == 0,
        "{failed} link(s) lost or corrupted words (above)"
    );
    Ok(())
}

/// The slowest link's median seconds over `runs` (each run's links at once).
fn median_seconds(runs: &[Vec<Outcome>]) -> f64 {
    let mut s: Vec<f64> = runs
        .iter()
        .map(|r| r.iter().map(|o| o.seconds).fold(0.0, f64::max))
        .collect();
    s.sort_by(f64::total_cmp);
    s[s.len() / 2]
}

/// Runs `polled` `args.reps` times with each device's GEMM after its kernels in one pass, then each
/// GEMM alone (host clock, submission to completion, as the link's runs), and checks the GEMMs'
/// rows; prints the three times. Returns the links that failed.
fn beside(
    polled: &Polled,
    gemms: &mut [(TrackedGemm, Vec<ExactRow>)],
    (head, (shape, dtype), alone): (&str, (Shape, Dtype), f64),
    ring: &Ring,
    args: &Args,
) -> anyhow::Result<usize> {
    let bound = Duration::from_secs_f64(args.timeout_s);
    for (g, _) in gemms.iter_mut() {
        prepare_parts("the GEMM beside the polled link", &mut [g.part()])?;
    }
    let mut runs = Vec::new();
    let mut failed = 0;
    for rep in 0..args.reps {
        let mut dispatch =
            |d: usize, pass: &mut wgpu::ComputePass<'_>| dispatch_parts(pass, &[gemms[d].0.part()]);
        let outcomes = polled.run_beside(1000 + rep, bound, &mut dispatch)?;
        failed += outcomes.iter().filter(|o| !o.ok(ring)).count();
        for o in &outcomes {
            let mut v = serde_json::to_value(o)?;
            v["bench"] = "polled beside gemm".into();
            v["gemm"] = format!("{shape}:{}", dtype.name()).into();
            v["rep"] = rep.into();
            args.out.line(&v)?;
        }
        runs.push(outcomes);
    }
    // What the last run beside the link wrote.
    for (d, (g, expected)) in gemms.iter().enumerate() {
        g.check_exact(
            expected,
            &format!("the GEMM beside the polled link on device {d}"),
        )?;
    }
    // Each device's GEMM alone after the runs beside it (its clocks then as warm as they were),
    // one device after the other: the slowest device's median.
    let mut gemm = 0f64;
    for (g, _) in gemms.iter_mut() {
        let mut t = Vec::new();
        for _ in 0..=args.reps {
            let t0 = std::time::Instant::now();
            g.run(StoreMode::Store, false)?;
            t.push(t0.elapsed().as_secs_f64());
        }
        t.remove(0);
        t.sort_by(f64::total_cmp);
        gemm = gemm.max(t[t.len() / 2]);
    }
    let both = median_seconds(&runs);
    let ms = |s: f64| s * 1e3;
    println!(
        "{head} beside a {shape} {} GEMM per device: GEMM alone {:.3} ms, link alone {:.3} ms, both in one pass {:.3} ms (side by side would be {:.3}, one after the other {:.3}); {} of {} links whole, every GEMM row exact",
        dtype.name(),
        ms(gemm),
        ms(alone),
        ms(both),
        ms(gemm.max(alone)),
        ms(gemm + alone),
        runs.iter().flatten().count() - failed,
        runs.iter().flatten().count(),
    );
    Ok(failed)
}
