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

/// One transformer model the T3 paper evaluated, with the dimensions from its own paper.
///
/// All models are treated as standard multi-head-attention transformers: attention width =
/// hidden size H (what the output projection reduces over) and QKV width = 3H. The FFN width
/// F is what FC-1 produces and FC-2 reduces over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Model {
    /// Short key used in preset names.
    pub key: &'static str,
    /// Name as the papers write it.
    pub long: &'static str,
    /// Hidden size H (d_model).
    pub hidden: usize,
    /// FFN width F.
    pub ffn: usize,
    /// Transformer layers (informational; not used for shapes).
    pub layers: usize,
    /// Attention heads (informational; not used for shapes).
    pub heads: usize,
    /// TP degrees the T3 paper evaluated this model at.
    pub paper_tp: &'static [usize],
}

/// The models, in the order the T3 paper lists them (small to large).
pub const MODELS: [Model; 5] = [
    // Megatron-LM 8.3B ("Mega-GPT-2" in T3): Shoeybi et al., "Megatron-LM: Training
    // Multi-Billion Parameter Language Models Using Model Parallelism", arXiv:1909.08053,
    // Table 1: hidden 3072, 72 layers, 32 heads; FFN 4H.
    Model {
        key: "megagpt2",
        long: "Mega-GPT-2 (Megatron-LM 8.3B)",
        hidden: 3072,
        ffn: 4 * 3072,
        layers: 72,
        heads: 32,
        paper_tp: &[8, 16],
    },
    // Turing-NLG 17B: Microsoft Research blog, "Turing-NLG: A 17-billion-parameter language
    // model by Microsoft" (Feb 2020; no arXiv paper): 78 layers, hidden 4256, 28 heads; FFN 4H.
    // 28 heads do not split evenly over TP 16 or 32; only the GEMM shapes matter here and
    // 4256 = 32 x 133, so every K below still divides exactly.
    Model {
        key: "tnlg",
        long: "T-NLG 17B",
        hidden: 4256,
        ffn: 4 * 4256,
        layers: 78,
        heads: 28,
        paper_tp: &[8, 16],
    },
    // GPT-3 175B: Brown et al., "Language Models are Few-Shot Learners", arXiv:2005.14165,
    // Table 2.1: d_model 12288, 96 layers, 96 heads of 128; d_ff = 4 d_model.
    Model {
        key: "gpt3",
        long: "GPT-3 175B",
        hidden: 12288,
        ffn: 4 * 12288,
        layers: 96,
        heads: 96,
        paper_tp: &[32],
    },
    // Megatron-Turing NLG 530B: Smith et al., "Using DeepSpeed and Megatron to Train
    // Megatron-Turing NLG 530B, A Large-Scale Generative Language Model", arXiv:2201.11990:
    // hidden 20480, 105 layers, 128 heads; FFN 4H.
    Model {
        key: "mtnlg",
        long: "MT-NLG 530B",
        hidden: 20480,
        ffn: 4 * 20480,
        layers: 105,
        heads: 128,
        paper_tp: &[32],
    },
    // PaLM 540B: Chowdhery et al., "PaLM: Scaling Language Modeling with Pathways",
    // arXiv:2204.02311, Table 1: d_model 18432, 118 layers, 48 heads of 256, d_ff = 4 d_model
    // = 73728 with SwiGLU, multi-query attention, parallel attention/MLP blocks.
    //
    // How we treat it (the same uniform transformer as the other models):
    // - FFN width F = 4H = 73728. fc2 reduces over F (exact: SwiGLU's down projection takes
    //   the F-wide gated product). fc1bwd also uses K = F/t, i.e. one F-wide FC-1 matrix; real
    //   SwiGLU has two (gate and up), so its exact input-gradient GEMM has K = 2F/t. We keep
    //   F/t so every model's fc1bwd is the same GEMM family, as in a plain GELU MLP.
    // - Attention as standard MHA with width H: op uses K = H/t and ipbwd K = 3H/t. Real PaLM
    //   has attention width 48 x 256 = 12288 (not 18432) and multi-query K/V (one 256-wide
    //   head each), so its exact op K would be 12288/t and its QKV width 12800.
    Model {
        key: "palm",
        long: "PaLM 540B",
        hidden: 18432,
        ffn: 4 * 18432,
        layers: 118,
        heads: 48,
        paper_tp: &[32],
    },
];

/// What a sublayer's GEMM reduces over (before the 1/t TP split).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReduceDim {
    /// H: attention width (output projection).
    Hidden,
    /// F: FFN width (FC-2 forward, FC-1 backward).
    Ffn,
    /// 3H: fused Q, K, V width (input projection backward).
    Qkv,
}

