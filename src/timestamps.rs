//! GPU timestamps at compute-pass boundaries: the one timer of the modes, the calibrations, the
//! standalone tracked GEMM and the benches. Absent where the adapter has no TIMESTAMP_QUERY (or the
//! figure is defined on the host clock); the host clock then stands in, written once here
//! ([`time_series`], [`host_spans`]).
//! The timed submission resolves its own queries, so reading them costs a map, not a round trip.

use std::time::Duration;
use web_time::Instant;

use crate::error::{Error, Result};
use crate::gpu::Gpu;

/// The query set and the two buffers its values pass through, made once per timer.
struct GpuSide {
    set: wgpu::QuerySet,
    /// Where the queries resolve (QUERY_RESOLVE cannot be mapped).
    resolve: wgpu::Buffer,
    /// The resolved values' copy the host maps.
    readback: wgpu::Buffer,
}

/// Queries per 256 bytes: a resolve must start at a 256-byte offset of its buffer.
const QUERIES_PER_ALIGN: u32 =
    (wgpu::QUERY_RESOLVE_BUFFER_ALIGNMENT / wgpu::QUERY_SIZE as u64) as u32;

/// A query set of begin/end pairs, one pair per timed pass. The caller encodes the resolve
/// ([`Timestamps::encode_resolve`]) into the submission that ran the passes, so reading them
/// ([`Timestamps::ticks`]) maps a buffer that submission filled: no submission of its own.
pub struct Timestamps {
    gpu_side: Option<GpuSide>,
    /// Pairs the query set holds.
    cap: u32,
    /// Pairs handed out since the last [`Timestamps::reset`].
    next: u32,
    /// Pairs an encoded resolve has copied to the readback buffer since the reset.
    resolved: u32,
    /// Whether every pass asked for since the reset got its pair.
    covered: bool,
    period_ns: f64,
}

impl Timestamps {
    /// A timer for up to `passes` passes between reads (clamped to what one query set holds).
    pub fn new(gpu: &Gpu, passes: u32) -> Self {
        if !gpu.has(wgpu::Features::TIMESTAMP_QUERY) {
            return Self::host_clock();
        }
        let cap = passes.clamp(1, wgpu::QUERY_SET_MAX_QUERIES / 2);
        let set = gpu.device.create_query_set(&wgpu::QuerySetDescriptor {
            label: Some("pass timestamps"),
            ty: wgpu::QueryType::Timestamp,
            count: 2 * cap,
        });
        let bytes = (u64::from(cap) * 2 * wgpu::QUERY_SIZE as u64).next_multiple_of(256);
        let buffer = |label, usage| {
            gpu.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: bytes,
                usage,
                mapped_at_creation: false,
            })
        };
        let resolve = buffer(
            "timestamp resolve",
            wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
        );
        let readback = buffer(
            "timestamp readback",
            wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        );
        Timestamps {
            gpu_side: Some(GpuSide {
                set,
                resolve,
                readback,
            }),
            cap,
            next: 0,
            resolved: 0,
            covered: true,
            period_ns: f64::from(gpu.queue.get_timestamp_period()),
        }
    }

    /// A timer that never timestamps: [`time_series`] then runs each run alone on the host clock.
    /// For figures defined as submit to completion (the host link's calibration) and for work that is
    /// run, not timed (the standalone tracked GEMM's checks): no query set is made.
    pub fn host_clock() -> Self {
        Timestamps {
            gpu_side: None,
            cap: 0,
            next: 0,
            resolved: 0,
            covered: false,
            period_ns: 0.0,
        }
    }

    /// What a series on this timer is timed by, as tables name it.
    pub fn clock(&self) -> &'static str {
        if self.gpu_clock() {
            "gpu timestamps"
        } else {
            "host clock"
        }
    }

    /// Whether passes get GPU timestamps at all.
    pub fn gpu_clock(&self) -> bool {
        self.gpu_side.is_some()
    }

    /// Starts a new series: pass numbering restarts.
    pub fn reset(&mut self) {
        self.next = 0;
        self.resolved = 0;
        self.covered = self.gpu_side.is_some();
    }

    /// Whether every pass since the reset was timestamped (false once the query set ran out).
    pub fn covered(&self) -> bool {
        self.covered
    }

    /// Timestamp writes for the next pass; None (and the series no longer covered) once the query
    /// set is full, or always without timestamps.
    pub fn pass(&mut self) -> Option<wgpu::ComputePassTimestampWrites<'_>> {
        let set = &self.gpu_side.as_ref()?.set;
        if self.next == self.cap {
            self.covered = false;
            return None;
        }
        let i = 2 * self.next;
        self.next += 1;
        Some(wgpu::ComputePassTimestampWrites {
            query_set: set,
            beginning_of_pass_write_index: Some(i),
            end_of_pass_write_index: Some(i + 1),
        })
    }

    /// Encodes, after the passes `enc` holds, the resolve of the pairs handed out since the last
    /// resolve and their copy to the buffer [`Timestamps::ticks`] maps. Nothing where every pair is
    /// resolved already or there are no timestamps. A series of several submissions encodes it in
    /// each (the executor does: it cannot tell which submission of a series is the last): each
    /// resolves only its own passes (from the 256-byte boundary before them), so the buffer holds
    /// every pass since the reset once the last completes, at a cost that does not grow with the
    /// series.
    pub fn encode_resolve(&mut self, enc: &mut wgpu::CommandEncoder) {
        let Some(side) = &self.gpu_side else {
            return;
        };
        if self.resolved == self.next {
            return;
        }
        let from = (2 * self.resolved) / QUERIES_PER_ALIGN * QUERIES_PER_ALIGN;
        let to = 2 * self.next;
        let offset = u64::from(from) * wgpu::QUERY_SIZE as u64;
        let bytes = u64::from(to - from) * wgpu::QUERY_SIZE as u64;
        enc.resolve_query_set(&side.set, from..to, &side.resolve, offset);
        enc.copy_buffer_to_buffer(&side.resolve, offset, &side.readback, offset, bytes);
        self.resolved = self.next;
    }

    /// Every timed pass's (begin, end) in ticks since the reset, from the buffer the submissions'
    /// resolves filled: one map, bounded by the device's timeout (it waits for them to complete if
    /// the caller has not). Passes timed after the last [`Timestamps::encode_resolve`] cost a
    /// submission that resolves them all first, on every call (readers hold the timer shared):
    /// callers encode the resolve instead.
    pub fn ticks(&self, gpu: &Gpu) -> Result<Vec<(u64, u64)>> {
        let Some(side) = &self.gpu_side else {
            return Ok(vec![]);
        };
        if self.next == 0 {
            return Ok(vec![]);
        }
        let bytes = u64::from(2 * self.next) * wgpu::QUERY_SIZE as u64;
        if self.resolved < self.next {
            let mut enc = gpu.device.create_command_encoder(&Default::default());
            enc.resolve_query_set(&side.set, 0..2 * self.next, &side.resolve, 0);
            enc.copy_buffer_to_buffer(&side.resolve, 0, &side.readback, 0, bytes);
            gpu.submit("resolving timestamps", vec![enc.finish()])?;
        }
        let pending = gpu.map_owned("timestamps", &side.readback, bytes);
        let bytes = gpu.await_read(pending, Instant::now() + gpu.timeout)?;
        let ticks: Vec<u64> = bytemuck::pod_collect_to_vec(&bytes);
        Ok(ticks.chunks_exact(2).map(|p| (p[0], p[1])).collect())
    }

    /// Every timed pass's (begin, end) in µs from the first begin (an end never before its begin).
    pub fn spans_us(&self, gpu: &Gpu) -> Result<Vec<(f64, f64)>> {
        let ticks = self.ticks(gpu)?;
        let t0 = ticks.first().map_or(0, |t| t.0);
        let us = |t: u64| self.us(t.saturating_sub(t0));
        Ok(ticks
            .iter()
            .map(|&(a, b)| (us(a), us(b).max(us(a))))
            .collect())
    }

    /// Every timed pass's duration in seconds.
    pub fn durations_s(&self, gpu: &Gpu) -> Result<Vec<f64>> {
        Ok(self
            .ticks(gpu)?
            .iter()
            .map(|&(a, b)| self.us(b.saturating_sub(a)) / 1e6)
            .collect())
    }

    /// Microseconds of `ticks` timestamp ticks.
    pub fn us(&self, ticks: u64) -> f64 {
        ticks as f64 * self.period_ns / 1e3
    }
}

