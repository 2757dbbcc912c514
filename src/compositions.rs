//! Every shader composition the library builds, declared once: which snippets each kernel under
//! shaders/ is put together with. build.rs includes this file to validate and reflect each one;
//! src/shaders.rs composes from the same table at run time and refuses anything not in it. What
//! only fused mode composes lies in shaders/fused/ ([`Composition::parts`] maps its names there).

/// A kernel and the snippets it is composed with.
pub struct Kernel {
    /// File under shaders/.
    pub file: &'static str,
    /// Its operand snippets (shaders/operands/NAME.wgsl): a GEMM kernel's operand types; empty for
    /// a kernel without GEMM operands.
    pub operands: &'static [&'static str],
    /// Each epilogue (see [`epilogue_file`]; "" for none) with the puts (see [`put_file`]) it
    /// takes.
    pub variants: &'static [(&'static str, &'static [&'static str])],
}

/// Every put: how a kernel writes its destination.
pub const PUTS: &[&str] = &["store", "add", "atomic", "cas"];

/// The GEMM's plain stores of 2-byte outputs (`store_FORMAT`: shaders/elements/FORMAT.wgsl,
/// shaders/put/packed.wgsl and shaders/put/store_packed.wgsl; see [`Composition::parts`]).
const PACKED_STORES: &[&str] = &["store_f16", "store_bf16"];

/// A step's copy and reduce of 2-byte outputs (`add_FORMAT`: put/add_packed.wgsl likewise).
const PACKED_STEPS: &[&str] = &["store_f16", "store_bf16", "add_f16", "add_bf16"];

/// The fused epilogue's output is in two windows (the packed output of every rank may exceed one
/// binding), coherent: only the windowed puts write that (`@coherent` plain stores, relaxed atomic
/// stores, CAS, or native f32 atomic adds).
const FUSED_PUTS: &[&str] = &[
    "coherent_windows",
    "store_windows",
    "cas_windows",
    "atomic_windows",
];

/// The same puts into four windows of two buffers (`NAME_windows4`), where fused mode's packed output
/// passes what two windows of one buffer hold. Their compositions bind ten storage buffers (WebGPU's
/// default allows eight), so they are apart: composed with the epilogues `fused4` and `watched4`
/// (the same files as `fused` and `watched`), whose bindings build.rs reflects apart.
const FUSED_PUTS4: &[&str] = &[
    "coherent_windows4",
    "store_windows4",
    "cas_windows4",
    "atomic_windows4",
];

/// Fused mode's watched GEMM (`--fused trigger=spares`): the tracker alone in fused mode's bindings,
/// writing the packed output plainly (its spares read it through a fused put).
const GEMM_VARIANTS: &[(&str, &[&str])] = &[
    ("track", PUTS),
    ("track", PACKED_STORES),
    ("fused", FUSED_PUTS),
    ("watched", &["plain_windows"]),
    ("fused4", FUSED_PUTS4),
    ("watched4", &["plain_windows4"]),
];

pub const KERNELS: &[Kernel] = &[
    Kernel {
        file: "gemm.wgsl",
        operands: &["f32", "f16", "bf16"],
        variants: GEMM_VARIANTS,
    },
    Kernel {
        file: "gemm_coop.wgsl",
        operands: &["f16"],
        variants: GEMM_VARIANTS,
    },
    Kernel {
        file: "step.wgsl",
        operands: &[],
        variants: &[("", PUTS), ("", PACKED_STEPS)],
    },
    Kernel {
        file: "gather.wgsl",
        operands: &[],
        variants: &[("", &["word"])],
    },
    // The polled link's kernel (src/hostlink/polled.rs): its results are words.
    Kernel {
        file: "polled.wgsl",
        operands: &[],
        variants: &[("", &["word"])],
    },
    // Fused mode's spare workgroups as a pipeline of their own, beside the fused GEMM's dispatch
    // (core/src/lower/fused.rs, `SpareDispatch`): its epilogue and put, no operands.
    Kernel {
        file: "fused/spares.wgsl",
        operands: &[],
        variants: &[("fused", FUSED_PUTS), ("fused4", FUSED_PUTS4)],
    },
];

/// What every GEMM kernel shares (params, job table, tile lookup), composed after the epilogue.
pub const GEMM_SHARED: &str = "gemm/jobs.wgsl";

/// One composition: a kernel, its operand type (GEMM kernels), put and epilogue ("" for none).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Composition {
    pub kernel: &'static str,
    pub operands: Option<&'static str>,
    pub put: &'static str,
    pub epilogue: &'static str,
}

