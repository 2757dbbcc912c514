//! The tuner's cost model: a mode's time from the GEMM's time, the collective's and a cost per pass,
//! each measured (`t3 tune`) or estimated from the device's kind and the link's calibrated rate
//! (`t3 run` without a table), so that chunk counts are chosen for the shape, not fixed.
//!
//! With R ranks and c chunks per rank's shard, the output goes in R*c chunks. Sequential pays the
//! GEMM, then the collective, then a pass per chunk step. An overlapped mode pays the longer of the
//! two, plus the shorter one's share of a chunk (the first chunk's GEMM before anything can move,
//! or the last chunk's steps after the GEMM ends), plus a pass per chunk: more chunks hide more and
//! cost more passes, and the count that balances the two is the model's choice.

use serde::{Deserialize, Serialize};

use crate::config::host::HostGrain;
use crate::config::{Config, ModeKind, StepLead};
use crate::schedule::Order;
use crate::shapes::Dtype;

/// Chunk counts per rank the model and the tuner consider.
pub const CHUNKS: [usize; 5] = [1, 2, 4, 8, 16];

/// The model's inputs for one point, ms.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Costs {
    /// The GEMMs alone, as one device runs its ranks' share.
    pub gemm_ms: f64,
    /// The collective alone.
    pub comm_ms: f64,
    /// What one pass (one device: a dispatch group; several: a submission the host loop waits for)
    /// costs beyond its work.
    pub pass_ms: f64,
}

/// What the model assumes where nothing was measured on this device: rates of the device's kind.
/// They only rank chunk counts against each other (each a ratio of work to per-pass cost), so a
/// factor of two either way moves the choice by at most one step of [`CHUNKS`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Prior {
    /// GEMM rate, TFLOP/s.
    pub gemm_tflops: f64,
    /// One link's rate with every link of the collective busy, GB/s.
    pub link_gbps: f64,
    /// Cost of a pass, ms.
    pub pass_ms: f64,
}

impl Prior {
    /// The prior for a device of `kind`, GEMM operands of `dtype`, ranks over `devices` devices.
    /// Across devices a pass is a submission whose completion the host loop waits for (tens of
    /// microseconds to a few hundred on the H200s measured), and the link is the host's: with every
    /// link of a pair or a ring busy each device writes and reads host memory at once, which two
    /// H200s streamed at about 15 GB/s each way on 16 workgroups and 25 on 128 (BENCHMARKS.md, "Real
    /// GPUs"); the prior's 20 is the rate the chunk counts of the measured presets were chosen at,
    /// and within the factor of two that moves no choice. `link_gbps` is a calibrated rate where
    /// one is known.
    pub fn of(
        kind: Option<wgpu::DeviceType>,
        dtype: Dtype,
        devices: usize,
        link_gbps: Option<f64>,
    ) -> Self {
        let cpu = kind == Some(wgpu::DeviceType::Cpu);
        let gemm_tflops = match (cpu, dtype) {
            (true, _) => 1e-3,
            (false, Dtype::F32) => 30.0,
            (false, _) => 100.0,
        };
        let (link, pass_ms) = if devices > 1 {
            (20.0, 0.1)
        } else if cpu {
            (1.0, 0.05)
        } else {
            (1000.0, 0.01)
        };
        Prior {
            gemm_tflops,
            link_gbps: link_gbps
                .filter(|g| g.is_finite() && *g > 0.0)
                .unwrap_or(link),
            pass_ms,
        }
    }

    /// The costs of `c` on `devices` devices under this prior.
    pub fn costs(&self, c: &Config, devices: usize) -> Costs {
        let devices = devices.clamp(1, c.ranks.max(1));
        let gemm_ms = c.total_flops() / devices as f64 / (self.gemm_tflops * 1e12) * 1e3;
        // Each rank sends (R-1)/R of its output (in the type the steps move) once per
        // reduce-scatter or all-gather, the direct all-reduce all of it to each of R-1 peers;
        // every link moves at once.
        let r = c.ranks.max(1) as f64;
        let out = c.shape.m as f64 * c.shape.n as f64 * c.out_dtype.bytes() as f64;
        let bytes = out
            * (r - 1.0)
            * match c.collective {
                crate::schedule::Collective::AllReduce => 2.0 / r,
                crate::schedule::Collective::DirectAllReduce => 1.0,
                _ => 1.0 / r,
            };
        Costs {
            gemm_ms,
            comm_ms: bytes / (self.link_gbps * 1e9) * 1e3,
            pass_ms: self.pass_ms,
        }
    }
}

