//! Workloads: the T3 paper's models and sublayers as presets, turned into per-rank GEMM shapes.
//!
//! T3 (Pati et al., ASPLOS 2024) evaluates the tensor-parallel (TP) sublayers whose producer
//! GEMM is followed by a collective in Megatron-style TP: the attention output projection and
//! FC-2 in the forward pass, FC-1 and the QKV input projection in the backward pass (input
//! gradients). Each rank holds a 1/t slice of the reduction dimension K, computes a full-size
//! partial output `Y_p = X_p · W_p` of shape M x N, and the ranks then all-reduce the partial
//! outputs. This module turns (model, sublayer, TP degree, token count) into that per-rank
//! GEMM shape.
//!
//! Preset names are `MODEL-SUBLAYER-tpT`, e.g. `tnlg-fc2-tp8`; see [`presets`] and [`find`].

use std::fmt::Write as _;

use crate::schedule::Collective;

mod models;

pub use models::{Model, ReduceDim, Sublayer, MODELS, SUBLAYERS};

/// Default token count T (the GEMM's M): 8192 = batch 4 x sequence length 2048.
///
/// 2048 is the training sequence length of GPT-3, MT-NLG and PaLM, and 4 sequences per
/// micro-batch is a typical TP micro-batch. 8192 rows give every preset a GEMM large enough to
/// fill a data-centre GPU while keeping the largest single buffer under wgpu's 2 GiB storage
/// binding limit: the largest is MT-NLG fc2 (and fc1bwd) at TP 4, whose weight slice is 20480 x 20480 f32
/// (1.56 GiB); the largest output is 8192 x 20480 f32 (640 MiB). Use `scale` in [`presets`]
/// to shrink everything for small adapters (e.g. lavapipe's 128 MiB binding limit).
pub const DEFAULT_TOKENS: usize = 8192;

/// TP degrees of the preset table. Every model gets 4 to 32; TP 2 (what most owners of real GPUs have)
/// only where [`offered`] says its buffers fit.
pub const TP_DEGREES: [usize; 5] = [2, 4, 8, 16, 32];

/// wgpu's largest storage binding on the GPUs we measure (2 GiB on the H200): a preset whose largest
/// buffer at [`DEFAULT_TOKENS`] is over it could never run unscaled.
pub const PRESET_BUFFER_LIMIT: u64 = 2 << 30;

/// Bytes per element: everything is f32.
const ELEM_BYTES: u64 = 4;

/// One workload: a model's sublayer at one TP degree and token count, as a per-rank GEMM.
///
/// Every rank computes `C[M x N] = A[M x K] · B[K x N]` (its partial output); the ranks then
/// run `collective` over their C's.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Preset {
    /// `MODEL-SUBLAYER-tpT`, lower case, e.g. `tnlg-fc2-tp8`.
    pub name: String,
    /// Model key, e.g. `tnlg`.
    pub model: &'static str,
    /// Model name as its paper writes it, e.g. `T-NLG 17B`.
    pub model_long: &'static str,
    /// Sublayer key: `op`, `fc2`, `fc1bwd` or `ipbwd`.
    pub sublayer: &'static str,
    /// TP degree t: the number of ranks.
    pub tp: usize,
    /// Hidden size H, scaled by the preset's scale (so it equals N).
    pub hidden: usize,
    /// Tokens T as requested (unscaled; M is T scaled).
    pub tokens: usize,
    /// GEMM rows per rank (tokens, scaled).
    pub m: usize,
    /// GEMM columns per rank (hidden size, scaled).
    pub n: usize,
    /// GEMM reduction length per rank: ceil(full reduction / t), scaled.
    pub k: usize,
    /// The collective after the GEMM (all-reduce for every Megatron TP sublayer).
    pub collective: Collective,
    /// Whether the T3 paper evaluated this (model, TP degree) pair.
    pub paper: bool,
}

impl Preset {
    /// GEMM floating-point operations per rank: 2·M·N·K.
    pub fn flops_per_rank(&self) -> f64 {
        2.0 * self.m as f64 * self.n as f64 * self.k as f64
    }

    /// Bytes of one rank's output C: M·N·4 (f32).
    pub fn output_bytes(&self) -> u64 {
        self.m as u64 * self.n as u64 * ELEM_BYTES
    }

    /// Bytes of one rank's input A (M x K, f32).
    pub fn a_bytes(&self) -> u64 {
        self.m as u64 * self.k as u64 * ELEM_BYTES
    }

    /// Bytes of one rank's input B (K x N, f32).
    pub fn b_bytes(&self) -> u64 {
        self.k as u64 * self.n as u64 * ELEM_BYTES
    }

    /// The largest single buffer a rank needs (A, B or C), to check against the adapter's
    /// storage binding limit.
    pub fn largest_buffer_bytes(&self) -> u64 {
        self.a_bytes().max(self.b_bytes()).max(self.output_bytes())
    }

