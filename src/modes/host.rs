//! Host mode: the host-side trigger loop. GEMM work goes out stage by stage; after each submission
//! completes the host reads every tracker counter back and submits, with the next stage's GEMM, each
//! step whose inputs' counters have reached their marks: T3's threshold (local tiles and the incoming
//! update) checked by the CPU. wgpu cannot map a buffer while GPU work uses it, so the host sees the
//! counters only at submission grain; the loop records each trigger's latency.

use std::collections::HashMap;
use std::time::Instant;

use super::{grain, Mode, Run, System};
use crate::error::{Error, Result};
use crate::gemm::StoreMode;
use crate::plan::Kind;
use crate::timeline::{Event, EventKind, Lane};

pub struct Host;

impl Mode for Host {
    fn name(&self) -> &'static str {
        "host"
    }

    fn skip_reason(&self, _sys: &System) -> Option<String> {
        None
    }

    fn run(&self, sys: &System) -> Result<Run> {
        let gpu = sys.gpu;
        let plan = &sys.plan;
        let n_locs = sys.ranks.loc_order.len();
        let staging = gpu.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("host trigger readback"),
            size: (n_locs * 4).max(4) as u64,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        sys.timer.reset();
        let stages = sys.schedule.gemm_stages();
        let mut counters: HashMap<_, u32> = HashMap::new();
        let mut submitted = vec![false; plan.ops.len()];
        let mut pass_of = vec![usize::MAX; plan.ops.len()];
        let mut passes: Vec<Vec<usize>> = Vec::new();
        // (op, host µs at submission) for every triggered step.
        let mut triggers: Vec<(usize, f64)> = Vec::new();
        let mut host_ends: Vec<f64> = Vec::new();
        let mut t0: Option<Instant> = None;
        let mut stage = 0;
        let mut first = true;
        while submitted.iter().any(|s| !s) {
            let mut ops: Vec<usize> = sys
                .gemm_ops()
                .filter(|&i| plan.ops[i].stage == stage && stage < stages)
                .collect();
            stage += 1;
            let now_us = t0.map(|t| t.elapsed().as_secs_f64() * 1e6).unwrap_or(0.0);
            for i in sys.step_ops() {
                let ready = !submitted[i]
                    && plan.ops[i].deps.iter().all(|&d| {
                        counters.get(&plan.ops[d].dst).copied().unwrap_or(0) >= plan.ops[d].mark
                    });
                if ready {
                    ops.push(i);
                    triggers.push((i, now_us));
                }
            }
            if ops.is_empty() {
                if stage <= stages {
                    continue;
                }
                return Err(Error::Gpu {
                    during: "host trigger loop".into(),
                    message: format!(
                        "no step became ready but {} ops remain; trackers {:?}",
                        submitted.iter().filter(|s| !**s).count(),
                        counters
                    ),
                });
            }
            let mut enc = gpu
                .device
                .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                    label: Some("host trigger submission"),
                });
            if first {
                sys.ranks.reset_trackers(&mut enc);
                first = false;
            }
            {
                let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: Some("host trigger pass"),
                    timestamp_writes: sys.timer.writes(),
                });
                sys.encode_pass(&mut pass, &ops, StoreMode::Store);
                for &i in &ops {
                    submitted[i] = true;
                    pass_of[i] = passes.len();
                }
            }
            sys.ranks.encode_counter_readback(&mut enc, &staging);
            let idx = gpu.submit("host trigger submission", vec![enc.finish()])?;
            t0.get_or_insert_with(Instant::now);
            let bytes = gpu.map_read("tracker counters", &staging, idx, (n_locs * 4) as u64)?;
            host_ends.push(t0.unwrap().elapsed().as_secs_f64() * 1e6);
            let vals: Vec<u32> = bytemuck::pod_collect_to_vec(&bytes);
            for (l, v) in sys.ranks.loc_order.iter().zip(&vals) {
                counters.insert(*l, *v);
            }
            passes.push(ops);
        }
        let mut t = sys.timer.read(gpu)?;
        let gpu_clock = t.len() == passes.len();
        if !gpu_clock {
            // No timestamps: a pass spans from the previous completion to its own, on the host clock.
            t = host_ends
                .iter()
                .enumerate()
                .map(|(k, &e)| (if k == 0 { 0.0 } else { host_ends[k - 1] }, e))
                .collect();
        }
        let grain = if gpu_clock {
            grain(sys)
        } else {
            "submission (host clock)".into()
        };
        let mut run = Run::from_passes(sys, self.name(), grain, &passes, &t);
        // The host clock is aligned to the GPU clock once per run, at the first submission: host time 0
        // is taken when that submission returns and GPU time 0 is its pass's first timestamp. The
        // offset between the two (launch delay) is not measured, so a latency is good to about one
        // submission's launch time, either way; values below zero are clamped.
        let mut lat = Vec::new();
        for &(i, at) in &triggers {
            let ready_at = plan.ops[i]
                .deps
                .iter()
                .map(|&d| t[pass_of[d]].1)
                .fold(0.0, f64::max);
            lat.push((at - ready_at).max(0.0));
            let op = &plan.ops[i];
            let src = match op.kind {
                Kind::Copy { src } | Kind::Reduce { src } => src.rank,
                Kind::Gemm => op.dst.rank,
            };
            run.timeline.events.push(Event {
                lane: Lane::Host,
                kind: EventKind::Trigger,
                name: format!("trigger r{src}->r{} c{}", op.dst.rank, op.dst.chunk),
                rank: op.dst.rank,
                chunk: Some(op.dst.chunk),
                stage: Some(op.stage),
                start_us: ready_at,
                end_us: at.max(ready_at),
            });
        }
        run.trigger_latency_us = lat;
        Ok(run)
    }
}