/// What the model sets on one GPU where neither a flag nor a table does, from the GEMM kernel's
/// kind: with a kernel whose workgroups fill an SM each (cooperative matrices), the steps run only
/// where GEMM work is not, so a persistent GEMM grid just below the multiprocessor count (`sms`,
/// where known) leaves them room beside it; with a SIMT kernel, whose workgroups share SMs with the
/// steps, a step lead of 0 (the steps first, no GEMM work held after them). The grid's measurements
/// in BENCHMARKS.md ("Tuning") give each its share. A CPU adapter keeps the flags' defaults. Returns
/// whether it set anything.
pub fn one_gpu_defaults(
    c: &mut Config,
    given: &super::knobs::Given,
    kind: wgpu::DeviceType,
    coop: bool,
    sms: Option<u32>,
) -> bool {
    if kind == wgpu::DeviceType::Cpu {
        return false;
    }
    match (coop, sms) {
        (true, Some(s)) if !given.gemm_grid && c.gemm_grid.is_none() => {
            c.gemm_grid = Some(grid_below(s));
            true
        }
        (false, _) if !given.step_lead && c.step_lead == StepLead::Auto => {
            c.step_lead = StepLead::Workgroups(0);
            true
        }
        _ => false,
    }
}

/// What the model sets where the ranks span `devices` devices and neither a flag nor a table does:
/// on four or more, host mode's submissions hold at most two chunks per rank instead of a stage.
/// A ring's stage there is a quarter of each GEMM or less, yet its chunks can land only in a
/// submission after their sender's completed; split in two, the first half's chunks cross while the
/// second half computes. On two devices a stage is best or within noise of it, and is kept (both in
/// BENCHMARKS.md, "Real GPUs"); three keep it too, unmeasured. A CPU adapter keeps the flags'
/// defaults. Returns whether it set anything (every mode's row then says `[model]`, though only
/// host mode reads the grain).
pub fn across_devices_defaults(
    c: &mut Config,
    given: &super::knobs::Given,
    kind: wgpu::DeviceType,
    devices: usize,
) -> bool {
    if kind == wgpu::DeviceType::Cpu || devices < 4 || given.host_grain || c.host.grain.is_some() {
        return false;
    }
    c.host.grain = Some(HostGrain::Chunks(2));
    true
}

/// Chunks per rank of fused mode's own configuration on one GPU ([`fused_defaults`]).
pub const FUSED_CHUNKS: usize = 4;

/// The least GEMM time of one stage of one rank in the chunk order (the rank's chunk j of every
/// shard: the device's GEMM time over ranks x chunks per rank), ms by the [`Prior`], at which fused
/// mode's own configuration on one GPU ([`fused_defaults`]) pays.
pub const FUSED_MIN_CHUNK_MS: f64 = 0.12;

/// Fused mode's own configuration on one GPU where neither a flag nor a table sets its chunks or
/// order: `c` at [`FUSED_CHUNKS`] chunks per rank (fewer where the shard has fewer rows) in the
/// GEMM's chunk order, where the collective takes that order and one rank's stage in it takes at
/// least [`FUSED_MIN_CHUNK_MS`] by the prior; None otherwise (fused then runs `c`, as the other modes do).
/// The chunk order makes every rank's chunk i before any chunk i+1, so the steps of a chunk start
/// under the GEMM and the tail after it is one chunk's, not a stage's; but each chunk costs the
/// persistent kernel its tracking and its pauses, which a short chunk does not repay. The threshold
/// lies between the shortest chunk that paid and the longest that did not in the exhaustive grids
/// of the presets on one H200 (BENCHMARKS.md, "Tuning"). The other modes keep `c`: there the chunk
/// order did not pay. A CPU adapter, or ranks over several devices, keep `c` too.
pub fn fused_defaults(
    c: &Config,
    given: &super::knobs::Given,
    kind: wgpu::DeviceType,
    devices: usize,
) -> Option<Config> {
    if kind == wgpu::DeviceType::Cpu
        || devices != 1
        || given.chunks
        || given.order
        || !Order::Chunk.fits(c.collective)
    {
        return None;
    }
    let chunks = FUSED_CHUNKS.min(max_chunks(c));
    let gemm_ms = Prior::of(Some(kind), c.dtype, 1, None).costs(c, 1).gemm_ms;
    let per_chunk = gemm_ms / (c.ranks.max(1) * chunks) as f64;
    if per_chunk < FUSED_MIN_CHUNK_MS {
        return None;
    }
    let own = Config {
        chunks,
        order: Order::Chunk,
        ..c.clone()
    };
    super::knobs::runs(&own, ModeKind::Fused)
        .is_ok()
        .then_some(own)
}

