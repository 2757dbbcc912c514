//! Measures one collective step between two device buffers: copy (Put::Store), reduce (Put::Add) and
//! update (f32 atomic add, or its CAS fallback), unthrottled and under link workgroup budgets, in GB/s
//! of bytes read + written.
//!
//! Flags after `--` (`cargo bench --bench steps -- --help`): `--mib`, `--link-wg`, `--seed`, the
//! timing's `--reps`, `--warmup-s`, `--settle-s`, `--debug`, and `--json FILE`.

mod common;

use common::*;
use std::process::ExitCode;
use t3_wgpu::stats::median;

use anyhow::{bail, Context};
use t3_wgpu::executor::{step_target, Executor, Handed, KernelSet};
use t3_wgpu::gpu::Gpu;
use t3_wgpu::lower::{lower_step, StepEnd, StepSpec};
use t3_wgpu::reference::Rng;
use t3_wgpu::shaders::{AdapterPut, Put};
use t3_wgpu::steps::{Link, StepKernel};

/// Elements of the destination compared with the host's expectation per size and kind.
const SAMPLES: usize = 1000;

/// One step kind: its name in reports, the `put` it writes through, and how many times per element it
/// touches memory (copy reads src and writes dst; reduce and update also read dst).
struct StepKind {
    name: &'static str,
    put: Put,
    passes: u64,
}

/// One collective step between two device buffers, timed at each link budget.
#[derive(clap::Parser, Debug)]
#[command(name = "bench-steps")]
struct Args {
    /// Bytes per step, MiB (a comma list; each at least 1).
    #[arg(long, value_delimiter = ',', default_value = "16", value_parser = clap::value_parser!(u64).range(1..))]
    mib: Vec<u64>,
    /// Link budgets to time besides unthrottled: workgroups per step (a comma list).
    #[arg(long, value_delimiter = ',', default_value = "4,16,64,256", value_parser = clap::value_parser!(u32).range(1..))]
    link_wg: Vec<u32>,
    /// Seed of the random source and destination.
    #[arg(long, default_value_t = 0x7431_5e90)]
    seed: u64,
    #[command(flatten)]
    timing: Timing,
    #[command(flatten)]
    out: Out,
}

fn main() -> ExitCode {
    exit_code(run(clap::Parser::parse()))
}

