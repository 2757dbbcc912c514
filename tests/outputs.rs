//! 2-byte outputs (f16, bf16): every collective under sequential, host and encoded mode, on one device
//! and on 2 to 4 devices over zero-copy and staged links, at odd shapes, 1x1x1 and ranks 1 to 4,
//! equals the f64 reference within its derived rounding bound, element by element, with every tracker
//! at its threshold; the device rounds to nearest-even bit for bit; fused mode says it moves f32 only.

mod common;

use std::sync::OnceLock;

use t3_wgpu::config::host::{Handoff, HostOptions, SendTrigger};
use t3_wgpu::devices::{DeviceSpec, Devices};
use t3_wgpu::experiment::{verdict, Verify};
use t3_wgpu::gemm::FusedPut;
use t3_wgpu::gpu::Gpu;
use t3_wgpu::hostlink::Path;
use t3_wgpu::modes::{self, Config, Kernels, Mode, System};
use t3_wgpu::plan::ReduceVia;
use t3_wgpu::ranks::Inputs;
use t3_wgpu::schedule::Collective;
use t3_wgpu::shapes::{Dtype, Shape};
use t3_wgpu::steps::Link;

const HALVES: [Dtype; 2] = [Dtype::F16, Dtype::Bf16];

fn config(
    shape: Shape,
    ranks: usize,
    chunks: usize,
    collective: Collective,
    via: ReduceVia,
    out: Dtype,
) -> Config {
    Config {
        chunks,
        collective,
        via,
        link: Link::Workgroups(3),
        dtype: out,
        out_dtype: out,
        arbitrate: chunks.is_multiple_of(2).then_some(2),
        ..Config::new(shape, ranks)
    }
}

/// The kernels of `out` operands and outputs on `gpu` (None: skipped where the adapter has no f16).
fn kernels(gpu: &Gpu, out: Dtype) -> Option<Kernels> {
    match Kernels::for_outputs(gpu, out, out, None, FusedPut::Auto) {
        Ok(k) => Some(k),
        Err(e @ t3_wgpu::Error::MissingFeature { .. }) => {
            eprintln!("SKIPPED {}: {e}", out.name());
            None
        }
        Err(e) => panic!("{e}"),
    }
}

/// The reduces a collective can take: update always, land and forward where they apply.
fn vias(c: Collective) -> Vec<ReduceVia> {
    match c {
        Collective::AllGather | Collective::DirectAllReduce => vec![ReduceVia::Update],
        Collective::DirectReduceScatter => vec![ReduceVia::Update, ReduceVia::Land],
        _ => vec![ReduceVia::Update, ReduceVia::Land, ReduceVia::Forward],
    }
}

/// Runs every mode of `modes` on `sys` from poisoned outputs and checks each against the reference
/// within its rounding bound, element by element.
fn check_modes(sys: &mut System, what: &str, modes: &[Box<dyn Mode>]) {
    let c = sys.config.clone();
    let seed = common::seed(what);
    let inputs = Inputs::random(c.shape, c.dtype, c.collective, &sys.chunking, seed);
    sys.upload(&inputs);
    for mode in modes {
        if let Some(reason) = mode.skip_reason(sys) {
            // Fused mode adds f32 words: it says so rather than moving other outputs silently
            // (where it would run at all: reduces by update).
            if mode.name() == "fused" && c.via == ReduceVia::Update && c.collective.fusable() {
                assert!(reason.contains("f32 outputs only"), "{what}: {reason}");
            }
            eprintln!("{what}: {} skipped: {reason}", mode.name());
            continue;
        }
        sys.poison();
        mode.run(sys)
            .unwrap_or_else(|e| panic!("{what} {}: {e}", mode.name()));
        let v = verdict(sys, &inputs, Verify::Full).unwrap();
        let m = mode.name();
        assert!(v.trackers_ok, "{what} {m}: a tracker missed its threshold");
        assert_eq!(
            v.excess, 0,
            "{what} {m}: elements past the rounding bound ({v:?})"
        );
        assert!(
            v.max_rel_error <= v.rounding.tolerance(),
            "{what} {m}: rel error {} over {} ({v:?})",
            v.max_rel_error,
            v.rounding.tolerance()
        );
    }
}

