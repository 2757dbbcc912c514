//! Aliased buffers: several wgpu buffers over the same device memory (Vulkan only), so that dispatches
//! of one pass can share memory that they write without the barrier wgpu puts between them.
//!
//! wgpu tracks usage per buffer object and orders any dispatch after one that wrote a buffer it binds
//! (DESIGN.md: "buffers are tracked whole"). Fused mode's spare workgroups read and write what the
//! GEMM writes (the packed output, the counters and the transfer queue), so in one pass they could only
//! start after the GEMM had finished; bound through a second buffer object on the same memory they run
//! beside it, and the protocol in shaders/fused/epilogue.wgsl (coherent or atomic accesses, counters,
//! device-scope barriers) is what orders their accesses, as it already does between workgroups of one
//! dispatch. Where no alias can be made (not Vulkan, the web, a failed allocation) callers bind the
//! same buffer twice and wgpu's barrier keeps the result correct, only serialised.
//!
//! What rests on the driver, not the spec: wgpu's barriers name buffers, so the one it records after a
//! pass for a copy out of the first view does not, by Vulkan's letter, make the writes through the
//! second view available (nor a clear through the first visible to the second). On NVIDIA, AMD and
//! lavapipe both views' accesses meet in the same coherent L2 (or memory), and every fused run is
//! checked against the f64 reference; a driver where they did not would show as wrong results there,
//! not as a silent error.

/// `count` (>= 1) buffers of `size` bytes and `usage` (storage and copies) over one device-local
/// allocation, or None where this device cannot make them (then bind one buffer for all), or where
/// wgpu is built without Vulkan (the web, Apple's platforms: `wgpu_vulkan` in build.rs). Fused mode
/// gives each dispatch that writes the memory in one pass a view of its own.
///
/// # Safety
/// wgpu does not order accesses through one view against another, and their contents start
/// undefined (wgpu takes them as initialised and never zeroes them): the caller writes before it
/// reads and orders the views' accesses itself (fused mode: clears every run, and its counters and
/// barriers, see shaders/fused/epilogue.wgsl).
pub unsafe fn views(
    device: &wgpu::Device,
    label: &str,
    size: u64,
    usage: wgpu::BufferUsages,
    count: usize,
) -> Option<Vec<wgpu::Buffer>> {
    #[cfg(wgpu_vulkan)]
    // SAFETY: the caller's contract, passed on.
    let made = unsafe { vulkan_views(device, label, size, usage, count) };
    #[cfg(not(wgpu_vulkan))]
    let made = {
        let _ = (device, label, size, usage, count);
        None
    };
    made
}

/// [`views`] on a wgpu device whose backend may be Vulkan (None where it is not).
#[cfg(wgpu_vulkan)]
unsafe fn vulkan_views(
    device: &wgpu::Device,
    label: &str,
    size: u64,
    usage: wgpu::BufferUsages,
    count: usize,
) -> Option<Vec<wgpu::Buffer>> {
    use std::sync::Arc;
    use wgpu::hal::api::Vulkan;
    use wgpu::hal::vulkan as hv;

    /// The allocation, freed once both buffers' handles are destroyed.
    struct Memory {
        device: ash::Device,
        memory: ash::vk::DeviceMemory,
    }
    impl Drop for Memory {
        fn drop(&mut self) {
            // SAFETY: both buffers bound to it are destroyed (their callbacks hold the Arc).
            unsafe { self.device.free_memory(self.memory, None) };
        }
    }

    let vk_usage = ash::vk::BufferUsageFlags::STORAGE_BUFFER
        | ash::vk::BufferUsageFlags::TRANSFER_SRC
        | ash::vk::BufferUsageFlags::TRANSFER_DST;
    if count == 0
        || !(wgpu::BufferUsages::STORAGE
            | wgpu::BufferUsages::COPY_SRC
            | wgpu::BufferUsages::COPY_DST)
            .contains(usage)
    {
        return None;
    }
    // SAFETY: the raw handles are used only to create, bind and destroy objects this function owns;
    // the wgpu buffers are made from buffers created on this device with `usage` and `size` (the same
    // create info, so the same requirements; all bound at offset 0), and the memory outlives them
    // (the drop callbacks hold it).
    unsafe {
        // The guard is let go before wgpu is called again.
        let (raw, props) = {
            let hal = device.as_hal::<Vulkan>()?;
            let instance = hal.shared_instance().raw_instance();
            let props = instance.get_physical_device_memory_properties(hal.raw_physical_device());
            (hal.raw_device().clone(), props)
        };
        let info = ash::vk::BufferCreateInfo::default()
            .size(size)
            .usage(vk_usage)
            .sharing_mode(ash::vk::SharingMode::EXCLUSIVE);
        let mut buffers = Vec::with_capacity(count);
        let destroy = |raw: &ash::Device, buffers: &[ash::vk::Buffer]| {
            for &b in buffers {
                raw.destroy_buffer(b, None);
            }
        };
        for _ in 0..count {
            match raw.create_buffer(&info, None) {
                Ok(b) => buffers.push(b),
                Err(_) => {
                    destroy(&raw, &buffers);
                    return None;
                }
            }
        }
        let req = raw.get_buffer_memory_requirements(buffers[0]);
        let local = ash::vk::MemoryPropertyFlags::DEVICE_LOCAL;
        let Some(kind) = (0..props.memory_type_count).find(|&i| {
            req.memory_type_bits & (1 << i) != 0
                && props.memory_types[i as usize]
                    .property_flags
                    .contains(local)
        }) else {
            destroy(&raw, &buffers);
            return None;
        };
        let alloc = ash::vk::MemoryAllocateInfo::default()
            .allocation_size(req.size)
            .memory_type_index(kind);
        let memory = match raw.allocate_memory(&alloc, None) {
            Ok(m) => m,
            Err(_) => {
                destroy(&raw, &buffers);
                return None;
            }
        };
        let memory = Arc::new(Memory {
            device: raw.clone(),
            memory,
        });
        if buffers
            .iter()
            .any(|&b| raw.bind_buffer_memory(b, memory.memory, 0).is_err())
        {
            destroy(&raw, &buffers);
            return None;
        }
        let wrap = |buffer: ash::vk::Buffer, which: String| {
            let keep = Arc::clone(&memory);
            let hal_buffer = hv::Buffer::from_raw_externally_owned(
                buffer,
                Box::new(move || keep.device.destroy_buffer(buffer, None)),
            );
            let label = format!("{label} ({which} view)");
            device.create_buffer_from_hal::<Vulkan>(
                hal_buffer,
                &wgpu::BufferDescriptor {
                    label: Some(&label),
                    size,
                    usage,
                    mapped_at_creation: false,
                },
            )
        };
        Some(
            buffers
                .iter()
                .enumerate()
                .map(|(i, &b)| {
                    wrap(
                        b,
                        if i == 0 {
                            "first".into()
                        } else {
                            format!("aliased {i}")
                        },
                    )
                })
                .collect(),
        )
    }
}