    /// Bytes each rank sends during the preset's collective over t ranks with S = M·N·4 bytes of output per rank:
    ///
    /// - all-reduce (reduce-scatter + all-gather): `2·(t-1)/t · S`
    /// - direct all-reduce (every partial to every peer): `(t-1) · S`
    /// - reduce-scatter, direct reduce-scatter, all-gather: `(t-1)/t · S`
    ///   (direct RS sends the t-1 foreign chunks straight to their owners: same volume;
    ///   all-gather's S is the gathered M x N output.)
    ///
    /// Rounded down to whole bytes; 0 for t = 1.
    pub fn bytes_communicated_per_rank(&self) -> u64 {
        let t = self.tp.max(1) as u64;
        let s = self.output_bytes();
        let passes = match self.collective {
            Collective::AllReduce => 2,
            // Each partial goes whole to every peer: t - 1 outputs, t times the ring's (t-1)/t.
            Collective::DirectAllReduce => t as u128,
            Collective::ReduceScatter | Collective::DirectReduceScatter | Collective::AllGather => {
                1
            }
        };
        // In u128 so that S·2·(t-1) cannot overflow before the division.
        (s as u128 * passes * (t as u128 - 1) / t as u128) as u64
    }
}

/// Scales a dimension by `scale`, rounding to the nearest integer and never below 1.
fn scale_dim(dim: usize, scale: f64) -> usize {
    ((dim as f64 * scale).round() as usize).max(1)
}

/// The preset name for a (model, sublayer, TP degree) triple.
fn preset_name(model: &str, sublayer: &str, tp: usize) -> String {
    format!("{model}-{sublayer}-tp{tp}")
}

/// Builds one preset. The unscaled shape is M = T, N = H, K = ceil(full / t) (ceil only
/// matters when t does not divide the reduction; for the built-in models it always does);
/// then M, N, K and the hidden size are each scaled by `scale` (nearest integer, at least 1).
fn build(model: &Model, sub: &Sublayer, tp: usize, tokens: usize, scale: f64) -> Preset {
    let k_full = sub.reduce.full(model);
    let k = k_full.div_ceil(tp);
    let hidden = scale_dim(model.hidden, scale);
    Preset {
        name: preset_name(model.key, sub.key, tp),
        model: model.key,
        model_long: model.long,
        sublayer: sub.key,
        tp,
        hidden,
        tokens,
        m: scale_dim(tokens, scale),
        n: hidden,
        k: scale_dim(k, scale),
        collective: Collective::AllReduce,
        paper: model.paper_tp.contains(&tp),
    }
}

/// Whether `scale` is a usable scale factor: finite and in (0, 1].
pub fn valid_scale(scale: f64) -> bool {
    scale.is_finite() && scale > 0.0 && scale <= 1.0
}

/// Whether the table has a preset for (`model`, `sub`, `tp`): always at TP 4 and up; at TP 2 where
/// every buffer of the unscaled preset fits [`PRESET_BUFFER_LIMIT`] (K per rank is half the reduction,
/// so MT-NLG's FC-2, FC-1 backward and input projection backward, and PaLM's FC-2 and FC-1 backward,
/// have a weight slice over 2 GiB and no TP-2 preset).
pub fn offered(model: &Model, sub: &Sublayer, tp: usize) -> bool {
    tp > 2
        || build(model, sub, tp, DEFAULT_TOKENS, 1.0).largest_buffer_bytes() <= PRESET_BUFFER_LIMIT
}

/// Every (model, sublayer, TP degree) of the table, in table order.
fn entries() -> impl Iterator<Item = (&'static Model, &'static Sublayer, usize)> {
    MODELS.iter().flat_map(|model| {
        SUBLAYERS.iter().flat_map(move |sub| {
            TP_DEGREES
                .iter()
                .map(move |&tp| (model, sub, tp))
                .filter(|&(model, sub, tp)| offered(model, sub, tp))
        })
    })
}

/// The whole preset table, for every model x sublayer x TP degree in [`TP_DEGREES`] that is
/// [`offered`], in that order (95 presets), at `tokens` tokens, every dimension shrunk by `scale`.
/// Empty when `tokens` is 0 or `scale` is not in (0, 1] (see [`valid_scale`]).
pub fn presets(tokens: usize, scale: f64) -> Vec<Preset> {
    // Out-of-range parameters give no presets rather than a panic: the library never panics on
    // user input, and the CLI validates both before it gets here.
    if tokens == 0 || !valid_scale(scale) {
        return Vec::new();
    }
    entries()
        .map(|(model, sub, tp)| build(model, sub, tp, tokens, scale))
        .collect()
}