impl Composition {
    /// Its files under shaders/, in composition order.
    pub fn parts(&self) -> Vec<String> {
        // B's source: fused mode's packed B is bound in two windows, every other GEMM's in one.
        let packed = matches!(self.epilogue, "fused" | "watched" | "fused4" | "watched4");
        let mut v: Vec<String> = self
            .operands
            .iter()
            .flat_map(|o| {
                [
                    format!("operands/{o}.wgsl"),
                    if packed {
                        format!("fused/operands/{o}_b2.wgsl")
                    } else {
                        format!("operands/{o}_b.wgsl")
                    },
                ]
            })
            .collect();
        match packed_put(self.put) {
            Some((how, format)) => v.extend([
                format!("elements/{format}.wgsl"),
                "put/packed.wgsl".into(),
                format!("put/{how}_packed.wgsl"),
            ]),
            None => v.push(put_file(self.put)),
        }
        // A windowed put's semantics, whatever windows it writes through (its file says how), and
        // the loads of the two whose windows are u32 atomics.
        if let Some(kind) = windowed(self.put).filter(|&k| k != "plain") {
            v.push(format!("fused/put/{kind}.wgsl"));
            if matches!(kind, "store" | "cas") {
                let windows = &self.put[kind.len()..];
                v.push(format!("fused/put/words{windows}.wgsl"));
            }
        }
        // A step moves 16-byte units: an f32 put's is a vec4 through its `put4`.
        if self.kernel == "step.wgsl" && packed_put(self.put).is_none() {
            v.push("put/unit_f32.wgsl".into());
        }
        // A windowed put of 4-byte atomics takes its 16-byte forms element by element.
        if windowed(self.put).is_some_and(|k| !matches!(k, "coherent" | "plain")) {
            v.push("fused/put/by_element4.wgsl".into());
        }
        // The watched GEMM's epilogue is the tracker's, in fused mode's bindings.
        if matches!(self.epilogue, "watched" | "watched4") {
            v.push("epilogue/track.wgsl".into());
        }
        if !self.epilogue.is_empty() {
            v.push(epilogue_file(self.epilogue));
        }
        if self.operands.is_some() {
            v.push(GEMM_SHARED.into());
        }
        v.push(self.kernel.into());
        v
    }

    /// The pipeline-override sets the library creates this composition's pipelines with (one
    /// pipeline each): the tracked GEMM per tile, and where it stores plainly also untracked and on
    /// the persistent grid (src/gemm.rs); fused mode's GEMM with B in one window and in two, per tile
    /// and on the persistent grid, and its spare pipeline (one); its watched GEMM likewise, tracked; a step
    /// without and with its second source (src/steps.rs); one pipeline of defaults otherwise.
    pub fn overrides(&self) -> Vec<Vec<(&'static str, f64)>> {
        match (self.kernel, self.epilogue) {
            (_, "track") if self.put.starts_with("store") => vec![
                vec![("TRACK", 1.0), ("GRID", 0.0)],
                vec![("TRACK", 0.0), ("GRID", 0.0)],
                vec![("TRACK", 1.0), ("GRID", 1.0)],
            ],
            (_, "track") => vec![vec![("TRACK", 1.0), ("GRID", 0.0)]],
            ("fused/spares.wgsl", _) => vec![
                vec![("WATCH", 0.0), ("LAND", 0.0)],
                vec![("WATCH", 1.0), ("LAND", 0.0)],
                vec![("WATCH", 1.0), ("LAND", 1.0)],
            ],
            (_, "watched" | "watched4") => [0.0, 1.0]
                .into_iter()
                .flat_map(|grid| {
                    [0.0, 1.0]
                        .map(|split| vec![("TRACK", 1.0), ("B_WINDOWS", split), ("GRID", grid)])
                })
                .collect(),
            (_, "fused" | "fused4") => [0.0, 1.0]
                .into_iter()
                .flat_map(|grid| [0.0, 1.0].map(|split| vec![("B_WINDOWS", split), ("GRID", grid)]))
                .collect(),
            ("step.wgsl", _) => vec![vec![("ACC", 0.0)], vec![("ACC", 1.0)]],
            _ => vec![vec![]],
        }
    }
}

/// An f32 put's snippet under shaders/: fused mode's windowed puts (`NAME_windows`,
/// `NAME_windows4`) in fused/put/, every other in put/.
pub fn put_file(put: &str) -> String {
    if windowed(put).is_some() {
        format!("fused/put/{put}.wgsl")
    } else {
        format!("put/{put}.wgsl")
    }
}

/// An epilogue's snippet under shaders/: fused mode's ("fused", "watched", and their four-window
/// twins "fused4", "watched4") in fused/, the tracker's in epilogue/.
pub fn epilogue_file(epilogue: &str) -> String {
    match epilogue {
        "fused" | "fused4" => "fused/epilogue.wgsl".into(),
        "watched" | "watched4" => "fused/watched.wgsl".into(),
        other => format!("epilogue/{other}.wgsl"),
    }
}

/// A windowed put's kind, fused mode's (`KIND_windows`, `KIND_windows4`: "store_windows4" is
/// "store"); its semantics beside its windows are fused/put/KIND.wgsl, but the watched GEMM's plain
/// stores'. None for any other put.
fn windowed(put: &str) -> Option<&str> {
    put.strip_suffix("_windows")
        .or_else(|| put.strip_suffix("_windows4"))
}

/// A packed put's (how, element format): "store_f16" is ("store", "f16"); None for an f32 put.
pub fn packed_put(put: &str) -> Option<(&str, &str)> {
    let (how, format) = put.rsplit_once('_')?;
    matches!(format, "f16" | "bf16").then_some((how, format))
}

/// Every declared composition.
pub fn all() -> Vec<Composition> {
    let mut v = Vec::new();
    for k in KERNELS {
        let operands: Vec<Option<&'static str>> = if k.operands.is_empty() {
            vec![None]
        } else {
            k.operands.iter().map(|&o| Some(o)).collect()
        };
        for &o in &operands {
            for &(epilogue, puts) in k.variants {
                for &put in puts {
                    v.push(Composition {
                        kernel: k.file,
                        operands: o,
                        put,
                        epilogue,
                    });
                }
            }
        }
    }
    v
}