/// A persistent GEMM grid just below `sms` multiprocessors (room for the steps beside every GEMM
/// workgroup), a multiple of 4.
pub fn grid_below(sms: u32) -> u32 {
    ((sms - sms / 32) / 4 * 4).max(1)
}

/// The model's time for `mode` at `chunks` chunks per rank over `ranks` ranks, ms.
pub fn predict_ms(mode: ModeKind, costs: &Costs, ranks: usize, chunks: usize) -> f64 {
    let n = (ranks.max(1) * chunks.max(1)) as f64;
    let (g, c) = (costs.gemm_ms.max(0.0), costs.comm_ms.max(0.0));
    let passes = costs.pass_ms.max(0.0) * n;
    if mode == ModeKind::Sequential {
        g + c + passes
    } else {
        g.max(c) + g.min(c) / n + passes
    }
}

/// The largest chunk count per rank `c` can take: every chunk at least one row of each rank's shard.
pub fn max_chunks(c: &Config) -> usize {
    (c.shape.m / c.ranks.max(1)).max(1)
}

/// The chunk counts of [`CHUNKS`] that `c` can take, best first by the model for `mode`.
pub fn ranked_chunks(mode: ModeKind, costs: &Costs, c: &Config) -> Vec<usize> {
    let mut v: Vec<usize> = CHUNKS.into_iter().filter(|&n| n <= max_chunks(c)).collect();
    v.sort_by(|&a, &b| {
        predict_ms(mode, costs, c.ranks, a).total_cmp(&predict_ms(mode, costs, c.ranks, b))
    });
    v
}

/// The model's chunk count per rank for `mode` on `c` (ties: fewer chunks).
pub fn best_chunks(mode: ModeKind, costs: &Costs, c: &Config) -> usize {
    ranked_chunks(mode, costs, c).first().copied().unwrap_or(1)
}

