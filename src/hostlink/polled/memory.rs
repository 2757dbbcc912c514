//! The polled link's memory: each link's flags and slots, as views on its device ends and as the
//! host addresses them (src/hostlink/polled.rs).

use super::{End, Memory, Ring};
use crate::error::{Error, Result};
use crate::gpu::Gpu;
use crate::hostlink::shared::{self, Shared};

/// One link's memory: its flags and slots, a view of each on every device end (host memory), or on
/// its one device.
pub(super) struct LinkMemory {
    /// (device index, flags view, slots view).
    pub(super) views: Vec<(usize, wgpu::Buffer, wgpu::Buffer)>,
    /// Where the host reaches the flags and slots, where it does.
    pub(super) host: Option<HostView>,
    /// Host addresses of every copy of the flags (`Ring::flag_bytes` each): the host end's, or the
    /// two a relay keeps equal.
    pub(super) flag_copies: Vec<usize>,
    /// The sender's and the receiver's copy of the flags, where a host thread relays between them.
    pub(super) relay: Option<(usize, usize)>,
    /// The host allocations the views are imports of.
    _imports: Vec<Shared>,
}

impl LinkMemory {
    pub(super) fn view(&self, device: usize) -> (&wgpu::Buffer, &wgpu::Buffer) {
        let v = self.views.iter().find(|v| v.0 == device);
        let v = v.expect("a link's memory has a view on each of its device ends");
        (&v.1, &v.2)
    }
}

/// A link's flags and slots as its host end addresses them.
#[derive(Clone, Copy)]
pub(super) struct HostView {
    pub(super) flags: usize,
    pub(super) slots: usize,
}

/// Link `i`'s flags and slots.
pub(super) fn link_memory(
    gpus: &[Gpu],
    i: usize,
    (from, to): (End, End),
    ring: &Ring,
    memory: Memory,
) -> Result<LinkMemory> {
    let mut ends: Vec<usize> = [from, to]
        .into_iter()
        .filter_map(|e| match e {
            End::Device(d) => Some(d),
            End::Host => None,
        })
        .collect();
    ends.dedup();
    if memory == Memory::Device {
        let gpu = &gpus[ends[0]];
        let usage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST;
        let flags = gpu.buffer(&format!("polled link {i} flags"), ring.flag_bytes(), usage)?;
        let slots = gpu.buffer(&format!("polled link {i} slots"), ring.data_bytes(), usage)?;
        return Ok(LinkMemory {
            views: vec![(ends[0], flags, slots)],
            host: None,
            flag_copies: Vec::new(),
            relay: None,
            _imports: Vec::new(),
        });
    }
    if memory == Memory::Peer {
        return peer_memory(gpus, i, (from, to), ring);
    }
    let devices: Vec<&wgpu::Device> = ends.iter().map(|&d| &gpus[d].device).collect();
    let import = |what: &str, bytes: u64| {
        // SAFETY: the link's own flags order every access to its slots and flags between its ends
        // (the point of this module, checked word by word); nothing else touches them during a run.
        unsafe { shared::import(&devices, &format!("polled link {i} {what}"), bytes) }.ok_or_else(
            || {
                Error::invalid(
                    "polled link memory",
                    format!("host memory for {from} -> {to}"),
                    "devices that import host memory (VK_EXT_external_memory_host)",
                )
            },
        )
    };
    let slots = import("slots", ring.data_bytes())?;
    if memory == Memory::Bar {
        return bar_memory(gpus, i, (from, to), &ends, ring, slots);
    }
    let flags = import("flags", ring.flag_bytes())?;
    let views = ends
        .iter()
        .enumerate()
        .map(|(k, &d)| (d, flags.views[k].clone(), slots.views[k].clone()))
        .collect();
    Ok(LinkMemory {
        views,
        host: Some(HostView {
            flags: flags.host() as usize,
            slots: slots.host() as usize,
        }),
        flag_copies: vec![flags.host() as usize],
        relay: None,
        _imports: vec![flags, slots],
    })
}