#[test]
fn every_collective_every_mode_on_one_device() {
    let Some(gpu) = common::gpu() else { return };
    let modes = modes::all();
    for out in HALVES {
        let Some(kernels) = kernels(gpu, out) else {
            continue;
        };
        // Odd M, N and K (rows of an odd length share no word: `Padding::ldc`), chunks that do not
        // divide the rows, and 1x1x1 on one rank.
        let cases = [
            (Shape::new(1, 1, 1).unwrap(), 1, 1),
            (Shape::new(2, 1, 1).unwrap(), 2, 1),
            (Shape::new(67, 37, 19).unwrap(), 2, 2),
            (Shape::new(45, 131, 7).unwrap(), 3, 1),
            (Shape::new(61, 9, 33).unwrap(), 4, 3),
        ];
        for (shape, ranks, chunks) in cases {
            for collective in Collective::ALL {
                for via in vias(collective) {
                    let cfg = config(shape, ranks, chunks, collective, via, out);
                    let what = format!(
                        "{} outputs {collective} {via:?} ranks {ranks} chunks {chunks} {shape:?}",
                        out.name()
                    );
                    let mut sys =
                        System::new(gpu, &kernels, cfg).unwrap_or_else(|e| panic!("{what}: {e}"));
                    check_modes(&mut sys, &what, &modes);
                }
            }
        }
    }
}

/// Four devices on the test adapter with the kernels of each 2-byte output type (HALVES' order),
/// opened once.
fn devices() -> Option<&'static (Devices, [Vec<Kernels>; 2])> {
    static SET: OnceLock<Option<(Devices, [Vec<Kernels>; 2])>> = OnceLock::new();
    SET.get_or_init(|| {
        let d = Devices::open(&DeviceSpec::Count(4), &common::gpu_options()).ok()?;
        let of = |out| {
            d.gpus
                .iter()
                .map(|g| kernels(g, out))
                .collect::<Option<Vec<_>>>()
        };
        let k = [of(Dtype::F16)?, of(Dtype::Bf16)?];
        Some((d, k))
    })
    .as_ref()
}

#[test]
fn every_collective_across_two_to_four_devices() {
    let Some((devs, kernels)) = devices() else {
        eprintln!("SKIPPED: no devices with f16");
        return;
    };
    let modes: Vec<Box<dyn Mode>> = modes::all()
        .into_iter()
        .filter(|m| matches!(m.name(), "sequential" | "host"))
        .collect();
    for (i, out) in HALVES.into_iter().enumerate() {
        for (n, ranks, path) in [
            (2, 2, Path::ZeroCopy),
            (3, 3, Path::Staged),
            (4, 4, Path::ZeroCopy),
            (2, 4, Path::Mapped),
        ] {
            for collective in Collective::ALL {
                let v = vias(collective);
                let via = v[(n + ranks + i) % v.len()];
                let shape = Shape::new(8 * ranks + 3, 23, 13).unwrap();
                let cfg = config(shape, ranks, 2, collective, via, out);
                let what = format!(
                    "{} outputs {collective} {via:?} ranks {ranks} on {n} devices ({path:?})",
                    out.name()
                );
                let mut sys = System::on_devices(&devs.gpus[..n], &kernels[i][..n], cfg, path)
                    .unwrap_or_else(|e| panic!("{what}: {e}"));
                check_modes(&mut sys, &what, &modes);
            }
        }
    }
}

