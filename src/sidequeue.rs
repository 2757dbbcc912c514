//! Queues beside wgpu's one: a device opened by [`crate::vkdevice::request_device`] also holds a
//! second queue of wgpu's own family and a queue of a transfer-only family where the GPU offers
//! them, and a [`SideQueue`] copies between buffers on one of them, outside wgpu.
//!
//! wgpu submits everything to one queue, so a copy out of host memory runs one after the other with
//! the GEMM's pass (BENCHMARKS.md, "What did not pay"). A transfer-only family is, on discrete GPUs,
//! the copy engines: DMA beside the SMs, as the hardware T3 assumes moves a chunk without taking the
//! compute units. What rests on the driver, not the spec: wgpu makes its buffers exclusive to its
//! family, and nothing orders a side queue's work against wgpu's but the host, which starts a copy
//! only after the submission that wrote its source completed and lets wgpu's queue read its
//! destination only after the copy's fence signalled; every copy's bytes are checked by its callers.

use std::time::Duration;

use web_time::Instant;

use crate::error::{Error, Result};

/// Which side queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// The second queue of the family wgpu's queue is in (graphics, compute and transfer).
    Second,
    /// Queue 0 or 1 of a family that transfers but neither computes nor draws (copy engines): two
    /// where offered, so that a device's links from two senders land side by side.
    Transfer(u32),
}

/// Queues of the transfer-only family a device is opened with, at most.
#[cfg(wgpu_vulkan)]
const TRANSFER_QUEUES: u32 = 2;

impl Side {
    pub const ALL: [Side; 3] = [Side::Second, Side::Transfer(0), Side::Transfer(1)];

    pub fn name(self) -> String {
        match self {
            Side::Second => "second".into(),
            Side::Transfer(i) => format!("transfer {i}"),
        }
    }
}

/// The family wgpu's queue is in (wgpu-hal 30 opens queue 0 of family 0).
#[cfg(wgpu_vulkan)]
const WGPU_FAMILY: u32 = 0;

/// Where each side queue lies among `families` (the physical device's queue families): (family,
/// index) for each [`Side`] the device can have.
#[cfg(wgpu_vulkan)]
fn places(families: &[ash::vk::QueueFamilyProperties]) -> Vec<(Side, u32, u32)> {
    use ash::vk::QueueFlags as Q;
    let mut v = Vec::new();
    if families
        .get(WGPU_FAMILY as usize)
        .is_some_and(|f| f.queue_count >= 2)
    {
        v.push((Side::Second, WGPU_FAMILY, 1));
    }
    if let Some((i, f)) = families.iter().enumerate().find(|(_, f)| {
        f.queue_count >= 1
            && f.queue_flags.contains(Q::TRANSFER)
            && !f.queue_flags.intersects(Q::GRAPHICS | Q::COMPUTE)
    }) {
        for q in 0..f.queue_count.min(TRANSFER_QUEUES) {
            v.push((Side::Transfer(q), i as u32, q));
        }
    }
    v
}

/// The queue families of the physical device under `hal`.
#[cfg(wgpu_vulkan)]
fn families_of(
    instance: &wgpu::hal::vulkan::InstanceShared,
    pd: ash::vk::PhysicalDevice,
) -> Vec<ash::vk::QueueFamilyProperties> {
    // SAFETY: a query of a physical device the instance enumerated.
    unsafe {
        instance
            .raw_instance()
            .get_physical_device_queue_family_properties(pd)
    }
}

/// How many transfer queues (copy engines) a device opened on `adapter` by
/// [`crate::vkdevice::request_device`] holds beside wgpu's queue (0: none, or not Vulkan).
pub fn transfer_queues(adapter: &wgpu::Adapter) -> u32 {
    #[cfg(wgpu_vulkan)]
    {
        // SAFETY: the hal adapter is only read.
        unsafe { adapter.as_hal::<wgpu::hal::api::Vulkan>() }.map_or(0, |hal| {
            offered(&hal)
                .iter()
                .filter(|p| matches!(p.0, Side::Transfer(_)))
                .count() as u32
        })
    }
    #[cfg(not(wgpu_vulkan))]
    {
        let _ = adapter;
        0
    }
}

