//! How a kernel writes its destination element: the put variants lowering picks between and the
//! shader snippets (shaders/put/; fused mode's windowed ones in shaders/fused/put/) they compose.

use crate::shapes::Dtype;

/// How a kernel writes its destination element.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Put {
    /// Plain store.
    Store,
    /// Read-modify-write add; safe where wgpu's barriers keep other writers out (all but fused).
    Add,
    /// f32 atomic add (SHADER_FLOAT32_ATOMIC): update semantics.
    Atomic,
    /// Compare-exchange f32 add: update semantics without SHADER_FLOAT32_ATOMIC.
    Cas,
    /// [`Put::Cas`] into an output bound as two windows of one buffer (fused mode's packed output).
    CasWindows,
    /// [`Put::Atomic`] into two windows, likewise.
    AtomicWindows,
    /// Plain stores (relaxed atomic stores) into two windows; fused mode's gates make every write of
    /// a chunk exclusive, so its reduces are a load, an add and a store.
    StoreWindows,
    /// Plain 16-byte stores into two `@coherent` windows (MEMORY_DECORATION_COHERENT), likewise.
    CoherentWindows,
    /// Plain (non-atomic) stores into two windows, never a load: the watched GEMM's (fused mode's
    /// tracker alone, `--fused trigger=spares`), whose spares read what it stored through theirs.
    PlainWindows,
    /// A windowed put above into four windows of two buffers (`NAME_windows4`): fused mode's packed
    /// output where it passes what two windows of one buffer hold ([`Put::four`]).
    Four(Windowed),
    /// A u32 word as it is (the gather kernel's counters).
    Word,
    /// Plain store of 2-byte outputs of this type, two to a word (shaders/put/store_packed.wgsl): a
    /// GEMM rounds each element once, a step copies the bits (rounding once where it adds a
    /// forwarded partial sum). [`Put::store`] picks it.
    StorePacked(Dtype),
    /// Read-modify-write add of 2-byte outputs: widened to f32, added, rounded once per step
    /// (shaders/put/add_packed.wgsl). [`Put::add`] picks it.
    AddPacked(Dtype),
}

/// Fused mode's windowed puts, as [`Put::Four`] names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Windowed {
    Cas,
    Atomic,
    Store,
    Coherent,
    Plain,
}

impl Put {
    /// Every put without a parameter, in declaration order.
    pub const ALL: [Put; 10] = [
        Put::Store,
        Put::Add,
        Put::Atomic,
        Put::Cas,
        Put::CasWindows,
        Put::AtomicWindows,
        Put::StoreWindows,
        Put::CoherentWindows,
        Put::PlainWindows,
        Put::Word,
    ];

    /// Its snippet's name (shaders/put/NAME.wgsl; a windowed put's shaders/fused/put/NAME.wgsl).
    pub fn name(self) -> &'static str {
        match self {
            Put::Store => "store",
            Put::Add => "add",
            Put::Atomic => "atomic",
            Put::Cas => "cas",
            Put::CasWindows => "cas_windows",
            Put::AtomicWindows => "atomic_windows",
            Put::StoreWindows => "store_windows",
            Put::CoherentWindows => "coherent_windows",
            Put::PlainWindows => "plain_windows",
            Put::Four(Windowed::Cas) => "cas_windows4",
            Put::Four(Windowed::Atomic) => "atomic_windows4",
            Put::Four(Windowed::Store) => "store_windows4",
            Put::Four(Windowed::Coherent) => "coherent_windows4",
            Put::Four(Windowed::Plain) => "plain_windows4",
            Put::Word => "word",
            Put::StorePacked(Dtype::F16) => "store_f16",
            Put::StorePacked(Dtype::Bf16) => "store_bf16",
            Put::AddPacked(Dtype::F16) => "add_f16",
            Put::AddPacked(Dtype::Bf16) => "add_bf16",
            // f32 outputs are the plain puts' (what `store` and `add` give).
            Put::StorePacked(Dtype::F32) => "store",
            Put::AddPacked(Dtype::F32) => "add",
        }
    }

    /// This windowed put into four windows of two buffers (itself where it is one already); None
    /// for a put of one binding.
    pub fn four(self) -> Option<Put> {
        let w = match self {
            Put::CasWindows => Windowed::Cas,
            Put::AtomicWindows => Windowed::Atomic,
            Put::StoreWindows => Windowed::Store,
            Put::CoherentWindows => Windowed::Coherent,
            Put::PlainWindows => Windowed::Plain,
            Put::Four(w) => w,
            _ => return None,
        };
        Some(Put::Four(w))
    }

    /// Plain store of outputs of type `out`.
    pub fn store(out: Dtype) -> Put {
        match out {
            Dtype::F32 => Put::Store,
            half => Put::StorePacked(half),
        }
    }

    /// Read-modify-write add into outputs of type `out`.
    pub fn add(out: Dtype) -> Put {
        match out {
            Dtype::F32 => Put::Add,
            half => Put::AddPacked(half),
        }
    }
}
