//! The GPU's multiprocessor count, where the driver reports it: wgpu does not, and fused mode's
//! persistent grid and spare workgroups follow it (src/lower/fused.rs, `FusedTuning`).

use crate::error::Result;

/// The most multiprocessors `T3_SMS` may name.
pub const MAX_SMS: usize = 1 << 16;

/// `T3_SMS` (1 to [`MAX_SMS`]) where set, else what the adapter's Vulkan driver reports (NVIDIA:
/// VK_NV_shader_sm_builtins' `shaderSMCount`), else None (every other driver, the web, lavapipe).
pub fn sm_count(adapter: &wgpu::Adapter) -> Result<Option<u32>> {
    if let Some(n) = named()? {
        return Ok(Some(n));
    }
    #[cfg(wgpu_vulkan)]
    // SAFETY: only reads properties of the adapter's own physical device through its own instance.
    let reported = unsafe { vulkan_sm_count(adapter) };
    #[cfg(not(wgpu_vulkan))]
    let reported = {
        let _ = adapter;
        None
    };
    Ok(reported)
}

/// What `T3_SMS` names (1 to [`MAX_SMS`]), None where it is unset (checked before the adapters are
/// probed: gpu.rs, `environment`).
pub fn named() -> Result<Option<u32>> {
    Ok(crate::settings::env_count("T3_SMS", MAX_SMS)?.map(|n| n as u32))
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