/// Times `runs` runs of what `record` encodes (its passes timestamped by the writes it is handed, at
/// most one pass a run; encoding may fail, typed), each run its own submission; returns each run's
/// (begin, end) in µs from the first begin. With GPU timestamps (`timer` has them) every run is
/// submitted without waiting and the last resolves them all for one readback after, so no copy runs
/// between the timed runs; without, each run is submitted and waited for (within `bound`) alone, on
/// the host clock, which then includes encoding, submission and wake-up latency. The one way GPU
/// work outside the executor is submitted and timed: the benches, both calibrations and the
/// standalone tracked GEMM go through it.
pub fn time_series(
    gpu: &Gpu,
    timer: &mut Timestamps,
    what: &str,
    runs: u32,
    bound: Duration,
    mut record: impl FnMut(
        &mut wgpu::CommandEncoder,
        Option<wgpu::ComputePassTimestampWrites<'_>>,
    ) -> Result<()>,
) -> Result<Vec<(f64, f64)>> {
    if !timer.gpu_clock() {
        let t0 = Instant::now();
        let mut spans = Vec::with_capacity(runs as usize);
        for _ in 0..runs {
            let begin = t0.elapsed().as_secs_f64() * 1e6;
            let mut enc = gpu.device.create_command_encoder(&Default::default());
            record(&mut enc, None)?;
            let idx = gpu.submit(what, vec![enc.finish()])?;
            gpu.wait(Some(idx), what, bound)?;
            spans.push((begin, t0.elapsed().as_secs_f64() * 1e6));
        }
        return Ok(spans);
    }
    if runs > timer.cap {
        return Err(Error::invalid(
            "timed runs",
            runs,
            format!("at most the timer's {} passes", timer.cap),
        ));
    }
    timer.reset();
    let mut last = None;
    for run in 0..runs {
        let mut enc = gpu.device.create_command_encoder(&Default::default());
        record(&mut enc, timer.pass())?;
        if run + 1 == runs {
            timer.encode_resolve(&mut enc);
        }
        last = Some(gpu.submit(what, vec![enc.finish()])?);
    }
    gpu.wait(last, what, bound * runs)?;
    timer.spans_us(gpu)
}

/// `passes` equal intervals over `total_us`: the host clock's estimate of the passes of one
/// submission where they have no timestamps of their own (the grain says so).
pub fn host_spans(total_us: f64, passes: usize) -> Vec<(f64, f64)> {
    let each = total_us / passes.max(1) as f64;
    (0..passes)
        .map(|i| (i as f64 * each, (i + 1) as f64 * each))
        .collect()
}