/// The devices [`crate::vkdevice::request_device`] opened (their raw handles): those alone hold
/// the side queues its callback asked for.
#[cfg(wgpu_vulkan)]
static OPENED: std::sync::Mutex<Vec<u64>> = std::sync::Mutex::new(Vec::new());

/// The raw handle of `device`, where it is a Vulkan device.
#[cfg(wgpu_vulkan)]
fn raw_handle(device: &wgpu::Device) -> Option<u64> {
    use ash::vk::Handle;
    // SAFETY: the hal device is only read.
    unsafe { device.as_hal::<wgpu::hal::api::Vulkan>() }.map(|h| h.raw_device().handle().as_raw())
}

/// Whether `device` has an extension only [`crate::vkdevice::request_device`] enables.
#[cfg(wgpu_vulkan)]
fn extended(device: &wgpu::Device) -> bool {
    // SAFETY: the hal device is only read.
    unsafe { device.as_hal::<wgpu::hal::api::Vulkan>() }.is_some_and(|h| {
        h.enabled_device_extensions()
            .iter()
            .any(|e| *e == ash::ext::external_memory_host::NAME || *e == crate::coopmat2::EXTENSION)
    })
}

/// Notes that `device` was opened with the side queues its adapter offers.
#[cfg(wgpu_vulkan)]
pub(crate) fn opened(device: &wgpu::Device) {
    if let Some(h) = raw_handle(device) {
        OPENED.lock().unwrap_or_else(|e| e.into_inner()).push(h);
    }
}

/// Where the side queues of a device opened on `adapter` lie.
#[cfg(wgpu_vulkan)]
pub(crate) fn offered(adapter: &wgpu::hal::vulkan::Adapter) -> Vec<(Side, u32, u32)> {
    places(&families_of(
        adapter.shared_instance(),
        adapter.raw_physical_device(),
    ))
}

/// Adds the side queues at `places` ([`offered`]) to the queue create infos `open_with_callback`
/// passes (wgpu's family 0 with one queue among them).
#[cfg(wgpu_vulkan)]
pub(crate) fn add_to(
    places: &[(Side, u32, u32)],
    infos: &mut Vec<ash::vk::DeviceQueueCreateInfo<'_>>,
) {
    static PRIORITIES: [f32; 2] = [1.0, 1.0];
    if places.iter().any(|p| p.0 == Side::Second) {
        if let Some(i) = infos
            .iter_mut()
            .find(|i| i.queue_family_index == WGPU_FAMILY)
        {
            *i = i.queue_priorities(&PRIORITIES);
        }
    }
    let transfer: Vec<u32> = places
        .iter()
        .filter(|p| matches!(p.0, Side::Transfer(_)))
        .map(|p| p.1)
        .collect();
    if let Some(&family) = transfer.first() {
        infos.push(
            ash::vk::DeviceQueueCreateInfo::default()
                .queue_family_index(family)
                .queue_priorities(&PRIORITIES[..transfer.len()]),
        );
    }
}

/// One copy between two buffers of a device.
#[derive(Clone, Copy)]
pub struct Copy<'a> {
    pub src: &'a wgpu::Buffer,
    pub src_offset: u64,
    pub dst: &'a wgpu::Buffer,
    pub dst_offset: u64,
    pub size: u64,
}

/// A side queue of one device with `depth` command buffers, each with its fence: that many copies
/// in flight at once, each known by its ticket.
pub struct SideQueue {
    pub side: Side,
    /// The queue family it is in.
    pub family: u32,
    #[cfg(wgpu_vulkan)]
    raw: Raw,
    /// Per command buffer: whether its copy was submitted and not yet seen complete.
    busy: Vec<bool>,
    /// Per command buffer: the buffers its copy in flight reads and writes, held until it completed
    /// (wgpu defers freeing a dropped buffer only for work on its own queue, not for this one).
    #[cfg_attr(not(wgpu_vulkan), allow(dead_code))]
    held: Vec<Vec<wgpu::Buffer>>,
}

/// How long dropping a side queue waits for its copies in flight before it leaks what they use.
#[cfg(wgpu_vulkan)]
const DROP_WAIT: Duration = Duration::from_secs(10);