impl ReduceDim {
    /// The full (unsplit) reduction length for `model`.
    pub fn full(self, model: &Model) -> usize {
        match self {
            ReduceDim::Hidden => model.hidden,
            ReduceDim::Ffn => model.ffn,
            ReduceDim::Qkv => 3 * model.hidden,
        }
    }
}

/// One tensor-parallel sublayer whose producer GEMM is followed by a collective.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sublayer {
    /// Short key used in preset names.
    pub key: &'static str,
    /// What the GEMM is.
    pub long: &'static str,
    /// What the GEMM reduces over.
    pub reduce: ReduceDim,
}

/// The four sublayers T3 evaluates. In every one, the per-rank GEMM is M = T tokens,
/// N = H (the full hidden size: the partial output has the activations' shape),
/// K = ceil(full reduction / t), followed by an all-reduce of the M x N partial outputs.
pub const SUBLAYERS: [Sublayer; 4] = [
    // Forward: Y = X · W_o, W_o row-parallel (each rank holds H/t rows), then all-reduce.
    Sublayer {
        key: "op",
        long: "attention output projection, forward (Y = X·W_o)",
        reduce: ReduceDim::Hidden,
    },
    // Forward: Y = A · W_2, W_2 row-parallel (F/t rows per rank), then all-reduce.
    Sublayer {
        key: "fc2",
        long: "MLP FC-2, forward (Y = A·W_2)",
        reduce: ReduceDim::Ffn,
    },
    // Backward: W_1 is column-parallel (F/t columns per rank) so the input gradient
    // dX = dY1 · W_1^T reduces over the local F/t slice, then all-reduce.
    Sublayer {
        key: "fc1bwd",
        long: "MLP FC-1, backward input gradient (dX = dY1·W_1^T)",
        reduce: ReduceDim::Ffn,
    },
    // Backward: W_qkv is column-parallel (3H/t columns per rank), so
    // dX = dQKV · W_qkv^T reduces over the local 3H/t slice, then all-reduce.
    Sublayer {
        key: "ipbwd",
        long: "QKV input projection, backward input gradient (dX = dQKV·W_qkv^T)",
        reduce: ReduceDim::Qkv,
    },
];

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

    /// Bytes each rank sends during the preset's collective, for a ring (bandwidth-optimal)
    /// algorithm over t ranks with S = M·N·4 bytes of output per rank:
    ///
    /// - all-reduce (reduce-scatter + all-gather): `2·(t-1)/t · S`
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
mod tests {
    use super::*;

    #[test]
    fn tnlg_fc2_tp8_shape() {
        let p = find("tnlg-fc2-tp8", 8192, 1.0).expect("preset exists");
        assert_eq!((p.m, p.n, p.k), (8192, 4256, 4 * 4256 / 8));
        assert_eq!(p.hidden, 4256);
        assert_eq!(p.tokens, 8192);
        assert_eq!(p.tp, 8);
        assert!(p.paper);
        assert_eq!(p.collective, Collective::AllReduce);
        assert_eq!(p.flops_per_rank(), 2.0 * 8192.0 * 4256.0 * 2128.0);
        assert_eq!(p.output_bytes(), 8192 * 4256 * 4);
        assert_eq!(
            p.bytes_communicated_per_rank(),
            2 * 7 * (8192 * 4256 * 4) / 8
        );
    }

    #[test]
    fn tp2_shapes() {
        // Two ranks each hold half of the reduction: the paper's Megatron layout at TP 2.
        let get = |n: &str| find(n, DEFAULT_TOKENS, 1.0).unwrap_or_else(|| panic!("{n}"));
        let p = get("tnlg-op-tp2");
        assert_eq!((p.m, p.n, p.k, p.tp), (8192, 4256, 4256 / 2, 2));
        assert!(!p.paper);
        assert_eq!(p.bytes_communicated_per_rank(), p.output_bytes());
        assert_eq!(get("tnlg-fc2-tp2").k, 4 * 4256 / 2);
        assert_eq!(get("gpt3-op-tp2").k, 12288 / 2);
        let p = get("gpt3-fc2-tp2");
        assert_eq!((p.m, p.n, p.k), (8192, 12288, 4 * 12288 / 2));
        assert_eq!(p.b_bytes(), 24576 * 12288 * 4);
        assert_eq!(get("megagpt2-ipbwd-tp2").k, 3 * 3072 / 2);
        assert_eq!(get("palm-ipbwd-tp2").k, 3 * 18432 / 2);
    }

