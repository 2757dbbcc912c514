//! GPU timestamps at compute-pass boundaries: the one timer of the modes, link calibration and the
//! benches. Absent where the adapter has no TIMESTAMP_QUERY; callers then fall back to the host clock.

use crate::error::Result;
use crate::gpu::Gpu;

/// A query set of begin/end pairs, one pair per timed pass, resolved and read back in one go.
pub struct Timestamps {
    gpu_side: Option<(wgpu::QuerySet, wgpu::Buffer)>,
    /// Pairs the query set holds.
    cap: u32,
    /// Pairs handed out since the last [`Timestamps::reset`].
    next: u32,
    /// Whether every pass asked for since the reset got its pair.
    covered: bool,
    period_ns: f64,
}

impl Timestamps {
    /// A timer for up to `passes` passes between reads (clamped to what one query set holds).
    pub fn new(gpu: &Gpu, passes: u32) -> Self {
        if !gpu.has(wgpu::Features::TIMESTAMP_QUERY) {
            return Timestamps {
                gpu_side: None,
                cap: 0,
                next: 0,
                covered: false,
                period_ns: 0.0,
            };
        }
        let cap = passes.clamp(1, wgpu::QUERY_SET_MAX_QUERIES / 2);
        let set = gpu.device.create_query_set(&wgpu::QuerySetDescriptor {
            label: Some("pass timestamps"),
            ty: wgpu::QueryType::Timestamp,
            count: 2 * cap,
        });
        let resolve = gpu.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("timestamp resolve"),
            size: (u64::from(cap) * 2 * wgpu::QUERY_SIZE as u64).next_multiple_of(256),
            usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        Timestamps {
            gpu_side: Some((set, resolve)),
            cap,
            next: 0,
            covered: true,
            period_ns: f64::from(gpu.queue.get_timestamp_period()),
        }
    }

    /// Whether passes get GPU timestamps at all.
    pub fn gpu_clock(&self) -> bool {
        self.gpu_side.is_some()
    }

    /// Starts a new series: pass numbering restarts.
    pub fn reset(&mut self) {
        self.next = 0;
        self.covered = self.gpu_side.is_some();
    }

    /// Whether every pass since the reset was timestamped (false once the query set ran out).
    pub fn covered(&self) -> bool {
        self.covered
    }

    /// Timestamp writes for the next pass; None (and the series no longer covered) once the query
    /// set is full, or always without timestamps.
    pub fn pass(&mut self) -> Option<wgpu::ComputePassTimestampWrites<'_>> {
        let (set, _) = self.gpu_side.as_ref()?;
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

    /// Every timed pass's (begin, end) in ticks since the reset, resolved after the caller's work
    /// (submit it first; the readback waits for it, bounded).
    pub fn ticks(&self, gpu: &Gpu) -> Result<Vec<(u64, u64)>> {
        let Some((set, resolve)) = &self.gpu_side else {
            return Ok(vec![]);
        };
        if self.next == 0 {
            return Ok(vec![]);
        }
        let n = 2 * self.next;
        let mut enc = gpu.device.create_command_encoder(&Default::default());
        enc.resolve_query_set(set, 0..n, resolve, 0);
        let bytes = gpu.read_spans("timestamps", enc, &[(resolve, 0, u64::from(n) * 8)])?;
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
