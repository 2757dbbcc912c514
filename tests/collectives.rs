//! Every collective under every mode the adapter supports equals the f64 reference, and every tracker
//! counter ends at its threshold: ranks 1..8, chunk counts that do and do not divide the rows, update
//! and land-then-reduce.

mod common;

use t3_wgpu::experiment::{check, Verify};
use t3_wgpu::modes::{self, Config, Kernels, System};
use t3_wgpu::plan::ReduceVia;
use t3_wgpu::ranks::Inputs;
use t3_wgpu::schedule::Collective;
use t3_wgpu::shapes::Shape;
use t3_wgpu::steps::Link;

fn run_all(ranks: usize, chunks: usize, m: usize, via: ReduceVia, link: Link, mode_names: &[&str]) {
    let Some(gpu) = common::gpu() else { return };
    let kernels = Kernels::new(gpu).unwrap();
    for collective in Collective::ALL {
        let config = Config {
            shape: Shape::new(m, 37, 19).unwrap(),
            ranks,
            chunks,
            collective,
            via,
            link,
        };
        let sys = System::new(gpu, &kernels, config).unwrap();
        let seed = common::seed(&format!("{collective} r{ranks} c{chunks} m{m} {via:?}"));
        let inputs = Inputs::random(sys.config.shape, collective, &sys.chunking, seed);
        sys.ranks.upload(gpu, &inputs);
        for mode in modes::all()
            .iter()
            .filter(|m| mode_names.contains(&m.name()))
        {
            if let Some(reason) = mode.skip_reason(&sys) {
                eprintln!("{} skipped: {reason}", mode.name());
                continue;
            }
            sys.ranks.poison(gpu);
            mode.run(&sys).unwrap();
            let (err, trackers_ok) = check(&sys, &inputs, Verify::Full).unwrap();
            let what = format!(
                "{} {collective} ranks {ranks} chunks {chunks} m {m} {via:?} {link:?}",
                mode.name()
            );
            assert!(err <= 1e-5, "{what}: rel error {err}");
            assert!(
                trackers_ok,
                "{what}: a tracker counter missed its threshold"
            );
        }
    }
}

const ALL_MODES: &[&str] = &["sequential", "host", "encoded", "fused"];

#[test]
fn sequential_every_rank_count() {
    for ranks in [1, 2, 3, 4, 8] {
        // 7 rows per rank plus a ragged remainder: chunk counts 1 and 2 never divide evenly.
        run_all(
            ranks,
            1,
            7 * ranks + 3,
            ReduceVia::Update,
            Link::Unthrottled,
            &["sequential"],
        );
        run_all(
            ranks,
            2,
            7 * ranks + 3,
            ReduceVia::Land,
            Link::Workgroups(1),
            &["sequential"],
        );
    }
}

#[test]
fn overlap_modes_ranks_2_3() {
    for ranks in [2, 3] {
        run_all(
            ranks,
            1,
            40 * ranks,
            ReduceVia::Update,
            Link::Unthrottled,
            ALL_MODES,
        );
        run_all(
            ranks,
            3,
            40 * ranks + 5,
            ReduceVia::Land,
            Link::Workgroups(2),
            ALL_MODES,
        );
    }
}

#[test]
fn overlap_modes_ranks_4_8() {
    for ranks in [4, 8] {
        run_all(
            ranks,
            2,
            9 * ranks + 1,
            ReduceVia::Update,
            Link::Workgroups(1),
            ALL_MODES,
        );
        run_all(
            ranks,
            1,
            5 * ranks,
            ReduceVia::Land,
            Link::Unthrottled,
            ALL_MODES,
        );
    }
}
