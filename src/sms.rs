//! The GPU's multiprocessor count, where the driver reports it: wgpu does not, and fused mode's
//! persistent grid and spare workgroups follow it (core/src/lower/fused.rs, `FusedTuning`).

/// The most multiprocessors `T3_SMS` may name.
pub const MAX_SMS: usize = 1 << 16;

/// `named` (`GpuOptions::sms`: T3_SMS at the edge) where given, else what the adapter's Vulkan
/// driver reports (NVIDIA: VK_NV_shader_sm_builtins' `shaderSMCount`), else None (every other
/// driver, the web, lavapipe).
pub fn sm_count(adapter: &wgpu::Adapter, named: Option<u32>) -> Option<u32> {
    if named.is_some() {
        return named;
    }
    #[cfg(wgpu_vulkan)]
    // SAFETY: only reads properties of the adapter's own physical device through its own instance.
    let reported = unsafe { vulkan_sm_count(adapter) };
    #[cfg(not(wgpu_vulkan))]
    let reported = {
        let _ = adapter;
        None
    };
    reported
}

/// VK_NV_shader_sm_builtins' count, where the adapter is Vulkan and offers the extension.
#[cfg(wgpu_vulkan)]
unsafe fn vulkan_sm_count(adapter: &wgpu::Adapter) -> Option<u32> {
    use wgpu::hal::api::Vulkan;
    // SAFETY: the caller's contract; the guard is held only for these queries.
    unsafe {
        let hal = adapter.as_hal::<Vulkan>()?;
        let instance = hal.shared_instance().raw_instance();
        let device = hal.raw_physical_device();
        let offered = instance
            .enumerate_device_extension_properties(device)
            .ok()?
            .iter()
            .any(|e| e.extension_name_as_c_str() == Ok(c"VK_NV_shader_sm_builtins"));
        if !offered {
            return None;
        }
        let mut sm = ash::vk::PhysicalDeviceShaderSMBuiltinsPropertiesNV::default();
        let mut props = ash::vk::PhysicalDeviceProperties2::default().push_next(&mut sm);
        instance.get_physical_device_properties2(device, &mut props);
        (sm.shader_sm_count > 0).then_some(sm.shader_sm_count)
    }
}