#[cfg(wgpu_vulkan)]
struct Raw {
    /// Holds the device (and so `device`'s handles) alive.
    _owner: wgpu::Device,
    device: ash::Device,
    queue: ash::vk::Queue,
    /// Submissions to `queue` from every side queue on it (Vulkan wants them serialized).
    lock: std::sync::Arc<std::sync::Mutex<()>>,
    pool: ash::vk::CommandPool,
    cmds: Vec<ash::vk::CommandBuffer>,
    fences: Vec<ash::vk::Fence>,
    /// Set where copies outlived [`DROP_WAIT`]: the pool and fences are then leaked, not destroyed.
    leak: bool,
}

#[cfg(wgpu_vulkan)]
impl Drop for Raw {
    fn drop(&mut self) {
        if self.leak {
            return;
        }
        // SAFETY: no copy is in flight (waited for in `SideQueue`'s drop, or never submitted);
        // nothing else uses the pool or the fences.
        unsafe {
            for &f in &self.fences {
                self.device.destroy_fence(f, None);
            }
            self.device.destroy_command_pool(self.pool, None);
        }
    }
}

/// The lock of the Vulkan queue `queue`, one per queue for every side queue submitting to it.
#[cfg(wgpu_vulkan)]
fn queue_lock(queue: ash::vk::Queue) -> std::sync::Arc<std::sync::Mutex<()>> {
    use ash::vk::Handle;
    type Locks = std::sync::Mutex<Vec<(u64, std::sync::Arc<std::sync::Mutex<()>>)>>;
    static LOCKS: std::sync::OnceLock<Locks> = std::sync::OnceLock::new();
    let mut locks = LOCKS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let raw = queue.as_raw();
    if let Some((_, l)) = locks.iter().find(|(q, _)| *q == raw) {
        return l.clone();
    }
    let l = std::sync::Arc::new(std::sync::Mutex::new(()));
    locks.push((raw, l.clone()));
    l
}

impl Drop for SideQueue {
    fn drop(&mut self) {
        #[cfg(wgpu_vulkan)]
        {
            let busy: Vec<ash::vk::Fence> = self
                .raw
                .fences
                .iter()
                .zip(&self.busy)
                .filter(|(_, b)| **b)
                .map(|(f, _)| *f)
                .collect();
            // SAFETY: a wait on this device's fences, each submitted.
            let waited = busy.is_empty()
                || unsafe {
                    self.raw
                        .device
                        .wait_for_fences(&busy, true, DROP_WAIT.as_nanos() as u64)
                }
                .is_ok();
            if !waited {
                // A copy still runs (a lost or hung device): what it touches must outlive it.
                self.raw.leak = true;
                std::mem::forget(std::mem::take(&mut self.held));
            }
        }
    }
}