/// `costs` with the pass cost fitted to a measured time `ms` of `mode` at `chunks` chunks (never
/// negative: a measured time under the model's floor says only that passes cost little).
pub fn fit_pass(mode: ModeKind, costs: &Costs, ranks: usize, chunks: usize, ms: f64) -> Costs {
    let n = (ranks.max(1) * chunks.max(1)) as f64;
    let floor = predict_ms(
        mode,
        &Costs {
            pass_ms: 0.0,
            ..*costs
        },
        ranks,
        chunks,
    );
    Costs {
        pass_ms: ((ms - floor) / n).max(0.0),
        ..*costs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn more_chunks_pay_until_passes_cost_more_than_they_hide() {
        let c = Costs {
            gemm_ms: 10.0,
            comm_ms: 8.0,
            pass_ms: 0.05,
        };
        // 2 ranks: 1 chunk hides half of 8 ms; 8 chunks cost 0.8 ms of passes and hide 7.5.
        let t = |n| predict_ms(ModeKind::Host, &c, 2, n);
        assert!(t(2) < t(1));
        let free = Costs { pass_ms: 0.0, ..c };
        assert!(predict_ms(ModeKind::Host, &free, 2, 16) < predict_ms(ModeKind::Host, &free, 2, 8));
        let dear = Costs { pass_ms: 5.0, ..c };
        assert!(predict_ms(ModeKind::Host, &dear, 2, 1) < predict_ms(ModeKind::Host, &dear, 2, 2));
        assert!(predict_ms(ModeKind::Sequential, &c, 2, 1) > t(1));
    }

    #[test]
    fn one_gpu_defaults_follow_the_kernel_and_yield_to_flags() {
        use super::super::knobs::Given;
        use crate::shapes::Shape;
        let base = Config::new(Shape::new(64, 64, 64).unwrap(), 4);
        let gpu = wgpu::DeviceType::DiscreteGpu;
        let none = Given::default();
        let mut c = base.clone();
        assert!(one_gpu_defaults(&mut c, &none, gpu, true, Some(132)));
        assert_eq!((c.gemm_grid, c.step_lead), (Some(128), StepLead::Auto));
        let mut c = base.clone();
        assert!(one_gpu_defaults(&mut c, &none, gpu, false, Some(132)));
        assert_eq!((c.gemm_grid, c.step_lead), (None, StepLead::Workgroups(0)));
        // A flag given, an unknown SM count or a CPU adapter: nothing changes.
        let grid = Given {
            gemm_grid: true,
            ..Given::default()
        };
        let lead = Given {
            step_lead: true,
            ..Given::default()
        };
        for (given, coop, sms, kind) in [
            (&grid, true, Some(132), gpu),
            (&lead, false, Some(132), gpu),
            (&none, true, None, gpu),
            (&none, false, Some(8), wgpu::DeviceType::Cpu),
        ] {
            let mut c = base.clone();
            assert!(!one_gpu_defaults(&mut c, given, kind, coop, sms));
            assert_eq!((c.gemm_grid, c.step_lead), (None, StepLead::Auto));
        }
        assert_eq!(grid_below(132), 128);
        assert_eq!(grid_below(1), 1);
    }

    #[test]
    fn four_devices_or_more_split_a_stage_in_two_unless_told() {
        use super::super::knobs::Given;
        use crate::shapes::Shape;
        let base = Config::new(Shape::new(64, 64, 64).unwrap(), 4);
        let gpu = wgpu::DeviceType::DiscreteGpu;
        let mut c = base.clone();
        assert!(across_devices_defaults(&mut c, &Given::default(), gpu, 4));
        assert_eq!(c.host.grain, Some(HostGrain::Chunks(2)));
        let told = Given {
            host_grain: true,
            ..Given::default()
        };
        let mut staged = base.clone();
        staged.host.grain = Some(HostGrain::Stage);
        for (given, devices, kind, config) in [
            (Given::default(), 2, gpu, &base),
            (Given::default(), 3, gpu, &base),
            (told, 4, gpu, &base),
            (Given::default(), 4, gpu, &staged),
            (Given::default(), 4, wgpu::DeviceType::Cpu, &base),
        ] {
            let mut c = config.clone();
            assert!(!across_devices_defaults(&mut c, &given, kind, devices));
            assert_eq!(c.host.grain, config.host.grain);
        }
    }

    #[test]
    fn fused_takes_the_chunk_order_on_one_gpu_where_its_chunks_are_long() {
        use super::super::knobs::Given;
        use crate::schedule::Collective;
        use crate::shapes::Shape;
        let gpu = wgpu::DeviceType::DiscreteGpu;
        let none = Given::default();
        // Per rank M x N x K, ranks, operands: the presets' shapes.
        let point = |n, k, ranks, dtype| Config {
            dtype,
            ..Config::new(Shape::new(8192, n, k).unwrap(), ranks)
        };
        let (megagpt2_tp8, tnlg_tp8) = ((3072, 384, 8), (4256, 532, 8));
        let (tnlg_tp4, tnlg_tp2) = ((4256, 1064, 4), (4256, 2128, 2));
        let per_chunk = |c: &Config| {
            Prior::of(Some(gpu), c.dtype, 1, None).costs(c, 1).gemm_ms / (c.ranks * 4) as f64
        };
        // Shapes whose stages are past the threshold.
        for ((n, k, r), dtype) in [
            (megagpt2_tp8, Dtype::F32),
            (tnlg_tp8, Dtype::F32),
            (tnlg_tp4, Dtype::F16),
            (tnlg_tp4, Dtype::F32),
            (tnlg_tp2, Dtype::F16),
            (tnlg_tp2, Dtype::F32),
        ] {
            let c = point(n, k, r, dtype);
            assert!(per_chunk(&c) > FUSED_MIN_CHUNK_MS, "{}", per_chunk(&c));
            let own = fused_defaults(&c, &none, gpu, 1).expect("fused's own configuration");
            assert_eq!((own.chunks, own.order), (4, Order::Chunk));
            // Nothing else moves.
            let back = Config {
                chunks: c.chunks,
                order: c.order,
                ..own.clone()
            };
            assert_eq!(
                serde_json::to_string(&back).unwrap(),
                serde_json::to_string(&c).unwrap()
            );
            // On the ring's all-reduce too, the other collective that takes the order.
            let all_reduce = Config {
                collective: Collective::AllReduce,
                ..c.clone()
            };
            assert!(fused_defaults(&all_reduce, &none, gpu, 1).is_some());
        }
        // Shapes whose stages are short of it.
        for (n, k, r) in [megagpt2_tp8, tnlg_tp8] {
            let c = point(n, k, r, Dtype::F16);
            assert!(per_chunk(&c) < FUSED_MIN_CHUNK_MS, "{}", per_chunk(&c));
            assert!(fused_defaults(&c, &none, gpu, 1).is_none());
        }
        // Just either side of the threshold (the prior's time is linear in K).
        let probe = point(4096, 1024, 4, Dtype::F16);
        let k_at = 1024.0 * FUSED_MIN_CHUNK_MS / per_chunk(&probe);
        let above = point(4096, (k_at * 1.02).ceil() as usize, 4, Dtype::F16);
        let below = point(4096, (k_at * 0.98).floor() as usize, 4, Dtype::F16);
        assert!(fused_defaults(&above, &none, gpu, 1).is_some());
        assert!(fused_defaults(&below, &none, gpu, 1).is_none());
        // It yields to `--chunks` or `--order` given, a CPU adapter, several devices and a
        // collective the chunk order does not fit.
        let c = point(tnlg_tp2.0, tnlg_tp2.1, tnlg_tp2.2, Dtype::F32);
        let chunks = Given {
            chunks: true,
            ..Given::default()
        };
        let order = Given {
            order: true,
            ..Given::default()
        };
        assert!(fused_defaults(&c, &chunks, gpu, 1).is_none());
        assert!(fused_defaults(&c, &order, gpu, 1).is_none());
        assert!(fused_defaults(&c, &none, wgpu::DeviceType::Cpu, 1).is_none());
        assert!(fused_defaults(&c, &none, gpu, 2).is_none());
        for collective in [Collective::AllGather, Collective::DirectReduceScatter] {
            let other = Config {
                collective,
                ..c.clone()
            };
            assert!(!Order::Chunk.fits(collective));
            assert!(fused_defaults(&other, &none, gpu, 1).is_none());
        }
        // A shard of two rows takes two chunks per rank; of one row, none in the chunk order.
        let thin = |m| Config::new(Shape::new(m, 65536, 65536).unwrap(), 8);
        let own = fused_defaults(&thin(16), &none, gpu, 1).expect("two chunks per rank");
        assert_eq!((own.chunks, own.order), (2, Order::Chunk));
        assert!(fused_defaults(&thin(8), &none, gpu, 1).is_none());
    }

    #[test]
    fn the_collective_moves_outputs_in_the_type_the_steps_move() {
        use crate::shapes::Shape;
        let mut c = Config::new(Shape::new(8192, 4256, 2128).unwrap(), 2);
        c.collective = crate::schedule::Collective::ReduceScatter;
        let prior = Prior::of(None, Dtype::F16, 2, Some(25.0));
        // Half of each rank's 8192 x 4256 outputs cross: 69.7 MB in f32 at 25 GB/s.
        let f32_ms = prior.costs(&c, 2).comm_ms;
        assert!((f32_ms - 8192.0 * 4256.0 * 4.0 / 2.0 / 25e9 * 1e3).abs() < 1e-9);
        c.out_dtype = Dtype::F16;
        assert!((prior.costs(&c, 2).comm_ms - f32_ms / 2.0).abs() < 1e-9);
        c.collective = crate::schedule::Collective::AllReduce;
        assert!((prior.costs(&c, 2).comm_ms - f32_ms).abs() < 1e-9);
        // At two ranks the direct all-reduce moves the ring's bytes.
        c.collective = crate::schedule::Collective::DirectAllReduce;
        assert!((prior.costs(&c, 2).comm_ms - f32_ms).abs() < 1e-9);
    }

    #[test]
    fn the_fitted_pass_cost_reproduces_the_measurement() {
        let c = Costs {
            gemm_ms: 4.0,
            comm_ms: 3.0,
            pass_ms: 0.0,
        };
        let f = fit_pass(ModeKind::Encoded, &c, 4, 2, 6.0);
        assert!((predict_ms(ModeKind::Encoded, &f, 4, 2) - 6.0).abs() < 1e-9);
        assert_eq!(fit_pass(ModeKind::Encoded, &c, 4, 2, 1.0).pass_ms, 0.0);
    }
}
