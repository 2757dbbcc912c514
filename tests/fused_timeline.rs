//! Fused mode's timeline at chunk grain (its progress log, kept by the first run only): a GEMM bar per
//! produced chunk and rank and a bar per transfer, each transfer after its chunk's completion, their
//! span within 5% of the pass-grain timestamps', the results still right with the log and after it;
//! without a timeline asked for, no log at all.

mod common;

use t3_wgpu::config::fused::{FusedOptions, SpareDispatch, Trigger};
use t3_wgpu::experiment::{check, Verify};
use t3_wgpu::modes::{Config, Fused, Kernels, Mode, System};
use t3_wgpu::plan::Kind;
use t3_wgpu::ranks::Inputs;
use t3_wgpu::schedule::Collective;
use t3_wgpu::shapes::{Dtype, Shape};
use t3_wgpu::timeline::{EventKind, Lane};

fn config(
    (m, n, k): (usize, usize, usize),
    ranks: usize,
    chunks: usize,
    collective: Collective,
    timeline: bool,
    spares: bool,
) -> Config {
    Config {
        chunks,
        collective,
        // The spares trigger needs their own dispatch (the watched GEMM has none in its own).
        fused: FusedOptions {
            timeline,
            trigger: spares.then_some(Trigger::Spares),
            spare_dispatch: spares.then_some(SpareDispatch::Own),
            ..Default::default()
        },
        ..Config::new(Shape::new(m, n, k).unwrap(), ranks)
    }
}

#[test]
fn fused_mode_tells_time_by_its_progress_at_chunk_grain() {
    let Some(gpu) = common::gpu() else { return };
    let kernels = Kernels::new(gpu).unwrap();
    // Edge shapes: one row per rank, sizes that are no multiple of a tile, chunks that do not divide.
    let cases = [
        ((2, 1, 1), 2, 1),
        ((50, 40, 30), 4, 2),
        ((130, 70, 20), 3, 3),
    ];
    let mut seen = 0;
    // The epilogue as the trigger (its clock ticks per tile), then the spares (their watchers tick
    // it as they see the counters grow).
    for ((shape, ranks, chunks), spares) in cases.into_iter().flat_map(|c| [(c, false), (c, true)])
    {
        for collective in Collective::ALL {
            let what = format!(
                "{shape:?} x {ranks} ranks, {chunks} chunks, {collective}, spares {spares}"
            );
            let mut sys = System::new(
                gpu,
                &kernels,
                config(shape, ranks, chunks, collective, true, spares),
            )
            .unwrap();
            if let Some(why) = Fused.skip_reason(&sys) {
                eprintln!("{what}: fused skipped ({why})");
                continue;
            }
            let inputs = Inputs::random(
                sys.config.shape,
                Dtype::F32,
                collective,
                &sys.chunking,
                common::seed("fused timeline"),
            );
            sys.upload(&inputs);
            sys.poison();
            // The first run keeps the log and turns it off; the second, as a timed run, runs without
            // it and is drawn from the first's progress.
            Fused.run(&mut sys).unwrap();
            sys.poison();
            let run = Fused.run(&mut sys).unwrap();
            // The log changes nothing the mode computes.
            let (err, trackers) = check(&sys, &inputs, Verify::Full).unwrap();
            assert!(
                err <= 1e-4 && trackers,
                "{what}: error {err}, trackers {trackers}"
            );
            let t = &run.timeline;
            assert!(
                sys.parts[0]
                    .lowered
                    .fused
                    .as_ref()
                    .is_ok_and(|f| f.log.is_some()),
                "{what}: a timeline was asked for, and no log"
            );
            seen += 1;
            assert!(
                t.grain.starts_with("chunk, by a progress clock"),
                "{what}: {}",
                t.grain
            );
            // One GEMM bar per chunk each rank produces, back to back from the pass's start.
            let produced: Vec<(usize, usize)> = sys
                .plan
                .ops
                .iter()
                .filter(|o| matches!(o.kind, Kind::Gemm))
                .map(|o| (o.dst.rank, o.dst.chunk))
                .collect();
            let gemm: Vec<_> = t
                .events
                .iter()
                .filter(|e| e.kind == EventKind::Gemm)
                .collect();
            assert_eq!(gemm.len(), produced.len(), "{what}: GEMM bars");
            for &(p, x) in &produced {
                assert!(
                    gemm.iter()
                        .any(|e| e.lane == Lane::Gemm { rank: p } && e.chunk == Some(x)),
                    "{what}: no bar for rank {p}'s chunk {x}"
                );
            }
            // One bar per transfer, each after its source chunk's completion where its source
            // produced it, on its destination's steps lane.
            let steps = sys
                .plan
                .ops
                .iter()
                .filter(|o| !matches!(o.kind, Kind::Gemm));
            let moved: Vec<_> = t
                .events
                .iter()
                .filter(|e| e.kind != EventKind::Gemm)
                .collect();
            assert_eq!(moved.len(), steps.count(), "{what}: transfer bars");
            for e in &moved {
                assert!(e.start_us <= e.end_us, "{what}: {} runs backwards", e.name);
                let src: usize = e.name[1..e.name.find("->").unwrap()].parse().unwrap();
                if let Some(done) = gemm
                    .iter()
                    .find(|g| g.lane == Lane::Gemm { rank: src } && g.chunk == e.chunk)
                {
                    assert!(
                        done.end_us <= e.start_us,
                        "{what}: {} starts at {} before its chunk completes at {}",
                        e.name,
                        e.start_us,
                        done.end_us
                    );
                }
            }
            // The chunk-grain span against the pass-grain timestamps' (the run's total).
            let lo = t.events.iter().map(|e| e.start_us).fold(f64::MAX, f64::min);
            let span = t.span_us() - lo;
            assert!(
                (span / run.total_us - 1.0).abs() <= 0.05,
                "{what}: chunk-grain span {span} µs against the pass's {} µs",
                run.total_us
            );
        }
    }
    eprintln!("{seen} configurations at chunk grain");
}

#[test]
fn without_a_timeline_fused_mode_keeps_no_log() {
    let Some(gpu) = common::gpu() else { return };
    let kernels = Kernels::new(gpu).unwrap();
    let c = |timeline| {
        config(
            (50, 40, 30),
            4,
            2,
            Collective::ReduceScatter,
            timeline,
            false,
        )
    };
    let off = System::new(gpu, &kernels, c(false)).unwrap();
    if Fused.skip_reason(&off).is_some() {
        return;
    }
    assert!(off.parts[0].lowered.fused.as_ref().unwrap().log.is_none());
    // Not one word more of the counters: the header's `log_at` stays 0, so the kernel writes nothing.
    let on = System::new(gpu, &kernels, c(true)).unwrap();
    let bytes = |s: &System| s.parts[0].lowered.pool.iter().map(|p| p.bytes).sum::<u64>();
    if let Some(f) = &on.parts[0].lowered.fused.as_ref().unwrap().log {
        assert_eq!(bytes(&on) - bytes(&off), 4 * f.log.words() as u64);
    }
}
