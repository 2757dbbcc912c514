//! Standalone work: `Handed`, `Executor::pooled` and `record`, kept off the ranks' buffers.

use std::collections::HashMap;

use super::{uses, Executor, KernelSet, Stamps};
use crate::error::{Error, Result};
use crate::gpu::Gpu;
use crate::lower::{Buffer, Command, LinkBox, Lowered};
use crate::timestamps::Timestamps;

/// Refuses `bindings` or `buffers` of `lowered` that name a rank's buffer or a link's not in
/// `links`: what runs without ranks binds only what the executor makes or is handed.
fn pool_only(
    lowered: &Lowered,
    links: &HashMap<LinkBox, wgpu::Buffer>,
    bindings: &[usize],
    buffers: &[Buffer],
) -> Result<()> {
    let bound = bindings
        .iter()
        .flat_map(|&i| &lowered.bindings[i].resources)
        .filter_map(|r| r.buffer());
    let made_here = |b: &Buffer| match b {
        Buffer::Pool(_) | Buffer::View(..) => true,
        Buffer::Link(k) => links.contains_key(k),
        _ => false,
    };
    match buffers.iter().copied().chain(bound).find(|b| !made_here(b)) {
        None => Ok(()),
        Some(b) => Err(Error::invalid(
            "recording without ranks",
            format!("one naming {b:?}"),
            "pool buffers and the link buffers handed alone",
        )),
    }
}

/// What a caller hands [`Executor::pooled`]: the host links' buffers its recordings name, and
/// buffers of its own bound in place of plain pool buffers (what it uploads to or reads back, or
/// shares between executors, as the host link calibration's payload and counters).
#[derive(Default)]
pub struct Handed<'h> {
    pub links: HashMap<LinkBox, wgpu::Buffer>,
    pub pool: Vec<(Buffer, &'h wgpu::Buffer)>,
}

impl<'a> Executor<'a> {
    /// Binds every binding of `lowered`, whose buffers must all be its pool's or `handed` links'
    /// (no plan's ranks: standalone work, core's `lower_tracked_gemm` and `lower_step`), to dispatch
    /// `kernels`, the pool buffers `handed` gives bound to its buffers. Its recordings run through
    /// [`Executor::record`], timed by the caller's series (its own timer has no query set).
    pub fn pooled(
        gpu: &'a Gpu,
        kernels: KernelSet<'a>,
        lowered: &Lowered,
        handed: Handed,
    ) -> Result<Self> {
        let all: Vec<usize> = (0..lowered.bindings.len()).collect();
        pool_only(lowered, &handed.links, &all, &[])?;
        let timer = Timestamps::host_clock();
        let mut ex = Self::unbound(gpu, kernels, lowered, handed.links, timer);
        for (b, buffer) in handed.pool {
            let plain = match b {
                Buffer::Pool(i) => lowered.pool.get(i).filter(|p| {
                    p.init.is_none() && p.views == 0 && !p.windowed && buffer.size() >= p.bytes
                }),
                _ => None,
            };
            let (Buffer::Pool(i), Some(_)) = (b, plain) else {
                return Err(Error::invalid(
                    "handed buffer",
                    format!("{} bytes for {b:?}", buffer.size()),
                    "one for a plain pool buffer of the lowering, at least as long",
                ));
            };
            ex.pool[i] = Some(buffer.clone());
        }
        gpu.scoped("binding a pooled recording", || {
            all.iter().try_for_each(|&b| ex.bind(None, lowered, b))
        })??;
        Ok(ex)
    }

    /// Encodes `commands` of `lowered`, whose buffers are all its pool's or handed, into a caller's
    /// encoder, its first pass timestamped by `timestamps`: one run of a caller's series
    /// ([`crate::timestamps::time_series`], which submits and waits). A read is refused: it maps
    /// only after a launch.
    pub fn record(
        &mut self,
        enc: &mut wgpu::CommandEncoder,
        lowered: &Lowered,
        label: &str,
        commands: &[Command],
        timestamps: Option<wgpu::ComputePassTimestampWrites<'_>>,
    ) -> Result<()> {
        if commands.iter().any(|c| matches!(c, Command::Read(_))) {
            return Err(Error::invalid(
                "recorded recording",
                format!("{label} with a read"),
                "no read (a read maps only after a launch)",
            ));
        }
        self.prepare_standalone(lowered, commands)?;
        self.encode(enc, None, label, commands, Stamps::Given(timestamps))?;
        Ok(())
    }

    /// Refuses `commands` of `lowered` that name buffers a standalone recording cannot bind (or a
    /// lowering of another device), and makes what they use.
    fn prepare_standalone(&mut self, lowered: &Lowered, commands: &[Command]) -> Result<()> {
        if lowered.target.device != self.device {
            return Err(Error::invalid(
                "recording's device",
                lowered.target.device,
                format!("the executor's, {}", self.device),
            ));
        }
        let (bindings, buffers) = uses(commands);
        pool_only(lowered, &self.links, &bindings, &buffers)?;
        self.prepare(None, lowered, (bindings, buffers))
    }
}

/// One executor's part of a pass shared with others: its lowering and a recording of it whose
/// commands are passes alone.
pub struct Part<'p, 'a> {
    pub exec: &'p mut Executor<'a>,
    pub lowered: &'p Lowered,
    pub commands: &'p [Command],
}

/// Encodes the passes of every part's recording (standalone work of executors on one device, as
/// [`Executor::record`]) as one pass, timestamped by `timestamps`, in the parts' order. Where their
/// buffers are disjoint their dispatches run side by side: separate passes may leave the GPU to run
/// them one after the other.
pub fn record_one_pass(
    enc: &mut wgpu::CommandEncoder,
    label: &str,
    parts: &mut [Part],
    timestamps: Option<wgpu::ComputePassTimestampWrites<'_>>,
) -> Result<()> {
    prepare_parts(label, parts)?;
    let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
        label: Some(label),
        timestamp_writes: timestamps,
    });
    dispatch_parts(&mut pass, parts)
}

/// Refuses parts [`dispatch_parts`] cannot put in one pass (a recording with more than passes, or
/// parts on two devices) and makes what their recordings use: before the pass is begun.
pub fn prepare_parts(label: &str, parts: &mut [Part]) -> Result<()> {
    let first = parts.first().map(|p| p.exec.gpu);
    for part in parts.iter_mut() {
        let (lowered, commands) = (part.lowered, part.commands);
        if let Some(c) = commands.iter().find(|c| !matches!(c, Command::Pass(_))) {
            return Err(Error::invalid(
                "recording in a shared pass",
                format!("{label} with {c:?}"),
                "passes alone (clears, copies and reads go before or after the pass)",
            ));
        }
        // One encoder: every part's executor on its device.
        if first.is_some_and(|g| !std::ptr::eq(g, part.exec.gpu)) {
            return Err(Error::invalid(
                "recording in a shared pass",
                format!("{label} with parts on two devices"),
                "every part's executor on one device",
            ));
        }
        part.exec.prepare_standalone(lowered, commands)?;
    }
    Ok(())
}

/// Dispatches every part's passes into `pass`, a caller's (which may hold its own dispatches
/// before), in the parts' order; [`prepare_parts`] made what they use.
pub fn dispatch_parts(pass: &mut wgpu::ComputePass<'_>, parts: &[Part]) -> Result<()> {
    for part in parts {
        for c in part.commands {
            if let Command::Pass(p) = c {
                part.exec.dispatch(pass, p)?;
            }
        }
    }
    Ok(())
}
