//! The tune table `run` and `sweep` take their configurations from (`--tune`), and flags over it.
//!
//! Which table, loaded and checked, and what the flags set explicitly (they win over it).

use anyhow::Result;

use t3_wgpu::files;
use t3_wgpu::gpu::Gpu;
use t3_wgpu::modes::{Config, ModeKind};
use t3_wgpu::tune::apply::Given;
use t3_wgpu::tune::model::{self, Prior};
use t3_wgpu::tune::table::{self, Table};

use super::args::*;

/// A `--tune FILE` table, read before any GPU work (auto and off read nothing yet).
pub fn check_tune(t: &TuneArgs, files: files::Files) -> Result<(files::Files, Option<Table>)> {
    match t.tune.as_str() {
        "auto" | "off" => Ok((files, None)),
        path => {
            let files = files.input("--tune", path);
            Ok((files, Some(Table::load(path)?)))
        }
    }
}

/// Where the table of `gpu` is kept by default.
pub fn default_table(gpu: &Gpu) -> String {
    table::default_path(&gpu.info.name, &format!("{:?}", gpu.info.backend))
}

/// The table `run` and `sweep` use on `gpu`: `--tune FILE`'s (`pre`, checked against the adapter:
/// a foreign one is an error), auto's where the adapter has one (a bad, stale or foreign one is
/// said and ignored), or none.
pub fn table_for(t: &TuneArgs, pre: Option<Table>, gpu: &Gpu) -> Result<Option<Table>> {
    match (t.tune.as_str(), pre) {
        ("off", _) => Ok(None),
        ("auto", _) => {
            let path = default_table(gpu);
            if !std::path::Path::new(&path).exists() {
                return Ok(None);
            }
            match Table::load(&path).and_then(|tb| {
                tb.check_adapter(&path, &gpu.describe())?;
                Ok(tb)
            }) {
                Ok(tb) => {
                    note!("tune: configurations from {path} (tuned {})", tb.date);
                    Ok(Some(tb))
                }
                Err(e) => {
                    note!("warning: tune table ignored: {e}");
                    Ok(None)
                }
            }
        }
        (path, Some(tb)) => {
            tb.check_adapter(path, &gpu.describe())?;
            Ok(Some(tb))
        }
        (path, None) => Err(anyhow::anyhow!("tune table {path} was not read")),
    }
}

/// Chunks per rank where none is given: 1 on one device (the ring's R chunks already give every
/// step its own), and the cost model's where the ranks span devices (`--devices all` counted as
/// two: the count is known only once they are open, when [`recount_chunks`] counts again).
pub fn model_chunks(devices: Option<Option<usize>>, c: &Config) -> Option<usize> {
    let n = match devices {
        None | Some(Some(1)) => return None,
        Some(n) => n.unwrap_or(2),
    };
    let costs = Prior::of(None, c.dtype, n, None).costs(c, n);
    Some(model::best_chunks(ModeKind::Host, &costs, c))
}

/// The model's chunk count again over the `devices` now open, where it chose the count (`model`):
/// `--devices all` opened other than the two it was counted as (one device: 1, as without
/// `--devices`).
pub fn recount_chunks(c: &mut Config, model: bool, devices: usize) {
    if model {
        c.chunks = model_chunks(Some(Some(devices)), c).unwrap_or(1);
    }
}

/// The knobs `--fused` and `--host-loop` set explicitly (they win over the table, as flags do).
pub fn given_knobs(k: &KnobArgs) -> Given {
    let (host, fused) = (k.host(), k.fused());
    Given {
        host_grain: host.grain.is_some(),
        host_depth: host.in_flight.is_some(),
        fused_spares: fused.spares.is_some(),
        fused_pieces: fused.pieces != t3_wgpu::config::fused::Pieces::Auto,
        fused_pause: fused.pause.is_some(),
        order: !k.order.is_empty(),
        ..Given::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use t3_wgpu::shapes::{Dtype, Shape};

    #[test]
    fn the_models_chunks_are_counted_again_over_the_devices_opened() {
        // tnlg-op at TP 4 in f32, whose chunk count the model picks differently over two devices
        // and over four.
        let mut c = Config {
            dtype: Dtype::F32,
            ..Config::new(Shape::new(8192, 4256, 1064).unwrap(), 4)
        };
        let (two, four) = (
            model_chunks(Some(Some(2)), &c),
            model_chunks(Some(Some(4)), &c),
        );
        assert_ne!(two, four, "a point where the count matters");
        // `--devices all` before the devices open: counted as two.
        assert_eq!(model_chunks(Some(None), &c), two);
        c.chunks = two.unwrap();
        recount_chunks(&mut c, true, 4);
        assert_eq!(Some(c.chunks), four);
        // A count the flags gave stays; `--devices all` opening one device gives one chunk.
        c.chunks = 3;
        recount_chunks(&mut c, false, 4);
        assert_eq!(c.chunks, 3);
        recount_chunks(&mut c, true, 1);
        assert_eq!(c.chunks, 1);
    }
}
