//! The zero-copy link's memory: one host allocation imported into several Vulkan devices
//! (`VK_EXT_external_memory_host`), each import a wgpu buffer on its own device over the same bytes.
//!
//! wgpu shares no buffer between devices, and each GPU is its own Vulkan device group, but every GPU
//! reaches pinned host memory over its own bus. So the sender's step kernel writes a chunk straight into
//! host memory and the receiver's kernel reads it from there, with no host copy between: the bus's rate,
//! not the copy threads'. Where a device was not opened with the extension, or an import fails, callers
//! fall back to the host-staged copy ([`super::Path::Mapped`] / [`super::Path::Staged`]).
//!
//! What rests on the driver, not the spec: Vulkan orders memory between queues of one device, not
//! between devices. The host loop hands a chunk to the receiver only after the sender's submission
//! completed (its fence signalled, so its writes reached host memory), and lets the sender write a slot
//! again only after the receiver's submission that read it completed; every run's results are checked
//! against the f64 reference, so a driver that cached host memory across submissions would show as
//! wrong results, not as a silent error.

pub use crate::vkdevice::{adapter_can_import, can_import};

/// Alignment of the host allocation and of its size: a multiple of every driver's
/// `minImportedHostPointerAlignment` seen (4 KiB on NVIDIA and lavapipe), and of huge pages.
const ALIGN: usize = 2 << 20;

/// Zeroed host memory of `size` bytes at [`ALIGN`], freed when the last import that holds it is dropped.
struct HostMemory {
    ptr: std::ptr::NonNull<u8>,
    layout: std::alloc::Layout,
}

// SAFETY: the memory is only reached through the devices' imports (whose use the caller orders) and
// freed once, on drop.
unsafe impl Send for HostMemory {}
unsafe impl Sync for HostMemory {}

impl HostMemory {
    fn new(size: u64) -> Option<Self> {
        let size = usize::try_from(size)
            .ok()?
            .checked_next_multiple_of(ALIGN)?;
        let layout = std::alloc::Layout::from_size_align(size, ALIGN).ok()?;
        // SAFETY: the layout's size is positive (a multiple of ALIGN, at least ALIGN: `size` > 0).
        let ptr = std::ptr::NonNull::new(unsafe { std::alloc::alloc_zeroed(layout) })?;
        Some(HostMemory { ptr, layout })
    }
}

impl Drop for HostMemory {
    fn drop(&mut self) {
        // SAFETY: allocated with this layout in `new`, and every import of it is already freed (each
        // holds an Arc of this).
        unsafe { std::alloc::dealloc(self.ptr.as_ptr(), self.layout) };
    }
}

/// One host allocation and its imports: a wgpu buffer per device over the same bytes.
pub struct Shared {
    /// One buffer per device, in the order the devices were given.
    pub views: Vec<wgpu::Buffer>,
    memory: std::sync::Arc<HostMemory>,
}

impl Shared {
    /// The allocation's first byte, for a host thread that is one end of a link (src/hostlink/polled.rs).
    /// What it reads or writes there is ordered against the devices by that link's own flags.
    pub fn host(&self) -> *mut u8 {
        self.memory.ptr.as_ptr()
    }

    /// The allocation's size, bytes (the size asked, rounded up to its alignment).
    pub fn len(&self) -> usize {
        self.memory.layout.size()
    }