/// The preset called `name` (case-insensitive, surrounding whitespace ignored).
/// None also for the parameters [`presets`] refuses.
pub fn find(name: &str, tokens: usize, scale: f64) -> Option<Preset> {
    let wanted = name.trim().to_ascii_lowercase();
    presets(tokens, scale)
        .into_iter()
        .find(|p| p.name == wanted)
}

/// The preset called `name` at `scale` or the largest half of it (down to 1/1024) whose every buffer
/// fits `max_binding` bytes (an adapter's storage-binding limit), with the scale it got.
pub fn fitted(name: &str, tokens: usize, scale: f64, max_binding: u64) -> Option<(Preset, f64)> {
    let mut scale = scale;
    loop {
        let p = find(name, tokens, scale)?;
        if p.largest_buffer_bytes() <= max_binding || scale <= 1e-3 {
            return Some((p, scale));
        }
        scale /= 2.0;
    }
}

/// Every preset name, in table order.
pub fn names() -> Vec<String> {
    entries()
        .map(|(model, sub, tp)| preset_name(model.key, sub.key, tp))
        .collect()
}

/// A suggestion for a mistyped preset name, for error messages ("did you mean
/// tnlg-fc2-tp8?"), compared case-insensitively. A prefix of some names (e.g. `gpt3-fc2` or
/// `palm`) suggests the first of them; otherwise the name with the smallest edit distance,
/// if that distance is at most max(3, len/3). Ties go to presets the paper evaluated, then
/// to table order. `None` when nothing is close.
pub fn closest(name: &str) -> Option<String> {
    let wanted = name.trim().to_ascii_lowercase();
    if wanted.is_empty() {
        return None;
    }
    let all: Vec<(String, bool)> = entries()
        .map(|(model, sub, tp)| {
            (
                preset_name(model.key, sub.key, tp),
                model.paper_tp.contains(&tp),
            )
        })
        .collect();
    // Keys are ordered so that the smallest wins: (.., not from the paper, table index).
    let prefix = all
        .iter()
        .enumerate()
        .filter(|(_, (n, _))| n.starts_with(&wanted))
        .map(|(i, (_, paper))| (!paper, i))
        .min();
    if let Some((_, i)) = prefix {
        return Some(all[i].0.clone());
    }
    let (distance, _, i) = all
        .iter()
        .enumerate()
        .map(|(i, (n, paper))| (strsim::levenshtein(&wanted, n), !paper, i))
        .min()?;
    (distance <= 3.max(wanted.chars().count() / 3)).then(|| all[i].0.clone())
}

/// Formats a table quantity: one decimal from 10 up, three below, scientific under 0.01
/// (so scaled-down presets do not all read 0.0).
fn fmt_quantity(v: f64) -> String {
    if v == 0.0 || v >= 10.0 {
        format!("{v:.1}")
    } else if v >= 0.01 {
        format!("{v:.3}")
    } else {
        format!("{v:.2e}")
    }
}

/// A fixed-width text table of `presets`: name, model, sublayer, tp, per-rank M, N, K,
/// GFLOP per rank, MiB communicated per rank (by the preset's collective), and `*` where
/// the T3 paper evaluated that model at that TP degree.
pub fn table(presets: &[Preset]) -> String {
    let header = [
        "name",
        "model",
        "sublayer",
        "tp",
        "M",
        "N",
        "K",
        "GFLOP/rank",
        "MiB comm/rank",
        "paper",
    ];
    // Columns after the first three are right-aligned numbers (the paper marker too).
    let rows: Vec<[String; 10]> = presets
        .iter()
        .map(|p| {
            [
                p.name.clone(),
                p.model.to_string(),
                p.sublayer.to_string(),
                p.tp.to_string(),
                p.m.to_string(),
                p.n.to_string(),
                p.k.to_string(),
                fmt_quantity(p.flops_per_rank() / 1e9),
                fmt_quantity(p.bytes_communicated_per_rank() as f64 / (1024.0 * 1024.0)),
                if p.paper { "*" } else { "" }.to_string(),
            ]
        })
        .collect();
    let mut widths: Vec<usize> = header.iter().map(|h| h.len()).collect();
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.len());
        }
    }
    let mut out = String::new();
    let line = |out: &mut String, cells: &[&str]| {
        let mut s = String::new();
        for (i, (cell, &w)) in cells.iter().zip(&widths).enumerate() {
            if i > 0 {
                s.push_str("  ");
            }
            if i < 3 {
                let _ = write!(s, "{cell:<w$}");
            } else {
                let _ = write!(s, "{cell:>w$}");
            }
        }
        out.push_str(s.trim_end());
        out.push('\n');
    };
    line(&mut out, &header);
    let rule: Vec<String> = widths.iter().map(|&w| "-".repeat(w)).collect();
    line(
        &mut out,
        &rule.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    for row in &rows {
        line(
            &mut out,
            &row.iter().map(String::as_str).collect::<Vec<_>>(),
        );
    }
    out
}

#[cfg(test)]
mod tests;