impl SideQueue {
    /// `side` on `device` with `depth` copies in flight at most, where the device was opened with it
    /// ([`crate::vkdevice::request_device`] on a GPU that offers it); None elsewhere (another
    /// backend, a device opened the usual way, lavapipe's one queue) or where `depth` is 0.
    pub fn new(device: &wgpu::Device, side: Side, depth: usize) -> Option<SideQueue> {
        #[cfg(wgpu_vulkan)]
        {
            // A handle may be reused once its device is gone: an extension `request_device`
            // enables (which a device opened the usual way lacks) must be there too.
            let opened = raw_handle(device).is_some_and(|h| {
                OPENED
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .contains(&h)
            }) && extended(device);
            if depth == 0 || !opened {
                return None;
            }
            // SAFETY: the hal device is only read, and its raw handles are used while `_owner` holds
            // the device alive.
            let hal = unsafe { device.as_hal::<wgpu::hal::api::Vulkan>() }?;
            let families = families_of(hal.shared_instance(), hal.raw_physical_device());
            let (_, family, index) = places(&families).into_iter().find(|p| p.0 == side)?;
            let raw_device = hal.raw_device().clone();
            drop(hal);
            use ash::vk;
            // SAFETY: the queue was created with the device (`add_to`); the pool, its buffers and the
            // fences are this device's, destroyed by `Raw`'s drop once the queue is idle.
            unsafe {
                let pool = raw_device
                    .create_command_pool(
                        &vk::CommandPoolCreateInfo::default()
                            .queue_family_index(family)
                            .flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER),
                        None,
                    )
                    .ok()?;
                let queue = raw_device.get_device_queue(family, index);
                let mut raw = Raw {
                    _owner: device.clone(),
                    queue,
                    lock: queue_lock(queue),
                    device: raw_device,
                    pool,
                    cmds: Vec::new(),
                    fences: Vec::new(),
                    leak: false,
                };
                raw.cmds = raw
                    .device
                    .allocate_command_buffers(
                        &vk::CommandBufferAllocateInfo::default()
                            .command_pool(pool)
                            .level(vk::CommandBufferLevel::PRIMARY)
                            .command_buffer_count(u32::try_from(depth).ok()?),
                    )
                    .ok()?;
                for _ in 0..depth {
                    raw.fences.push(
                        raw.device
                            .create_fence(&vk::FenceCreateInfo::default(), None)
                            .ok()?,
                    );
                }
                Some(SideQueue {
                    side,
                    family,
                    raw,
                    busy: vec![false; depth],
                    held: vec![Vec::new(); depth],
                })
            }
        }
        #[cfg(not(wgpu_vulkan))]
        {
            let _ = (device, side, depth);
            None
        }
    }

    fn during(&self) -> String {
        format!("a copy on the {} queue", self.side.name())
    }

    /// Submits `copies` (buffers of this queue's device, none written by wgpu's queue until
    /// [`Self::done`] says so: nothing orders the two) in one command buffer; returns its ticket.
    /// The buffers are held until the copy completed. Refused while `depth` copies are in flight.
    pub fn copy(&mut self, copies: &[Copy<'_>]) -> Result<usize> {
        if self.busy.iter().all(|b| *b) {
            // A ticket nobody polls any more comes back once its copy completed.
            for t in 0..self.busy.len() {
                self.done(t)?;
            }
        }
        let Some(ticket) = self.busy.iter().position(|b| !b) else {
            return Err(Error::invalid(
                "side queue copies in flight",
                self.busy.len() + 1,
                format!("at most its depth of {}", self.busy.len()),
            ));
        };
        for c in copies {
            let (s, d, n) = (c.src_offset, c.dst_offset, c.size);
            let within =
                |at: u64, b: &wgpu::Buffer| at.checked_add(n).is_some_and(|e| e <= b.size());
            if n == 0 || !within(s, c.src) || !within(d, c.dst) {
                return Err(Error::invalid(
                    "side queue copy region",
                    format!("{n} bytes from {s} to {d}"),
                    format!(
                        "within the source's {} and the destination's {} bytes, not empty",
                        c.src.size(),
                        c.dst.size()
                    ),
                ));
            }
        }
        #[cfg(wgpu_vulkan)]
        {
            use ash::vk;
            let what = self.during();
            let r = &self.raw;
            let (cmd, fence) = (r.cmds[ticket], r.fences[ticket]);
            // SAFETY: the buffers are this device's (the caller's contract), live for the call, and
            // stay so until the copy completes (`held`).
            let raw = |b: &wgpu::Buffer| unsafe {
                b.as_hal::<wgpu::hal::api::Vulkan>()
                    .map(|h| h.raw_handle())
                    .ok_or_else(|| Error::Gpu {
                        during: what.clone(),
                        message: "a buffer with no Vulkan handle".into(),
                    })
            };
            let regions = copies
                .iter()
                .map(|c| {
                    Ok((
                        raw(c.src)?,
                        raw(c.dst)?,
                        vk::BufferCopy {
                            src_offset: c.src_offset,
                            dst_offset: c.dst_offset,
                            size: c.size,
                        },
                    ))
                })
                .collect::<Result<Vec<_>>>()?;
            let vk_err = |e: vk::Result| Error::Gpu {
                during: what.clone(),
                message: e.to_string(),
            };
            // SAFETY: as above; the command buffer and its fence are not in flight (`busy`), and the
            // fence is unsignalled once reset, signalled by this submission.
            unsafe {
                r.device.reset_fences(&[fence]).map_err(vk_err)?;
                r.device
                    .reset_command_buffer(cmd, vk::CommandBufferResetFlags::empty())
                    .map_err(vk_err)?;
                r.device
                    .begin_command_buffer(
                        cmd,
                        &vk::CommandBufferBeginInfo::default()
                            .flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT),
                    )
                    .map_err(vk_err)?;
                for (s, d, region) in &regions {
                    r.device
                        .cmd_copy_buffer(cmd, *s, *d, std::slice::from_ref(region));
                }
                r.device.end_command_buffer(cmd).map_err(vk_err)?;
                let cmds = [cmd];
                let _queue = r.lock.lock().unwrap_or_else(|e| e.into_inner());
                r.device
                    .queue_submit(
                        r.queue,
                        &[vk::SubmitInfo::default().command_buffers(&cmds)],
                        fence,
                    )
                    .map_err(vk_err)?;
            }
            self.busy[ticket] = true;
            self.held[ticket] = copies
                .iter()
                .flat_map(|c| [c.src.clone(), c.dst.clone()])
                .collect();
            Ok(ticket)
        }
        #[cfg(not(wgpu_vulkan))]
        {
            let _ = ticket;
            Err(Error::Gpu {
                during: self.during(),
                message: "no side queue without Vulkan".into(),
            })
        }
    }

    /// Whether copy `ticket` completed (true where it is not in flight); never blocks.
    pub fn done(&mut self, ticket: usize) -> Result<bool> {
        if !self.busy.get(ticket).copied().unwrap_or(false) {
            return Ok(true);
        }
        #[cfg(wgpu_vulkan)]
        {
            // SAFETY: a query of this device's fence.
            match unsafe { self.raw.device.get_fence_status(self.raw.fences[ticket]) } {
                Ok(true) => {
                    self.busy[ticket] = false;
                    self.held[ticket].clear();
                    Ok(true)
                }
                Ok(false) => Ok(false),
                Err(e) => Err(Error::Gpu {
                    during: self.during(),
                    message: e.to_string(),
                }),
            }
        }
        #[cfg(not(wgpu_vulkan))]
        Ok(true)
    }

    /// Blocks until copy `ticket` completed, or fails with [`Error::Timeout`] after `bound`.
    pub fn wait(&mut self, ticket: usize, bound: Duration) -> Result<()> {
        let t0 = Instant::now();
        while !self.done(ticket)? {
            if t0.elapsed() > bound {
                return Err(Error::Timeout {
                    pending: self.during(),
                    after: t0.elapsed(),
                });
            }
            std::hint::spin_loop();
        }
        Ok(())
    }
}

