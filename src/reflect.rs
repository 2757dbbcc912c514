//! What build.rs reflected from the composed shaders with naga: every kernel's bindings and
//! workgroup memory, the layouts of the structs and the constants the host mirrors, and every
//! shader file's source.
//! The host reads its bind group layouts and workgroup limits from here instead of restating them.

/// How a kernel binds one buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    Uniform,
    Read,
    ReadWrite,
}

/// One (kernel, epilogue)'s interface: its bindings 0.. in order and its workgroup memory.
#[derive(Clone, Copy, Debug)]
pub struct Interface {
    pub kernel: &'static str,
    pub epilogue: &'static str,
    pub bindings: &'static [Access],
    /// Each binding's role: the name the WGSL gives its buffer (an `unused_` prefix dropped).
    pub roles: &'static [&'static str],
    pub workgroup_bytes: u32,
    /// A GEMM kernel's output tile rows and columns and its K slice (`const BM`, `BN`, `BK`); zeros
    /// for other kernels.
    pub tile: [u32; 3],
}

/// A WGSL struct's size and member offsets.
#[derive(Clone, Copy, Debug)]
pub struct StructLayout {
    pub name: &'static str,
    pub size: u32,
    pub members: &'static [(&'static str, u32)],
}

include!(concat!(env!("OUT_DIR"), "/reflected.rs"));

/// The interface of `kernel` (file under shaders/) with `epilogue` ("" for none). Every pair the
/// library asks for is declared in src/compositions.rs; build.rs fails otherwise.
pub fn interface(kernel: &str, epilogue: &str) -> Option<&'static Interface> {
    INTERFACES
        .iter()
        .find(|i| i.kernel == kernel && i.epilogue == epilogue)
}

/// The value of `const name: u32` in kernel `kernel` (file under shaders/), where build.rs reflects
/// it (its `SHARED_CONSTANTS`).
pub fn constant(kernel: &str, name: &str) -> Option<u32> {
    CONSTANTS
        .iter()
        .find(|c| c.0 == kernel && c.1 == name)
        .map(|c| c.2)
}