fn run(args: Args) -> anyhow::Result<()> {
    let (mibs, link_wg, reps, seed) = (args.mib, args.link_wg, args.timing.reps, args.seed);
    let gpu = Gpu::new(&gpu_options(None)?)
        .context("the steps bench needs a GPU adapter (see WGPU_BACKEND, WGPU_ADAPTER_NAME)")?;
    let kernel = StepKernel::new(&gpu)?;
    let mut clock = Clock::new(&gpu, &args.timing)?;
    let kinds = [
        StepKind {
            name: "copy",
            put: Put::Store,
            passes: 2,
        },
        StepKind {
            name: "reduce",
            put: Put::Add,
            passes: 3,
        },
        StepKind {
            name: "update",
            put: Put::update(&gpu),
            passes: 3,
        },
    ];
    let links: Vec<Link> = std::iter::once(Link::Unthrottled)
        .chain(link_wg.iter().map(|&w| Link::Workgroups(w)))
        .collect();
    println!(
        "adapter: {}; timing: {}; {reps} reps after a warm-up until settled, medians; update = {:?}",
        gpu.describe(),
        clock.describe(),
        Put::update(&gpu)
    );
    for mib in mibs {
        let bytes = mib << 20;
        let elems = (bytes / 4) as usize;
        let len4 = u32::try_from(elems / 4)
            .map_err(|_| anyhow::anyhow!("--mib {mib}: over the kernel's u32 indexing"))?;
        let usage = wgpu::BufferUsages::STORAGE
            | wgpu::BufferUsages::COPY_DST
            | wgpu::BufferUsages::COPY_SRC;
        let src = gpu.buffer("step bench src", bytes, usage)?;
        let dst = gpu.buffer("step bench dst", bytes, usage)?;
        // Unused (bump = 0 skips the tracker), but the step layout binds it.
        let counters = gpu.buffer("step bench counters", 16, usage)?;
        let mut rng = Rng::new(seed ^ mib);
        let src_host = rng.fill(elems);
        let dst_host = rng.fill(elems);
        gpu.queue
            .write_buffer(&src, 0, bytemuck::cast_slice(&src_host));

        // A binding per link budget, all bound before anything is timed, over the bench's own
        // buffers (it uploads to them and samples them).
        let puts: Vec<Put> = kinds.iter().map(|k| k.put).collect();
        let spec = StepSpec {
            label: "bench step",
            dst: StepEnd::Pool,
            src: StepEnd::Pool,
            bytes,
            puts: &puts,
            links: &links,
        };
        let steps = lower_step(&spec, step_target(&gpu, 0));
        let handed = Handed {
            pool: vec![
                (steps.src, &src),
                (steps.dst, &dst),
                (steps.counters, &counters),
            ],
            ..Default::default()
        };
        let mut exec = Executor::pooled(&gpu, KernelSet::Step(&kernel), &steps.lowered, handed)?;
        gpu.check("setting up the step bench")?;
        let mut encode_step = |enc: &mut wgpu::CommandEncoder,
                               ts: Option<wgpu::ComputePassTimestampWrites<'_>>,
                               put: usize,
                               link: usize| {
            let rec = steps.recording(put, link);
            exec.record(enc, &steps.lowered, rec.label, &rec.commands, ts)
        };

        // Verification: each kind once, unthrottled, from a fresh random dst (never zeros).
        let samples: Vec<usize> = [0, elems - 1]
            .into_iter()
            .chain((2..SAMPLES).map(|_| rng.below(elems)))
            .collect();
        for (k, kind) in kinds.iter().enumerate() {
            gpu.queue
                .write_buffer(&dst, 0, bytemuck::cast_slice(&dst_host));
            let mut enc = gpu.device.create_command_encoder(&Default::default());
            encode_step(&mut enc, None, k, 0)?;
            let idx = gpu.submit("step bench check", vec![enc.finish()])?;
            gpu.wait(
                Some(idx),
                "step bench check",
                gpu.timeout_for(0.0, bytes as f64),
            )?;
            let got = read_samples(&gpu, &dst, &samples)?;
            for (&i, &g) in samples.iter().zip(&got) {
                let ok = if kind.put == Put::Store {
                    g.to_bits() == src_host[i].to_bits()
                } else {
                    // One f32 add, correctly rounded on every conforming device: allow one ulp anyway,
                    // since atomic adds are not held to that rule everywhere.
                    let want = dst_host[i] + src_host[i];
                    (g - want).abs() <= f32::EPSILON * want.abs()
                };
                if !ok {
                    bail!(
                        "{} of {mib} MiB: dst[{i}] = {g}, expected {} (src {}, dst before {})",
                        kind.name,
                        if kind.put == Put::Store {
                            src_host[i]
                        } else {
                            dst_host[i] + src_host[i]
                        },
                        src_host[i],
                        dst_host[i]
                    );
                }
            }
        }
        println!(
            "verified {mib} MiB: copy, reduce and update match the host at {} sampled elements",
            samples.len()
        );

        for (k, kind) in kinds.iter().enumerate() {
            let moved = kind.passes * bytes;
            let bound = gpu.timeout_for(0.0, moved as f64);
            for (l, link) in links.iter().enumerate() {
                let n_wg = link.workgroups(len4);
                let what = format!("{} of {mib} MiB, {}", kind.name, link.describe());
                let ms = median(&clock.times_ms(&gpu, &what, reps, bound, |enc, ts| {
                    encode_step(enc, ts, k, l)
                })?);
                let warm = clock.last_warmup();
                let gbps = moved as f64 / (ms * 1e-3) / 1e9;
                println!(
                    "step {:<6} {mib:>5} MiB  link {:<16} ({n_wg:>7} wg): {ms:>9.3} ms {gbps:>9.2} GB/s  {}",
                    kind.name,
                    link.describe(),
                    warmup_text(&warm)
                );
                args.out.line(&serde_json::json!({
                    "bench": "step",
                    "kind": kind.name,
                    "mib": mib,
                    "link_wg": match link {
                        Link::Unthrottled => None,
                        Link::Workgroups(w) => Some(*w),
                    },
                    "workgroups": n_wg,
                    "ms": ms,
                    "gbps": gbps,
                    "warmup": warm,
                    "clock": clock.kind(),
                    "adapter": gpu.info.name,
                }))?;
            }
        }
    }
    Ok(())
}

/// Reads `dst[i]` for each sampled index with one small copy per element into one staging buffer: one
/// submission, and no full readback of a buffer that may be a GiB.
fn read_samples(gpu: &Gpu, dst: &wgpu::Buffer, idx: &[usize]) -> anyhow::Result<Vec<f32>> {
    let spans: Vec<_> = idx.iter().map(|&i| (dst, (i * 4) as u64, 4)).collect();
    let enc = gpu.device.create_command_encoder(&Default::default());
    let bytes = gpu.read_spans("step samples", enc, &spans)?;
    Ok(bytemuck::cast_slice(&bytes).to_vec())
}