    #[test]
    fn tp2_only_where_buffers_fit() {
        let tp2: Vec<String> = names()
            .into_iter()
            .filter(|n| n.ends_with("-tp2"))
            .collect();
        let mut want = Vec::new();
        for m in ["megagpt2", "tnlg", "gpt3"] {
            for s in ["op", "fc2", "fc1bwd", "ipbwd"] {
                want.push(format!("{m}-{s}-tp2"));
            }
        }
        want.insert(12, "mtnlg-op-tp2".into());
        want.extend(["palm-op-tp2".into(), "palm-ipbwd-tp2".into()]);
        assert_eq!(tp2, want);
        // The ones left out are over the limit by their weight slice, and only at TP 2.
        for model in &MODELS {
            for sub in &SUBLAYERS {
                let p = build(model, sub, 2, DEFAULT_TOKENS, 1.0);
                assert_eq!(
                    offered(model, sub, 2),
                    p.b_bytes() <= PRESET_BUFFER_LIMIT,
                    "{}",
                    p.name
                );
                for tp in [4, 8, 16, 32] {
                    assert!(offered(model, sub, tp));
                }
            }
        }
        assert!(closest("mtnlg-fc2-tp2").is_some_and(|c| c != "mtnlg-fc2-tp2"));
    }

    #[test]
    fn sublayer_k_formulas() {
        let t = 16;
        let h = 12288;
        let get = |s: &str| find(&format!("gpt3-{s}-tp{t}"), 1024, 1.0).unwrap();
        assert_eq!(get("op").k, h / t);
        assert_eq!(get("fc2").k, 4 * h / t);
        assert_eq!(get("fc1bwd").k, 4 * h / t);
        assert_eq!(get("ipbwd").k, 3 * h / t);
        for s in ["op", "fc2", "fc1bwd", "ipbwd"] {
            let p = get(s);
            assert_eq!((p.m, p.n), (1024, h));
        }
    }

    #[test]
    fn built_in_models_divide_exactly() {
        // Unscaled, t·K equals the full reduction for every preset (no ceil padding).
        for p in presets(DEFAULT_TOKENS, 1.0) {
            let model = MODELS.iter().find(|m| m.key == p.model).unwrap();
            let sub = SUBLAYERS.iter().find(|s| s.key == p.sublayer).unwrap();
            assert_eq!(p.k * p.tp, sub.reduce.full(model), "{}", p.name);
        }
    }

    #[test]
    fn k_rounds_up() {
        let model = Model {
            key: "odd",
            long: "odd",
            hidden: 10,
            ffn: 40,
            layers: 1,
            heads: 1,
            paper_tp: &[],
        };
        let p = build(&model, &SUBLAYERS[0], 4, 8, 1.0);
        assert_eq!(p.k, 3); // ceil(10 / 4)
        let p = build(&model, &SUBLAYERS[3], 4, 8, 1.0);
        assert_eq!(p.k, 8); // ceil(30 / 4)
    }

    #[test]
    fn every_name_parses_back() {
        let names = names();
        assert_eq!(names.len(), 95);
        for n in &names {
            let p = find(n, DEFAULT_TOKENS, 1.0).unwrap_or_else(|| panic!("{n} not found"));
            assert_eq!(&p.name, n);
            let upper = find(&n.to_uppercase(), DEFAULT_TOKENS, 1.0).unwrap();
            assert_eq!(&upper.name, n);
        }
        let table_names: Vec<String> = presets(DEFAULT_TOKENS, 1.0)
            .into_iter()
            .map(|p| p.name)
            .collect();
        assert_eq!(table_names, names);
        assert!(find("tnlg-fc2-tp7", DEFAULT_TOKENS, 1.0).is_none());
        assert!(find("mtnlg-fc2-tp2", DEFAULT_TOKENS, 1.0).is_none());
    }