    /// Never: an allocation of zero bytes is not made.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// `size` bytes of host memory as one wgpu buffer on each of `devices` (usage storage and copies), or
/// None where any device cannot import it. The buffers' contents start as zeros.
///
/// # Safety
/// wgpu does not order one device's accesses against another's: the caller lets a device read what
/// another wrote only after the writer's submission completed, and write what another reads only
/// after the reader's submission completed.
pub unsafe fn import(devices: &[&wgpu::Device], label: &str, size: u64) -> Option<Shared> {
    #[cfg(wgpu_vulkan)]
    {
        if size == 0 || devices.iter().any(|d| !can_import(d)) {
            return None;
        }
        let memory = std::sync::Arc::new(HostMemory::new(size)?);
        let views = devices
            .iter()
            .enumerate()
            // SAFETY: the caller's contract, passed on.
            .map(|(i, d)| unsafe { import_one(d, &memory, &format!("{label} (device view {i})")) })
            .collect::<Option<_>>()?;
        Some(Shared { views, memory })
    }
    #[cfg(not(wgpu_vulkan))]
    {
        let _ = (devices, label, size, HostMemory::new);
        None
    }
}

/// One device's import of `memory`, the whole allocation as one buffer.
#[cfg(wgpu_vulkan)]
unsafe fn import_one(
    device: &wgpu::Device,
    memory: &std::sync::Arc<HostMemory>,
    label: &str,
) -> Option<wgpu::Buffer> {
    let size = memory.layout.size() as u64;
    let handle = ash::vk::ExternalMemoryHandleTypeFlags::HOST_ALLOCATION_EXT;
    // SAFETY: the import binds `memory`, which outlives it (the raw buffer's drop holds it).
    unsafe {
        import_pointer(
            device,
            label,
            memory.ptr.as_ptr(),
            size,
            handle,
            Box::new(memory.clone()),
        )
    }
}

/// Another device's memory, mapped for the host at `ptr` (`size` bytes, from [`device_mapped`]),
/// imported into `device` (`VK_EXT_external_memory_host`'s foreign-memory handle): `device`'s kernels
/// then write the other device's memory over the bus, with no host in between. `owner` is the other
/// device's buffer, held until the import is dropped. None where the driver does not import it.
///
/// # Safety
/// `ptr` and `size` are a mapping [`device_mapped`] returned with `owner`; wgpu orders neither
/// device's accesses against the other's: the caller does.
pub unsafe fn import_mapped(
    device: &wgpu::Device,
    label: &str,
    (ptr, size): (*mut u8, u64),
    owner: &wgpu::Buffer,
) -> Option<wgpu::Buffer> {
    #[cfg(wgpu_vulkan)]
    {
        if !can_import(device) {
            return None;
        }
        let handle = ash::vk::ExternalMemoryHandleTypeFlags::HOST_MAPPED_FOREIGN_MEMORY_EXT;
        // SAFETY: the caller's contract; the import holds `owner`, so the mapping outlives it.
        unsafe { import_pointer(device, label, ptr, size, handle, Box::new(owner.clone())) }
    }
    #[cfg(not(wgpu_vulkan))]
    {
        let _ = (device, label, ptr, size, owner);
        None
    }
}

/// `size` bytes at host address `ptr` imported into `device` as handle type `handle`, one buffer;
/// `keep` (what keeps those bytes alive) is held until the buffer is destroyed.
#[cfg(wgpu_vulkan)]
unsafe fn import_pointer(
    device: &wgpu::Device,
    label: &str,
    ptr: *mut u8,
    size: u64,
    handle: ash::vk::ExternalMemoryHandleTypeFlags,
    keep: Box<dyn Send + Sync>,
) -> Option<wgpu::Buffer> {
    use ash::vk;
    let host = ptr as *mut std::ffi::c_void;
    // SAFETY: the caller's contract: `size` bytes at `ptr` live while `keep` does.
    unsafe {
        raw_buffer(
            device,
            label,
            size,
            Some(handle),
            move |raw, instance, phd, kinds| {
                // The import's address and size must be multiples of the device's alignment for
                // it (an unaligned import is undefined, not refused).
                let mut limits = vk::PhysicalDeviceExternalMemoryHostPropertiesEXT::default();
                let mut props = vk::PhysicalDeviceProperties2::default().push_next(&mut limits);
                instance.get_physical_device_properties2(phd, &mut props);
                let align = limits.min_imported_host_pointer_alignment.max(1);
                if !(ptr as u64).is_multiple_of(align) || !size.is_multiple_of(align) {
                    return None;
                }
                let ext = ash::ext::external_memory_host::Device::new(instance, raw);
                let mut host_props = vk::MemoryHostPointerPropertiesEXT::default();
                (ext.fp().get_memory_host_pointer_properties_ext)(
                    raw.handle(),
                    handle,
                    host,
                    &mut host_props,
                )
                .result()
                .ok()?;
                // Host-coherent first: the receiver must see what the sender wrote without a flush.
                let kind = kinds(
                    host_props.memory_type_bits,
                    vk::MemoryPropertyFlags::empty(),
                    vk::MemoryPropertyFlags::HOST_COHERENT,
                )?;
                let mut import = vk::ImportMemoryHostPointerInfoEXT::default()
                    .handle_type(handle)
                    .host_pointer(host);
                let alloc = vk::MemoryAllocateInfo::default()
                    .allocation_size(size)
                    .memory_type_index(kind)
                    .push_next(&mut import);
                let dm = raw.allocate_memory(&alloc, None).ok()?;
                Some((dm, keep))
            },
        )
    }
}

/// `size` bytes of `device`'s own memory that the host maps too (DEVICE_LOCAL and HOST_VISIBLE: the
/// device's BAR): one wgpu buffer, and the host's pointer to the same bytes, mapped while the
/// buffer lives. None where the device has no such memory.
///
/// # Safety
/// wgpu does not order the host's accesses through the pointer against the device's: the caller
/// does, and does not use the pointer once the buffer is dropped.
pub unsafe fn device_mapped(
    device: &wgpu::Device,
    label: &str,
    size: u64,
) -> Option<(wgpu::Buffer, *mut u8)> {
    #[cfg(wgpu_vulkan)]
    {
        // Whole aligned pages: another device imports the mapping only so (`import_mapped`).
        let size = size.checked_next_multiple_of(ALIGN as u64)?;
        use ash::vk;
        let ptr = std::cell::Cell::new(std::ptr::null_mut::<u8>());
        // SAFETY: the memory is the buffer's alone, mapped once and freed with it.
        let buffer = unsafe {
            raw_buffer(device, label, size, None, |raw, _, _, kinds| {
                // Coherent: the host's flag stores reach the device, and the device's the host,
                // with no flush or invalidate between.
                let must = vk::MemoryPropertyFlags::DEVICE_LOCAL
                    | vk::MemoryPropertyFlags::HOST_VISIBLE
                    | vk::MemoryPropertyFlags::HOST_COHERENT;
                let kind = kinds(u32::MAX, must, must)?;
                let alloc = vk::MemoryAllocateInfo::default()
                    .allocation_size(size)
                    .memory_type_index(kind);
                let dm = raw.allocate_memory(&alloc, None).ok()?;
                match raw.map_memory(dm, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty()) {
                    Ok(p) => ptr.set(p as *mut u8),
                    Err(_) => {
                        raw.free_memory(dm, None);
                        return None;
                    }
                }
                Some((dm, Box::new(()) as Box<dyn Send + Sync>))
            })
        }?;
        Some((buffer, ptr.get()))
    }
    #[cfg(not(wgpu_vulkan))]
    {
        let _ = (device, label, size);
        None
    }
}

/// A storage buffer of `size` bytes on `device` over memory that `allocate` makes (given the raw
/// device, the instance, the physical device, and a chooser of memory types: among the allowed bits
/// whose flags contain `must`, one whose flags contain `prefer` where there is one), wrapped as a
/// wgpu buffer;
/// `external` marks the buffer for that handle type. What `allocate` returns besides the memory is
/// kept until the buffer is destroyed.
#[cfg(wgpu_vulkan)]
#[allow(clippy::type_complexity)]
unsafe fn raw_buffer(
    device: &wgpu::Device,
    label: &str,
    size: u64,
    external: Option<ash::vk::ExternalMemoryHandleTypeFlags>,
    allocate: impl FnOnce(
        &ash::Device,
        &ash::Instance,
        ash::vk::PhysicalDevice,
        &dyn Fn(u32, ash::vk::MemoryPropertyFlags, ash::vk::MemoryPropertyFlags) -> Option<u32>,
    ) -> Option<(ash::vk::DeviceMemory, Box<dyn Send + Sync>)>,
) -> Option<wgpu::Buffer> {
    use ash::vk;
    use wgpu::hal::api::Vulkan;
    use wgpu::hal::vulkan as hv;

    /// The buffer and its memory, destroyed when wgpu drops the buffer; then what was kept may go.
    struct Raw {
        device: ash::Device,
        buffer: vk::Buffer,
        memory: vk::DeviceMemory,
        _kept: Box<dyn Send + Sync>,
    }
    impl Drop for Raw {
        fn drop(&mut self) {
            // SAFETY: wgpu is done with the buffer (this runs from its drop callback) and the memory is
            // bound to it alone (freeing mapped memory unmaps it).
            unsafe {
                self.device.destroy_buffer(self.buffer, None);
                self.device.free_memory(self.memory, None);
            }
        }
    }

    // SAFETY: the raw handles create, bind and destroy only objects this function owns; the buffer is
    // made with the usage and size wgpu is told, bound at offset 0 to memory of at least its size.
    unsafe {
        let (raw, instance, phd) = {
            let hal = device.as_hal::<Vulkan>()?;
            (
                hal.raw_device().clone(),
                hal.shared_instance().raw_instance().clone(),
                hal.raw_physical_device(),
            )
        };
        let mut ext = vk::ExternalMemoryBufferCreateInfo::default();
        let mut info = vk::BufferCreateInfo::default()
            .size(size)
            .usage(
                vk::BufferUsageFlags::STORAGE_BUFFER
                    | vk::BufferUsageFlags::TRANSFER_SRC
                    | vk::BufferUsageFlags::TRANSFER_DST,
            )
            .sharing_mode(vk::SharingMode::EXCLUSIVE);
        if let Some(h) = external {
            ext = ext.handle_types(h);
            info = info.push_next(&mut ext);
        }
        let buffer = raw.create_buffer(&info, None).ok()?;
        let req = raw.get_buffer_memory_requirements(buffer);
        let props = instance.get_physical_device_memory_properties(phd);
        let kinds =
            |allowed: u32, must: vk::MemoryPropertyFlags, prefer: vk::MemoryPropertyFlags| {
                let ok = |i: &u32| allowed & req.memory_type_bits & (1 << i) != 0;
                let flags = |i: u32| props.memory_types[i as usize].property_flags;
                (0..props.memory_type_count)
                    .filter(ok)
                    .filter(|&i| flags(i).contains(must))
                    .max_by_key(|&i| flags(i).contains(prefer))
            };
        let made = if req.size <= size {
            allocate(&raw, &instance, phd, &kinds)
        } else {
            None
        };
        let Some((memory, kept)) = made else {
            raw.destroy_buffer(buffer, None);
            return None;
        };
        let held = Raw {
            device: raw.clone(),
            buffer,
            memory,
            _kept: kept,
        };
        if raw.bind_buffer_memory(buffer, memory, 0).is_err() {
            return None;
        }
        let hal_buffer =
            hv::Buffer::from_raw_externally_owned(buffer, Box::new(move || drop(held)));
        Some(device.create_buffer_from_hal::<Vulkan>(
            hal_buffer,
            &wgpu::BufferDescriptor {
                label: Some(label),
                size,
                usage: wgpu::BufferUsages::STORAGE
                    | wgpu::BufferUsages::COPY_SRC
                    | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            },
        ))
    }
}
