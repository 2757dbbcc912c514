//! NumPy dumps of every rank's inputs and output, with a meta.json that says how to read them.

use crate::config::Config;
use crate::error::{Error, Result};
use crate::ranks::Inputs;
use crate::schedule::a_rows;
use crate::shapes::Chunking;

fn npy(path: &std::path::Path, data: &[f32], shape: &[u64]) -> Result<()> {
    use npyz::WriterBuilder;
    crate::files::write_with(path, |w| {
        let mut w = npyz::WriteOptions::new()
            .default_dtype()
            .shape(shape)
            .writer(w)
            .begin_nd()?;
        w.extend(data.iter().copied())?;
        w.finish()
    })
}

/// Whether `name` is one of the files [`dump`] writes per rank ("rank3_out.npy").
pub(super) fn rank_file(name: &str) -> bool {
    name != "meta.json" && crate::files::is_dump_file(name)
}

/// `--dump DIR`: every rank's A, B and final output (`outputs`, as [`crate::experiment::outputs`]
/// read them after `mode`'s last run) as .npy, and meta.json with the chunk boundaries and the mode,
/// dtype and reduce that produced them. Rows a rank does not hold finished are its partials.
pub fn dump(
    dir: &str,
    config: &Config,
    chunking: &Chunking,
    inputs: &Inputs,
    outputs: &[Vec<f32>],
    mode: &str,
) -> Result<()> {
    let d = std::path::Path::new(dir);
    std::fs::create_dir_all(d).map_err(|source| Error::Write {
        path: dir.to_string(),
        source,
    })?;
    let s = config.shape;
    let a_rows: Vec<_> = (0..config.ranks)
        .map(|p| a_rows(config.collective, chunking, p))
        .collect();
    for (p, out) in outputs.iter().enumerate() {
        npy(
            &d.join(format!("rank{p}_a.npy")),
            &inputs.a[p],
            &[a_rows[p].len() as u64, s.k as u64],
        )?;
        npy(
            &d.join(format!("rank{p}_b.npy")),
            &inputs.b[p],
            &[s.k as u64, s.n as u64],
        )?;
        npy(
            &d.join(format!("rank{p}_out.npy")),
            out,
            &[s.m as u64, s.n as u64],
        )?;
    }
    let meta = serde_json::json!({
        "mode": mode,
        "shape": {"m": s.m, "n": s.n, "k": s.k},
        "ranks": config.ranks,
        "chunks_per_rank": config.chunks,
        "collective": config.collective,
        "reduce_via": config.via,
        "dtype": config.dtype.name(),
        "link": config.link.describe(),
        "chunk_bounds": chunking.bounds,
        "shard_of_chunk": (0..chunking.count()).map(|x| chunking.shard_of(x)).collect::<Vec<_>>(),
        "a_rows": a_rows.iter().map(|r| [r.start, r.end]).collect::<Vec<_>>(),
        "finished": crate::ranks::finished(config.collective, chunking),
        "seed": inputs.seed,
        "note": "rank{p}_out holds what `mode`'s last run left; rows of chunks listed in `finished` for rank p hold the collective's result; reduce-scatter: sum over ranks of a_p @ b_p; all-gather: a_s @ b for shard s; NaN rows were never written on that rank",
    });
    let path = d.join("meta.json");
    let text = serde_json::to_string_pretty(&meta).map_err(|e| Error::Write {
        path: path.display().to_string(),
        source: e.into(),
    })?;
    crate::files::write_with(&path, |w| w.write_all(text.as_bytes()))?;
    // Rank files of an earlier dump with more ranks go last (each file above replaced its
    // predecessor whole), so that the directory holds one run and a failed dump loses nothing.
    let io = |source| Error::Io {
        path: dir.to_string(),
        source,
    };
    for entry in std::fs::read_dir(d).map_err(io)? {
        let entry = entry.map_err(io)?;
        let name = entry.file_name();
        let Some(name) = name.to_str().filter(|n| rank_file(n)) else {
            continue;
        };
        let rank: Option<usize> = name[4..].split('_').next().and_then(|r| r.parse().ok());
        if rank.is_none_or(|r| r >= outputs.len()) {
            std::fs::remove_file(entry.path()).map_err(|source| Error::Write {
                path: entry.path().display().to_string(),
                source,
            })?;
        }
    }
    Ok(())
}
