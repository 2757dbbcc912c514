//! Opening a Vulkan device with the extensions wgpu does not know, through wgpu-hal's
//! `open_with_callback`: the zero-copy link's `VK_EXT_external_memory_host` (src/hostlink/shared.rs)
//! and the coopmat2 GEMM's `VK_NV_cooperative_matrix2` with its feature struct (src/coopmat2.rs),
//! each where the adapter offers it; and the queues beside wgpu's that src/sidequeue.rs submits to.

/// Opens a device on `adapter` as `request_device` would, with each extension above that the adapter
/// offers enabled besides (coopmat2 only where it also offers the features the kernel needs and
/// `desc` asks for the cooperative matrices and passthrough shaders it runs on); None where the
/// adapter is not Vulkan or offers none of them (open it the usual way then, as after an error).
pub fn request_device(
    adapter: &wgpu::Adapter,
    desc: &wgpu::DeviceDescriptor,
) -> Option<Result<(wgpu::Device, wgpu::Queue), String>> {
    #[cfg(wgpu_vulkan)]
    {
        use crate::coopmat2::nv;
        let import = adapter_can_import(adapter);
        let needs = wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX
            | wgpu::Features::PASSTHROUGH_SHADERS
            | wgpu::Features::SHADER_F16;
        // The kernel's features, as the adapter offers them (all of them: enabling one a kernel does not
        // use costs nothing).
        let mut coopmat2 = crate::coopmat2::offer(adapter)
            .filter(|o| o.features.suffice() && desc.required_features.contains(needs))
            .map(|o| {
                let f = o.features;
                let b = |on: bool| ash::vk::Bool32::from(on);
                nv::FeaturesNV {
                    workgroup_scope: b(f.workgroup_scope),
                    flexible_dimensions: b(f.flexible_dimensions),
                    reductions: b(f.reductions),
                    conversions: b(f.conversions),
                    per_element_operations: b(f.per_element_operations),
                    tensor_addressing: b(f.tensor_addressing),
                    block_loads: b(f.block_loads),
                    ..Default::default()
                }
            });
        if !import && coopmat2.is_none() {
            return None;
        }
        let chain = coopmat2.as_mut().map(|f| f as *mut nv::FeaturesNV);
        // SAFETY: the device is opened with exactly the features and limits wgpu is then told about
        // (`desc`), plus extensions wgpu does not know and never uses; the callback only adds their
        // names, as `open_with_callback` allows, and chains the coopmat2 feature struct (which lives
        // on this frame until the device is created) in front of wgpu's own.
        let open = unsafe {
            let hal = adapter.as_hal::<wgpu::hal::api::Vulkan>()?;
            let sides = crate::sidequeue::offered(&hal);
            hal.open_with_callback(
                desc.required_features,
                &desc.required_limits,
                &desc.memory_hints,
                Some(Box::new(
                    move |args: wgpu::hal::vulkan::CreateDeviceCallbackArgs| {
                        if import {
                            args.extensions.push(ash::ext::external_memory_host::NAME);
                        }
                        crate::sidequeue::add_to(&sides, args.queue_create_infos);
                        if let Some(f) = chain {
                            args.extensions.push(crate::coopmat2::EXTENSION);
                            (*f).p_next = args.create_info.p_next as *mut std::ffi::c_void;
                            args.create_info.p_next = f as *const std::ffi::c_void;
                        }
                    },
                )),
            )
        };
        Some(match open {
            // SAFETY: `open` was made on this adapter's hal adapter with `desc`'s features and limits.
            Ok(open) => {
                let made = unsafe { adapter.create_device_from_hal(open, desc) };
                if let Ok((device, _)) = &made {
                    crate::sidequeue::opened(device);
                }
                made.map_err(|e| e.to_string())
            }
            Err(e) => Err(e.to_string()),
        })
    }
    #[cfg(not(wgpu_vulkan))]
    {
        let _ = (adapter, desc);
        None
    }
}

/// Whether `adapter` can open a device with the extension the zero-copy link needs.
pub fn adapter_can_import(adapter: &wgpu::Adapter) -> bool {
    #[cfg(wgpu_vulkan)]
    {
        // SAFETY: the hal adapter is only read.
        unsafe { adapter.as_hal::<wgpu::hal::api::Vulkan>() }.is_some_and(|hal| {
            hal.physical_device_capabilities()
                .supports_extension(ash::ext::external_memory_host::NAME)
        })
    }
    #[cfg(not(wgpu_vulkan))]
    {
        let _ = adapter;
        false
    }
}

/// Whether `device` was opened with the extension ([`request_device`]).
pub fn can_import(device: &wgpu::Device) -> bool {
    #[cfg(wgpu_vulkan)]
    {
        // SAFETY: the hal device is only read.
        unsafe { device.as_hal::<wgpu::hal::api::Vulkan>() }.is_some_and(|hal| {
            hal.enabled_device_extensions()
                .contains(&ash::ext::external_memory_host::NAME)
        })
    }
    #[cfg(not(wgpu_vulkan))]
    {
        let _ = device;
        false
    }
}