#[test]
fn half_outputs_sent_as_the_device_triggers() {
    // `--host-loop trigger=device` with 2-byte outputs: the send beside the GEMM copies the packed
    // chunk once its counter shows it made, and the receiver lands and adds the packed halves
    // (fence and flag handoff).
    let Some((devs, kernels)) = devices() else {
        eprintln!("SKIPPED: no devices with f16");
        return;
    };
    let host: Vec<Box<dyn Mode>> = modes::all()
        .into_iter()
        .filter(|m| m.name() == "host")
        .collect();
    for (i, out) in HALVES.into_iter().enumerate() {
        for (n, ranks) in [(2, 2), (3, 3)] {
            for (k, collective) in Collective::ALL.into_iter().enumerate() {
                let handoff = [Handoff::Fence, Handoff::Flag][(i + k) % 2];
                let shape = Shape::new(8 * ranks + 3, 23, 13).unwrap();
                let cfg = Config {
                    host: HostOptions {
                        trigger: Some(SendTrigger::Device),
                        handoff: Some(handoff),
                        ..Default::default()
                    },
                    ..config(shape, ranks, 2, collective, ReduceVia::Update, out)
                };
                let what = format!(
                    "{} outputs {collective} ranks {ranks} on {n} devices the device triggers ({handoff:?})",
                    out.name()
                );
                let mut sys =
                    System::on_devices(&devs.gpus[..n], &kernels[i][..n], cfg, Path::ZeroCopy)
                        .unwrap_or_else(|e| panic!("{what}: {e}"));
                check_modes(&mut sys, &what, &host);
            }
        }
    }
}

/// One product per output (K = 1) is exact in f32 for f16 and bf16 operands, so the device's stored
/// output must be that product rounded to nearest-even, bit for bit: the half crate's conversion.
/// Inputs span normal values, halfway cases, the f16 subnormal range and its overflow.
#[test]
fn the_device_rounds_to_nearest_even() {
    let Some(gpu) = common::gpu() else { return };
    for out in HALVES {
        let Some(kernels) = kernels(gpu, out) else {
            continue;
        };
        let (m, n) = (64, 96);
        let cfg = config(
            Shape::new(m, n, 1).unwrap(),
            2,
            1,
            Collective::AllGather,
            ReduceVia::Update,
            out,
        );
        let mut sys = System::new(gpu, &kernels, cfg).unwrap();
        let seed = common::seed(&format!("{} rounding", out.name()));
        let mut rng = t3_wgpu::reference::Rng::new(seed);
        // A: normal magnitudes from 2^-13 to 2^10; B: 1 + j 2^-10, a fifth of them over 64 (products
        // in f16's subnormal range) and a few large (past f16's range), so products carry more bits
        // than the output keeps, and some land exactly halfway.
        let a: Vec<f32> = (0..m)
            .map(|i| out.round((0.5 + rng.next_f32().abs() / 2.0) * 2f32.powi(i as i32 % 24 - 13)))
            .collect();
        let b: Vec<f32> = (0..n)
            .map(|j| {
                let v = 1.0 + j as f32 / 1024.0;
                out.round(match j % 17 {
                    16 => 300.0 * v,
                    r if r % 5 == 0 => v / 64.0,
                    _ => v,
                })
            })
            .collect();
        let inputs = Inputs::new(
            (0..2)
                .map(|p| a[p * m / 2..(p + 1) * m / 2].to_vec())
                .collect(),
            vec![b.clone(); 2],
            seed,
        );
        sys.upload(&inputs);
        for mode in modes::all().iter().filter(|m| m.name() == "sequential") {
            sys.poison();
            mode.run(&mut sys).unwrap();
            for p in 0..2 {
                let got = sys.read_rows(p, 0, 0..m / 2).unwrap();
                let mut rest = sys.read_rows(p, 1, 0..m / 2).unwrap();
                let mut all = got;
                all.append(&mut rest);
                for (i, row) in all.chunks(n).enumerate() {
                    for (j, &g) in row.iter().enumerate() {
                        let exact = a[i] * b[j];
                        let want = match out {
                            Dtype::F16 => half::f16::from_f32(exact).to_f32(),
                            _ => half::bf16::from_f32(exact).to_f32(),
                        };
                        assert!(
                            g.to_bits() == want.to_bits() || (g.is_nan() && want.is_nan()),
                            "{} rank {p} ({i}, {j}): {exact:e} stored as {g:e}, nearest-even {want:e}",
                            out.name()
                        );
                    }
                }
            }
        }
    }
}

/// The element check catches a wrong rounding that a row's norm would not: a ring's reduces simulated
/// on the CPU (each rank's partial rounded when stored, each reduce added in f32 and rounded once)
/// pass with round-to-nearest-even, and fail with truncation (one rank, where the last rounding is
/// the only one: with reduces the bound's worst case of every partial at the element's scale leaves
/// room for truncation's smaller average error, and `the_device_rounds_to_nearest_even` pins the
/// rounding bit for bit) or with a step that reads the wrong half of each word.
#[test]
fn a_planted_wrong_rounding_fails_the_check() {
    for out in HALVES {
        for ranks in [1, 2, 4] {
            planted(out, ranks);
        }
    }
}

