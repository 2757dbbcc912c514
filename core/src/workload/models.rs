//! The preset table's data: the T3 paper's models with their own papers' dimensions, and the
//! tensor-parallel sublayers it evaluates.

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