/// The source of shader file `path` (under shaders/).
pub fn source(path: &str) -> Option<&'static str> {
    SOURCES.iter().find(|s| s.0 == path).map(|s| s.1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every composition binds its buffers in the roles the host binds them in: the WGSL's names
    /// (reflected by naga) against each group's [`crate::lower::Group::roles`], which every binding
    /// the lowering or a standalone kernel makes is checked against. A swap of two buffers of one
    /// type, on either side, fails here or there.
    #[test]
    fn every_kernel_binds_its_buffers_in_its_groups_roles() {
        use crate::lower::Group;
        for i in INTERFACES {
            let roles = match (i.kernel, i.epilogue) {
                ("gather.wgsl", _) => Group::Gather.roles(),
                ("step.wgsl", _) => Group::Step.roles(),
                ("polled.wgsl", _) => &crate::hostlink::polled::ROLES[..],
                (_, "track") => Group::Gemm.roles(),
                (_, "fused" | "watched") => Group::Fused.roles(),
                (_, "fused4" | "watched4") => Group::Fused4.roles(),
                other => panic!("{other:?}: a composition of no bind group"),
            };
            assert_eq!(i.roles, roles, "{} + {}", i.kernel, i.epilogue);
            assert_eq!(i.roles.len(), i.bindings.len());
        }
    }

    fn layout(name: &str) -> &'static StructLayout {
        STRUCTS
            .iter()
            .find(|s| s.name == name)
            .unwrap_or_else(|| panic!("no struct {name} reflected"))
    }

    /// Asserts that Rust struct `$t` has WGSL struct `$name`'s size, and each named field its
    /// member's offset; every WGSL member but padding must be named.
    macro_rules! same_layout {
        ($t:ty, $name:literal, [$($f:ident),* $(,)?]) => {{
            let l = layout($name);
            assert_eq!(std::mem::size_of::<$t>() as u32, l.size, "{} size", $name);
            let named = [$(stringify!($f)),*];
            for (m, _) in l.members {
                assert!(
                    m.starts_with('_') || named.contains(m),
                    "{}: WGSL member {m} has no Rust twin",
                    $name
                );
            }
            $(
                let wgsl = l.members.iter().find(|m| m.0 == stringify!($f)).map(|m| m.1);
                assert_eq!(
                    Some(std::mem::offset_of!($t, $f) as u32),
                    wgsl,
                    "{}.{}",
                    $name,
                    stringify!($f)
                );
            )*
        }};
    }

    #[test]
    fn host_structs_match_their_wgsl_layouts() {
        use crate::gemm::{GemmParams, Job};
        use crate::lower::{Forward, ForwardHeader};
        use crate::steps::StepParams;
        same_layout!(
            GemmParams,
            "GemmParams",
            [
                m, n, k, lda, ldb, ldc, tiles_n, job_base, n_jobs, total_wg, dispatch_x, b_split,
                grid_wg, c_split
            ]
        );
        same_layout!(
            Job,
            "Job",
            [
                row0, row1, wg_start, counter, a_off, b_off, c_off, a_row_base, c_row_base, land,
                b_window
            ]
        );
        same_layout!(
            StepParams,
            "StepParams",
            [
                len4, src_off4, dst_off4, n_wg, dispatch_x, counter, done_slot, bump, has_acc,
                spins, mark, status4
            ]
        );
        same_layout!(
            Forward,
            "Forward",
            [
                off, len, at0, to0, op0, pc0, at1, to1, op1, pc1, g0, g1, land, into, tiles,
                inboxes
            ]
        );
        same_layout!(
            ForwardHeader,
            "ForwardHeader",
            [
                pieces,
                polls,
                chunks_per_rank,
                window,
                helping,
                pause,
                bm,
                bn,
                cols,
                inboxes,
                tile_group,
                log_at
            ]
        );
        same_layout!(crate::gather::GatherParams, "GatherParams", [count, at]);
        same_layout!(
            crate::hostlink::polled::PolledParams,
            "PolledParams",
            [lanes, slots, slices, words, role, spins, tag]
        );
    }

    /// The host's spare width is the shader's.
    #[test]
    fn spares_are_as_wide_as_the_host_counts() {
        assert_eq!(
            constant("fused/spares.wgsl", "INVOCATIONS"),
            Some(crate::lower::SPARE_INVOCATIONS)
        );
    }

    /// Fused mode's counters buffer is laid out as the host sizes it, in every kernel that
    /// composes the fused epilogue.
    #[test]
    fn counter_layout_matches_the_fused_epilogue() {
        use crate::lower::counters::*;
        let host = [
            ("CLAIMS_NC", CLAIMS_NC),
            ("DONE_NC", DONE_NC),
            ("ARMED_NC", ARMED_NC),
            ("TAIL_NC", TAIL_NC),
            ("ALIVE_PAST_TAIL", ALIVE_PAST_TAIL),
            ("LIVE_PAST_TAIL", LIVE_PAST_TAIL),
            ("PAUSE_SLOTS", PAUSE_SLOTS),
            ("PAUSE_STRIDE", PAUSE_STRIDE),
        ];
        for kernel in ["gemm.wgsl", "gemm_coop.wgsl", "fused/spares.wgsl"] {
            for (name, value) in host {
                assert_eq!(constant(kernel, name), Some(value), "{kernel}: {name}");
            }
        }
    }

    /// The host's tile math (thresholds, padding) agrees with every GEMM kernel's tile.
    #[test]
    fn host_tiles_fit_every_gemm_kernel() {
        use crate::gemm::{K_SLICE, TILE_N_MAX};
        let gemms: Vec<[u32; 3]> = INTERFACES
            .iter()
            .map(|i| i.tile)
            .filter(|t| t[0] > 0)
            .collect();
        assert!(gemms.len() >= 2);
        for [bm, bn, bk] in gemms {
            assert_eq!(bm as usize, crate::shapes::TILE, "output tile rows (BM)");
            assert_eq!(
                TILE_N_MAX % bn as usize,
                0,
                "N padding covers whole BN tiles"
            );
            assert_eq!(K_SLICE % bk as usize, 0, "K padding covers whole BK slices");
        }
    }

    #[test]
    fn interfaces_are_what_the_kernels_bind() {
        use Access::*;
        let gemm = [ReadWrite, Uniform, Read, Read, ReadWrite, Read];
        for k in ["gemm.wgsl", "gemm_coop.wgsl"] {
            assert_eq!(interface(k, "track").unwrap().bindings, gemm);
            assert_eq!(
                interface(k, "fused").unwrap().bindings,
                // The forward table, then the second windows of the packed output and B.
                [&gemm[..], &[Read, ReadWrite, Read]].concat()
            );
            // The watched GEMM binds what the fused one binds (one layout for it and the spares).
            assert_eq!(
                interface(k, "watched").unwrap().bindings,
                interface(k, "fused").unwrap().bindings
            );
        }
        let step = interface("step.wgsl", "").unwrap();
        assert_eq!(step.bindings, [ReadWrite, Uniform, Read, ReadWrite, Read]);
        // The gathered counters, then seven trackers: eight storage buffers, WebGPU's default.
        let gather = interface("gather.wgsl", "").unwrap();
        assert_eq!(
            gather.bindings,
            [&[ReadWrite, Uniform][..], &[Read; 7]].concat()
        );
        // The cooperative-matrix GEMM's A, B and output scratch (eight 16x36 f32 strips) plus the
        // job index and workgroup (`tile_landed`): 44.5 KiB, under the 48 KiB the H200 offers.
        let coop = interface("gemm_coop.wgsl", "track").unwrap();
        assert_eq!(
            coop.workgroup_bytes,
            5120 * 2 + 8448 * 2 + 8 * 16 * 36 * 4 + 4 + 4
        );
        assert_eq!(interface("gemm.wgsl", "track").unwrap().tile, [128, 128, 8]);
        assert_eq!(coop.tile, [128, 256, 32]);
        assert!(source("put/cas.wgsl")
            .unwrap()
            .contains("atomicCompareExchangeWeak"));
    }
}