/// A value below the output type's smallest normal, rounded to nearest, passes both checks though
/// its error relative to a scale as small is past the relative bound (the spacing there is fixed:
/// gradual underflow); two spacings off, it fails the element check.
#[test]
fn a_value_too_small_for_the_output_type_passes_when_rounded_to_nearest() {
    use t3_wgpu::reference::{rel_to_scale, rel_to_scale_past, Rounding};
    let rounding = Rounding {
        out: Dtype::F16,
        reduces: 0,
    };
    // Below f16's smallest normal (2^-14), 0.45 of a spacing (2^-24) from the nearest value.
    let want = [200.45 * f64::powi(2.0, -24)];
    let got = [half::f16::from_f64(want[0]).to_f32()];
    assert!(
        rel_to_scale(&got, &want, &want) > rounding.tolerance(),
        "{got:?}"
    );
    assert!(rel_to_scale_past(&got, &want, &want, rounding.floor()) <= rounding.tolerance());
    assert_eq!(rounding.excess(&got, &want, &want), 0);
    let off = [got[0] + 2.0 * f32::powi(2.0, -24)];
    assert_eq!(rounding.excess(&off, &want, &want), 1);
    assert!(rel_to_scale_past(&off, &want, &want, rounding.floor()) > rounding.tolerance());
}

fn planted(out: Dtype, ranks: usize) {
    use t3_wgpu::reference::{rel_to_scale, Rng, Rounding};
    {
        let nearest = |v: f32| out.round(v);
        let truncated = |v: f32| match out {
            Dtype::F16 => {
                let h = half::f16::from_f32(v);
                // Toward zero: one ulp less in magnitude where nearest rounded away.
                if (h.to_f32() as f64).abs() > (v as f64).abs() {
                    half::f16::from_bits(h.to_bits() - 1).to_f32()
                } else {
                    h.to_f32()
                }
            }
            _ => f32::from_bits(v.to_bits() & 0xffff_0000),
        };
        let (k, elems) = (8, 4096);
        let seed = common::seed(&format!("{} planted rounding", out.name()));
        let mut rng = Rng::new(seed);
        let (mut want, mut scale) = (vec![0f64; elems], vec![0f64; elems]);
        let mut partials = vec![vec![0f64; elems]; ranks];
        for e in 0..elems {
            for part in partials.iter_mut() {
                for _ in 0..k {
                    let p = out.round(rng.next_f32()) as f64 * out.round(rng.next_f32()) as f64;
                    part[e] += p;
                    want[e] += p;
                    scale[e] += p.abs();
                }
            }
        }
        let ring = |round: &dyn Fn(f32) -> f32| -> Vec<f32> {
            (0..elems)
                .map(|e| {
                    let mut acc = round(partials[0][e] as f32);
                    for part in &partials[1..] {
                        acc = round(acc + round(part[e] as f32));
                    }
                    acc
                })
                .collect()
        };
        let rounding = Rounding {
            out,
            reduces: ranks - 1,
        };
        let good = ring(&nearest);
        assert_eq!(rounding.excess(&good, &want, &scale), 0, "{}", out.name());
        assert!(rel_to_scale(&good, &want, &scale) <= rounding.tolerance());
        let bad = ring(&truncated);
        assert!(
            ranks > 1 || rounding.excess(&bad, &want, &scale) > 0,
            "{} ranks {ranks}: truncation passed the element check",
            out.name()
        );
        // Each pair's halves swapped: a step reading the wrong half of every word.
        let swapped: Vec<f32> = good
            .chunks(2)
            .flat_map(|p| p.iter().rev())
            .copied()
            .collect();
        assert!(
            rounding.excess(&swapped, &want, &scale) > 0,
            "{}",
            out.name()
        );
    }
}