/// Link `i`'s memory with its flags in each device end's BAR ([`Memory::Bar`]), its slots
/// (`slots`, imported into `ends`) in host memory.
fn bar_memory(
    gpus: &[Gpu],
    i: usize,
    (from, to): (End, End),
    ends: &[usize],
    ring: &Ring,
    slots: Shared,
) -> Result<LinkMemory> {
    let flags = ends
        .iter()
        .map(|&d| {
            // SAFETY: the host reaches the flags only during a run and between runs (`reset`,
            // `abort`), while the buffer (held in the views) lives.
            let mapped = unsafe {
                let label = format!("polled link {i} flags on device {d}");
                shared::device_mapped(&gpus[d].device, &label, ring.flag_bytes())
            };
            mapped.ok_or_else(|| {
                Error::invalid(
                    "polled link memory",
                    format!("flags in BAR on device {d}"),
                    "a device with memory both DEVICE_LOCAL and HOST_VISIBLE",
                )
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let at: Vec<usize> = flags.iter().map(|f| f.1 as usize).collect();
    let host = (from == End::Host || to == End::Host).then(|| HostView {
        flags: at[0],
        slots: slots.host() as usize,
    });
    let relay = (ends.len() == 2).then(|| (at[0], at[1]));
    if host.is_none() && relay.is_none() {
        return Err(Error::invalid(
            "polled link memory",
            format!("flags in BAR for {from} -> {to}"),
            "two ends that differ",
        ));
    }
    Ok(LinkMemory {
        views: ends
            .iter()
            .zip(flags)
            .enumerate()
            .map(|(k, (&d, f))| (d, f.0, slots.views[k].clone()))
            .collect(),
        host,
        flag_copies: at,
        relay,
        _imports: vec![slots],
    })
}

/// Link `i`'s memory in its receiver's BAR, imported into its sender ([`Memory::Peer`]).
fn peer_memory(gpus: &[Gpu], i: usize, (from, to): (End, End), ring: &Ring) -> Result<LinkMemory> {
    let (End::Device(s), End::Device(r)) = (from, to) else {
        return Err(Error::invalid(
            "polled link memory",
            format!("the receiver's memory for {from} -> {to}"),
            "two devices",
        ));
    };
    if s == r {
        return Err(Error::invalid(
            "polled link memory",
            format!("the receiver's memory for {from} -> {to}"),
            "two devices (a loopback: device memory)",
        ));
    }
    let refused = |what: String| {
        Error::invalid(
            "polled link memory",
            what,
            "devices with DEVICE_LOCAL | HOST_VISIBLE memory that import another's mapping",
        )
    };
    let mut views = vec![(r, None, None), (s, None, None)];
    let mut flag_copies = Vec::new();
    for (k, (what, bytes)) in [("flags", ring.flag_bytes()), ("slots", ring.data_bytes())]
        .into_iter()
        .enumerate()
    {
        let label = format!("polled link {i} {what} on device {r}");
        // SAFETY: the host reaches the mapping (`reset` between runs, `abort` during one) only while
        // the buffer lives (held in the views); the sender's import holds the buffer too.
        let (own, at) = unsafe { shared::device_mapped(&gpus[r].device, &label, bytes) }
            .ok_or_else(|| refused(format!("{what} mapped on device {r}")))?;
        let label = format!("polled link {i} {what} of device {r} on device {s}");
        // SAFETY: `at` is `own`'s mapping of `own.size()` bytes; the link's flags order the accesses.
        let far = unsafe { shared::import_mapped(&gpus[s].device, &label, (at, own.size()), &own) }
            .ok_or_else(|| refused(format!("device {r}'s {what} imported into device {s}")))?;
        if k == 0 {
            flag_copies.push(at as usize);
        }
        let set = |v: &mut (usize, Option<wgpu::Buffer>, Option<wgpu::Buffer>), b| {
            if k == 0 {
                v.1 = Some(b)
            } else {
                v.2 = Some(b)
            }
        };
        set(&mut views[0], own);
        set(&mut views[1], far);
    }
    Ok(LinkMemory {
        views: views
            .into_iter()
            .filter_map(|(d, f, sl)| Some((d, f?, sl?)))
            .collect(),
        host: None,
        flag_copies,
        relay: None,
        _imports: Vec::new(),
    })
}