#[cfg(all(test, wgpu_vulkan))]
mod tests {
    use super::*;
    use ash::vk::{QueueFamilyProperties, QueueFlags as Q};

    fn family(flags: Q, count: u32) -> QueueFamilyProperties {
        QueueFamilyProperties {
            queue_flags: flags,
            queue_count: count,
            ..Default::default()
        }
    }

    #[test]
    fn side_queues_lie_where_the_families_offer_them() {
        let all = Q::GRAPHICS | Q::COMPUTE | Q::TRANSFER;
        // An NVIDIA H200's families: universal x16, transfer x2, compute x8.
        let nv = [
            family(all, 16),
            family(Q::TRANSFER, 2),
            family(Q::COMPUTE | Q::TRANSFER, 8),
        ];
        assert_eq!(
            places(&nv),
            vec![
                (Side::Second, 0, 1),
                (Side::Transfer(0), 1, 0),
                (Side::Transfer(1), 1, 1)
            ]
        );
        // One transfer queue, and no second universal one.
        assert_eq!(
            places(&[family(all, 1), family(Q::TRANSFER | Q::SPARSE_BINDING, 1)]),
            vec![(Side::Transfer(0), 1, 0)]
        );
        // lavapipe: one universal queue, nothing beside it.
        assert_eq!(places(&[family(all, 1)]), vec![]);
        // A compute family that also transfers is not a copy engine's.
        assert_eq!(
            places(&[family(all, 1), family(Q::COMPUTE | Q::TRANSFER, 2)]),
            vec![]
        );
    }
}