/// `t3 run`'s JSON names each mode's output type and its derived bound: bf16 operands move f32
/// outputs by default, in every mode, and `--out-dtype bf16` moves bf16 (fused mode skipped, saying
/// why).
#[test]
fn the_json_names_each_modes_outputs() {
    if common::gpu().is_none() {
        return;
    }
    let dir = common::cli::tmp("outputs", "json");
    // (--out-dtype, --devices, the outputs' type, whether fused mode runs): f32 by default on one
    // device, the operands' type by default across devices.
    for (extra, devices, want, fused_runs) in [
        (None, None, "f32", true),
        (Some("bf16"), None, "bf16", false),
        (None, Some("2"), "bf16", false),
        (Some("f32"), Some("2"), "f32", false),
    ] {
        let modes = if devices.is_some() {
            "sequential,host"
        } else {
            "sequential,fused"
        };
        let json = dir.join("r.json");
        let mut args: Vec<&str> =
            "run --shape 9x7x5 --ranks 2 --dtype bf16 --reps 1 --warmup 0 --warmup-s 0"
                .split(' ')
                .collect();
        args.extend(["--mode", modes, "--json", json.to_str().unwrap()]);
        if extra.is_some() {
            args.push("--verbose");
        }
        if let Some(o) = extra {
            args.extend(["--out-dtype", o]);
        }
        if let Some(d) = devices {
            args.extend(["--devices", d]);
        }
        let o = common::cli::t3_within(&args, &[], &dir, 300);
        if devices.is_none() && !fused_runs {
            // Fused, the only mode named besides sequential, skipped: the report is written and
            // the run fails saying why.
            let e = common::cli::stderr(&o);
            assert_eq!(o.status.code(), Some(1), "{args:?}: {e}");
            assert!(e.contains("every mode named was skipped (fused:"), "{e}");
        } else {
            assert!(o.status.success(), "{args:?}: {}", common::cli::stderr(&o));
        }
        let r: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        let text = String::from_utf8_lossy(&o.stdout);
        assert_eq!(r["config"]["out_dtype"], want, "{args:?}");
        // Across devices the report says what each link carried in the collective alone: the
        // reduce-scatter's shard the peer owns (rows 4..9 from rank 0, 0..4 from rank 1), rows as
        // stored (2-byte rows padded to whole words), at that many bytes over T_comm.
        let links = r["links"].as_array().map_or(&[][..], |v| v);
        if devices.is_some() {
            let (ldc, elem) = if want == "f32" { (7, 4) } else { (8, 2) };
            let t_comm = r["t_comm_ms"].as_f64().unwrap();
            let seen: Vec<(u64, u64, u64)> = links
                .iter()
                .map(|l| {
                    let bytes = l["bytes"].as_u64().unwrap();
                    let gbps = l["gbps"].as_f64().unwrap();
                    let want_gbps = bytes as f64 / (t_comm * 1e-3) / 1e9;
                    assert!((gbps / want_gbps - 1.0).abs() < 1e-9, "{args:?}: {l}");
                    (
                        l["from"].as_u64().unwrap(),
                        l["to"].as_u64().unwrap(),
                        bytes,
                    )
                })
                .collect();
            assert_eq!(
                seen,
                [(0, 1, 5 * ldc * elem), (1, 0, 4 * ldc * elem)],
                "{args:?}"
            );
            // The text says it too: each link with --verbose, the range of their rates without.
            let line = if extra.is_some() {
                "links      the collective alone (sequential's, over T_comm): 0->1 "
            } else {
                "links; the collective alone "
            };
            assert!(text.contains(line), "{args:?}: {text}");
            let rate = if extra.is_some() {
                " GB/s, 1->0 "
            } else {
                " GB/s a link\n"
            };
            assert!(text.contains(rate), "{args:?}: {text}");
        } else {
            assert!(links.is_empty(), "{args:?}: one device, no link");
        }
        for m in r["results"].as_array().unwrap() {
            assert_eq!(m["output_dtype"], want, "{args:?}: {m}");
            let bound = m["tolerance"].as_f64().unwrap();
            assert!(bound > 0.0 && bound < 0.05, "{args:?}: {m}");
            if m["mode"] == "fused" {
                assert_eq!(m["skipped"].is_null(), fused_runs, "{args:?}: {m}");
            }
        }
    }
}