    #[test]
    fn names_are_unique() {
        let mut names = names();
        let n = names.len();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), n);
    }

    #[test]
    fn tiny_scale_never_zero() {
        for scale in [0.01, 1e-6, f64::MIN_POSITIVE] {
            for p in presets(1, scale) {
                assert!(p.m >= 1 && p.n >= 1 && p.k >= 1 && p.hidden >= 1, "{p:?}");
            }
        }
        let p = find("megagpt2-op-tp32", 8192, 0.01).unwrap();
        assert_eq!((p.m, p.n, p.k), (82, 31, 1)); // 81.92, 30.72, 0.96
        assert_eq!(p.hidden, p.n);
    }

    #[test]
    fn scale_half() {
        let p = find("mtnlg-fc2-tp32", 8192, 0.5).unwrap();
        assert_eq!((p.m, p.n, p.k), (4096, 10240, 1280));
        assert_eq!(p.tokens, 8192);
    }

    #[test]
    fn bad_parameters_give_no_presets() {
        assert!(presets(8192, 1.5).is_empty());
        assert!(presets(8192, 0.0).is_empty());
        assert!(presets(0, 1.0).is_empty());
        assert!(find("tnlg-fc2-tp8", 8192, f64::NAN).is_none());
    }

    #[test]
    fn paper_marks() {
        let ps = presets(DEFAULT_TOKENS, 1.0);
        let paper: Vec<&str> = ps
            .iter()
            .filter(|p| p.paper && p.sublayer == "op")
            .map(|p| p.name.as_str())
            .collect();
        assert_eq!(
            paper,
            [
                "megagpt2-op-tp8",
                "megagpt2-op-tp16",
                "tnlg-op-tp8",
                "tnlg-op-tp16",
                "gpt3-op-tp32",
                "mtnlg-op-tp32",
                "palm-op-tp32",
            ]
        );
        assert_eq!(ps.iter().filter(|p| p.paper).count(), 7 * 4);
    }

    #[test]
    fn communication_formulas() {
        let mut p = find("gpt3-op-tp4", 100, 1.0).unwrap();
        let s = p.output_bytes();
        assert_eq!(p.bytes_communicated_per_rank(), s * 2 * 3 / 4);
        for c in [
            Collective::ReduceScatter,
            Collective::DirectReduceScatter,
            Collective::AllGather,
        ] {
            p.collective = c;
            assert_eq!(p.bytes_communicated_per_rank(), s * 3 / 4);
        }
        p.tp = 1;
        assert_eq!(p.bytes_communicated_per_rank(), 0);
    }

    #[test]
    fn default_tokens_fit_2gib_binding() {
        for p in presets(DEFAULT_TOKENS, 1.0) {
            assert!(
                p.largest_buffer_bytes() <= PRESET_BUFFER_LIMIT,
                "{}",
                p.name
            );
        }
    }

    #[test]
    fn closest_suggestions() {
        let s = closest("tnlg-fc2-tp7").unwrap();
        assert!(s.starts_with("tnlg-fc2-tp"), "{s}");
        assert_eq!(s, "tnlg-fc2-tp8"); // tie with tp4 goes to the paper's preset
        assert_eq!(closest("GPT3-FC2-TP32").as_deref(), Some("gpt3-fc2-tp32"));
        assert_eq!(closest("gtp3-fc2-tp32").as_deref(), Some("gpt3-fc2-tp32"));
        assert_eq!(closest("mtnlg-fc1-tp32").as_deref(), Some("mtnlg-fc2-tp32"));
        assert_eq!(closest("palm-ipbwd").as_deref(), Some("palm-ipbwd-tp32"));
        assert_eq!(closest("megagpt2").as_deref(), Some("megagpt2-op-tp8"));
        assert_eq!(closest("completely-unrelated-words-here"), None);
        assert_eq!(closest(""), None);
    }

    #[test]
    fn table_has_every_row_and_aligned_columns() {
        let ps = presets(DEFAULT_TOKENS, 1.0);
        let t = table(&ps);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines.len(), ps.len() + 2);
        assert!(lines[0].starts_with("name"));
        assert!(lines[0].contains("GFLOP/rank") && lines[0].contains("MiB comm/rank"));
        assert!(lines[1].starts_with("----"));
        // Rows with a paper marker end at the same column as the header.
        let width = lines[0].len();
        for (line, p) in lines[2..].iter().zip(&ps) {
            assert!(line.starts_with(&p.name));
            if p.paper {
                assert_eq!(line.len(), width, "{line}");
                assert!(line.ends_with('*'));
            }
        }
        // tnlg-fc2-tp8: 2·8192·4256·2128 / 1e9 = 148.4 GFLOP; 2·7/8·8192·4256·4 B = 232.8 MiB.
        let row = lines
            .iter()
            .find(|l| l.starts_with("tnlg-fc2-tp8 "))
            .unwrap();
        assert!(row.contains("148.4"), "{row}");
        assert!(row.contains("232.8"), "{row}");
    }

    #[test]
    fn quantities_stay_readable() {
        assert_eq!(fmt_quantity(148.386), "148.4");
        assert_eq!(fmt_quantity(4.8318), "4.832");
        assert_eq!(fmt_quantity(0.0), "0.0");
        assert_eq!(fmt_quantity(0.000123), "1.23e-4");
    }

    #[test]
    fn serializes() {
        let p = find("palm-fc1bwd-tp32", 8192, 1.0).unwrap();
        let v = serde_json::to_value(&p).unwrap();
        assert_eq!(v["name"], "palm-fc1bwd-tp32");
        assert_eq!(v["k"], 73728 / 32);
        assert_eq!(v["paper"], true);
    }
}
