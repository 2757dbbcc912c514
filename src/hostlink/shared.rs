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

/// `size` bytes of host memory as one wgpu buffer on each of `devices` (usage storage and copies), or
/// None where any device cannot import it. The buffers' contents start as zeros.
///
/// # Safety
/// wgpu does not order one device's accesses against another's: the caller lets a device read what
/// another wrote only after the writer's submission completed, and write what another reads only
/// after the reader's submission completed.
pub unsafe fn import(
    devices: &[&wgpu::Device],
    label: &str,
    size: u64,
) -> Option<Vec<wgpu::Buffer>> {
    #[cfg(wgpu_vulkan)]
    {
        if size == 0 || devices.iter().any(|d| !can_import(d)) {
            return None;
        }
        let memory = std::sync::Arc::new(HostMemory::new(size)?);
        devices
            .iter()
            .enumerate()
            // SAFETY: the caller's contract, passed on.
            .map(|(i, d)| unsafe { import_one(d, &memory, &format!("{label} (device view {i})")) })
            .collect()
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
    use ash::vk;
    use wgpu::hal::api::Vulkan;
    use wgpu::hal::vulkan as hv;

    /// The import and its buffer, destroyed when wgpu drops the buffer; then the host memory may go.
    struct Import {
        device: ash::Device,
        buffer: vk::Buffer,
        memory: vk::DeviceMemory,
        _host: std::sync::Arc<HostMemory>,
    }
    impl Drop for Import {
        fn drop(&mut self) {
            // SAFETY: wgpu is done with the buffer (this runs from its drop callback) and the memory is
            // bound to it alone.
            unsafe {
                self.device.destroy_buffer(self.buffer, None);
                self.device.free_memory(self.memory, None);
            }
        }
    }

    let size = memory.layout.size() as u64;
    let host = memory.ptr.as_ptr() as *mut std::ffi::c_void;
    let handle = vk::ExternalMemoryHandleTypeFlags::HOST_ALLOCATION_EXT;
    // SAFETY: the raw handles create, bind and destroy only objects this function owns; the buffer is
    // made with the usage and size wgpu is told, bound at offset 0 to an import of `memory`, which
    // outlives it (the drop callback holds it).
    unsafe {
        let (raw, instance, phd) = {
            let hal = device.as_hal::<Vulkan>()?;
            (
                hal.raw_device().clone(),
                hal.shared_instance().raw_instance().clone(),
                hal.raw_physical_device(),
            )
        };
        let ext = ash::ext::external_memory_host::Device::new(&instance, &raw);
        let mut host_props = vk::MemoryHostPointerPropertiesEXT::default();
        (ext.fp().get_memory_host_pointer_properties_ext)(
            raw.handle(),
            handle,
            host,
            &mut host_props,
        )
        .result()
        .ok()?;
        let mut external = vk::ExternalMemoryBufferCreateInfo::default().handle_types(handle);
        let info = vk::BufferCreateInfo::default()
            .size(size)
            .usage(
                vk::BufferUsageFlags::STORAGE_BUFFER
                    | vk::BufferUsageFlags::TRANSFER_SRC
                    | vk::BufferUsageFlags::TRANSFER_DST,
            )
            .sharing_mode(vk::SharingMode::EXCLUSIVE)
            .push_next(&mut external);
        let buffer = raw.create_buffer(&info, None).ok()?;
        let req = raw.get_buffer_memory_requirements(buffer);
        let props = instance.get_physical_device_memory_properties(phd);
        let bits = req.memory_type_bits & host_props.memory_type_bits;
        // Host-coherent first: the receiver must see what the sender wrote without a flush.
        let coherent = vk::MemoryPropertyFlags::HOST_COHERENT;
        let kind = (0..props.memory_type_count)
            .filter(|&i| bits & (1 << i) != 0)
            .max_by_key(|&i| {
                props.memory_types[i as usize]
                    .property_flags
                    .contains(coherent)
            });
        let Some(kind) = kind.filter(|_| req.size <= size) else {
            raw.destroy_buffer(buffer, None);
            return None;
        };
        let mut import = vk::ImportMemoryHostPointerInfoEXT::default()
            .handle_type(handle)
            .host_pointer(host);
        let alloc = vk::MemoryAllocateInfo::default()
            .allocation_size(size)
            .memory_type_index(kind)
            .push_next(&mut import);
        let dm = match raw.allocate_memory(&alloc, None) {
            Ok(m) => m,
            Err(_) => {
                raw.destroy_buffer(buffer, None);
                return None;
            }
        };
        let held = Import {
            device: raw.clone(),
            buffer,
            memory: dm,
            _host: memory.clone(),
        };
        if raw.bind_buffer_memory(buffer, dm, 0).is_err() {
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
