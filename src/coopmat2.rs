//! The f16 GEMM on NVIDIA's VK_NV_cooperative_matrix2 (shaders/gemm_coopmat2.comp): what the adapter
//! offers of the extension, its feature struct for the device's opening, and the kernel's pipelines
//! from the committed SPIR-V through wgpu's passthrough.
//!
//! ash 0.38 (Vulkan 1.3.281) predates the extension (1.3.296), so its structs are declared here, as
//! the Vulkan registry defines them.

/// The device extension.
pub const EXTENSION: &std::ffi::CStr = c"VK_NV_cooperative_matrix2";

/// The tracked kernel and the untracked one (the tracker overhead's baseline), compiled from
/// shaders/gemm_coopmat2.comp by scripts/coopmat2/spirv.sh (TRACK=1 and TRACK=0).
const SPIRV_TRACKED: &[u8] = include_bytes!("../shaders/gemm_coopmat2.spv");
const SPIRV_UNTRACKED: &[u8] = include_bytes!("../shaders/gemm_coopmat2_untracked.spv");

/// The kernel's tile columns (BN in the .comp; a test checks the two agree).
pub const TILE_N: usize = 256;

/// The features of `VkPhysicalDeviceCooperativeMatrix2FeaturesNV` an adapter offers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Features {
    pub workgroup_scope: bool,
    pub flexible_dimensions: bool,
    pub reductions: bool,
    pub conversions: bool,
    pub per_element_operations: bool,
    pub tensor_addressing: bool,
    pub block_loads: bool,
}

impl Features {
    /// Whether the kernel can run: workgroup-scope matrices of its tile's sizes, loaded and stored
    /// with tensor addressing.
    pub fn suffice(&self) -> bool {
        self.workgroup_scope && self.flexible_dimensions && self.tensor_addressing
    }

    /// The offered features' names (`t3 info`).
    pub fn names(&self) -> Vec<&'static str> {
        [
            (self.workgroup_scope, "workgroup_scope"),
            (self.flexible_dimensions, "flexible_dimensions"),
            (self.reductions, "reductions"),
            (self.conversions, "conversions"),
            (self.per_element_operations, "per_element_operations"),
            (self.tensor_addressing, "tensor_addressing"),
            (self.block_loads, "block_loads"),
        ]
        .into_iter()
        .filter_map(|(on, name)| on.then_some(name))
        .collect()
    }
}

/// What `t3 info` says of the extension on one adapter.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Offer {
    pub features: Features,
    /// The largest workgroup of workgroup-scope matrices.
    pub workgroup_scope_max_workgroup_size: u32,
    /// The largest M, N or K of flexible-dimension matrices.
    pub flexible_max_dimension: u32,
    /// Workgroup memory the driver reserves for workgroup-scope matrices (bytes).
    pub reserved_shared_memory: u32,
    /// Flexible-dimension configurations, "MxNxK granularity a,b->c scope invocations".
    pub flexible: Vec<String>,
}

/// What `adapter` offers of the extension; None where it is not Vulkan or lacks the extension.
pub fn offer(adapter: &wgpu::Adapter) -> Option<Offer> {
    #[cfg(wgpu_vulkan)]
    {
        // SAFETY: only queries properties of the adapter's own physical device.
        unsafe { nv::offer(adapter) }
    }
    #[cfg(not(wgpu_vulkan))]
    {
        let _ = adapter;
        None
    }
}

/// Whether `device` was opened with the extension and the features the kernel needs
/// (src/vkdevice.rs asks for them wherever the adapter offers them).
pub fn device_ready(device: &wgpu::Device) -> bool {
    #[cfg(wgpu_vulkan)]
    {
        // SAFETY: the hal device is only read.
        unsafe { device.as_hal::<wgpu::hal::api::Vulkan>() }
            .is_some_and(|hal| hal.enabled_device_extensions().contains(&EXTENSION))
    }
    #[cfg(not(wgpu_vulkan))]
    {
        let _ = device;
        false
    }
}

/// The SPIR-V words of `bytes`, checked for what a driver would choke on: whole words, the magic.
pub fn words(bytes: &[u8]) -> crate::Result<Vec<u32>> {
    const MAGIC: u32 = 0x0723_0203;
    let words: Vec<u32> = bytes
        .chunks_exact(4)
        .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
        .collect();
    if !bytes.len().is_multiple_of(4) || words.len() < 5 || words[0] != MAGIC {
        return Err(crate::Error::invalid(
            "coopmat2 SPIR-V",
            format!("{} bytes starting {:08x?}", bytes.len(), words.first()),
            "whole 32-bit words after the SPIR-V magic 0x07230203 (scripts/coopmat2/spirv.sh)",
        ));
    }
    Ok(words)
}

/// The tracked and untracked kernels' SPIR-V words.
pub fn spirv() -> crate::Result<[Vec<u32>; 2]> {
    Ok([words(SPIRV_TRACKED)?, words(SPIRV_UNTRACKED)?])
}

/// The extension's structs and queries (ash 0.38 has neither).
#[cfg(wgpu_vulkan)]
pub(crate) mod nv {
    use ash::vk;
    use std::ffi::c_void;

    /// `VkPhysicalDeviceCooperativeMatrix2FeaturesNV`.
    #[repr(C)]
    #[derive(Clone, Copy, Debug)]
    pub struct FeaturesNV {
        pub s_type: vk::StructureType,
        pub p_next: *mut c_void,
        pub workgroup_scope: vk::Bool32,
        pub flexible_dimensions: vk::Bool32,
        pub reductions: vk::Bool32,
        pub conversions: vk::Bool32,
        pub per_element_operations: vk::Bool32,
        pub tensor_addressing: vk::Bool32,
        pub block_loads: vk::Bool32,
    }

    impl Default for FeaturesNV {
        fn default() -> Self {
            FeaturesNV {
                s_type: vk::StructureType::from_raw(1_000_593_000),
                p_next: std::ptr::null_mut(),
                workgroup_scope: 0,
                flexible_dimensions: 0,
                reductions: 0,
                conversions: 0,
                per_element_operations: 0,
                tensor_addressing: 0,
                block_loads: 0,
            }
        }
    }

    impl FeaturesNV {
        pub fn features(&self) -> super::Features {
            super::Features {
                workgroup_scope: self.workgroup_scope != 0,
                flexible_dimensions: self.flexible_dimensions != 0,
                reductions: self.reductions != 0,
                conversions: self.conversions != 0,
                per_element_operations: self.per_element_operations != 0,
                tensor_addressing: self.tensor_addressing != 0,
                block_loads: self.block_loads != 0,
            }
        }
    }

    /// `VkPhysicalDeviceCooperativeMatrix2PropertiesNV`.
    #[repr(C)]
    struct PropertiesNV {
        s_type: vk::StructureType,
        p_next: *mut c_void,
        workgroup_scope_max_workgroup_size: u32,
        flexible_dimensions_max_dimension: u32,
        workgroup_scope_reserved_shared_memory: u32,
    }

    /// `VkCooperativeMatrixFlexibleDimensionsPropertiesNV`.
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct FlexibleNV {
        s_type: vk::StructureType,
        p_next: *mut c_void,
        m_granularity: u32,
        n_granularity: u32,
        k_granularity: u32,
        a_type: vk::ComponentTypeKHR,
        b_type: vk::ComponentTypeKHR,
        c_type: vk::ComponentTypeKHR,
        result_type: vk::ComponentTypeKHR,
        saturating_accumulation: vk::Bool32,
        scope: vk::ScopeKHR,
        workgroup_invocations: u32,
    }

    type GetFlexible =
        unsafe extern "system" fn(vk::PhysicalDevice, *mut u32, *mut FlexibleNV) -> vk::Result;

    /// Whether the physical device lists the extension.
    pub unsafe fn offered(instance: &ash::Instance, phd: vk::PhysicalDevice) -> bool {
        // SAFETY: the caller's handles.
        unsafe { instance.enumerate_device_extension_properties(phd) }.is_ok_and(|list| {
            list.iter()
                .any(|e| e.extension_name_as_c_str() == Ok(super::EXTENSION))
        })
    }

    /// The features the physical device offers.
    pub unsafe fn features(instance: &ash::Instance, phd: vk::PhysicalDevice) -> FeaturesNV {
        let mut f = FeaturesNV::default();
        let mut f2 = vk::PhysicalDeviceFeatures2 {
            p_next: (&mut f as *mut FeaturesNV).cast(),
            ..Default::default()
        };
        // SAFETY: `f` is a features struct of an extension the device lists, chained alone.
        unsafe { instance.get_physical_device_features2(phd, &mut f2) };
        f.p_next = std::ptr::null_mut();
        f
    }

    pub unsafe fn offer(adapter: &wgpu::Adapter) -> Option<super::Offer> {
        // SAFETY: the caller's contract; the guard is held only for these queries.
        unsafe {
            let hal = adapter.as_hal::<wgpu::hal::api::Vulkan>()?;
            let shared = hal.shared_instance();
            let instance = shared.raw_instance();
            let phd = hal.raw_physical_device();
            if !offered(instance, phd) {
                return None;
            }
            let features = features(instance, phd).features();
            let mut props = PropertiesNV {
                s_type: vk::StructureType::from_raw(1_000_593_002),
                p_next: std::ptr::null_mut(),
                workgroup_scope_max_workgroup_size: 0,
                flexible_dimensions_max_dimension: 0,
                workgroup_scope_reserved_shared_memory: 0,
            };
            let mut p2 = vk::PhysicalDeviceProperties2 {
                p_next: (&mut props as *mut PropertiesNV).cast(),
                ..Default::default()
            };
            instance.get_physical_device_properties2(phd, &mut p2);
            let get = shared.entry().get_instance_proc_addr(
                instance.handle(),
                c"vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV".as_ptr(),
            );
            let flexible = get.map_or_else(Vec::new, |f| {
                let f: GetFlexible = std::mem::transmute(f);
                flexible(f, phd)
            });
            Some(super::Offer {
                features,
                workgroup_scope_max_workgroup_size: props.workgroup_scope_max_workgroup_size,
                flexible_max_dimension: props.flexible_dimensions_max_dimension,
                reserved_shared_memory: props.workgroup_scope_reserved_shared_memory,
                flexible,
            })
        }
    }

    /// The flexible-dimension configurations, described.
    unsafe fn flexible(get: GetFlexible, phd: vk::PhysicalDevice) -> Vec<String> {
        let blank = FlexibleNV {
            s_type: vk::StructureType::from_raw(1_000_593_001),
            p_next: std::ptr::null_mut(),
            m_granularity: 0,
            n_granularity: 0,
            k_granularity: 0,
            a_type: vk::ComponentTypeKHR::FLOAT16,
            b_type: vk::ComponentTypeKHR::FLOAT16,
            c_type: vk::ComponentTypeKHR::FLOAT16,
            result_type: vk::ComponentTypeKHR::FLOAT16,
            saturating_accumulation: 0,
            scope: vk::ScopeKHR::DEVICE,
            workgroup_invocations: 0,
        };
        let mut n = 0u32;
        // SAFETY: the two-call idiom, into a vector of `n` initialised structs.
        unsafe {
            if get(phd, &mut n, std::ptr::null_mut()) != vk::Result::SUCCESS || n > 4096 {
                return Vec::new();
            }
            let mut v = vec![blank; n as usize];
            if get(phd, &mut n, v.as_mut_ptr()).as_raw() < 0 {
                return Vec::new();
            }
            v.truncate(n as usize);
            v.iter()
                .map(|c| {
                    format!(
                        "{}x{}x{} {:?},{:?}->{:?} {:?} {}",
                        c.m_granularity,
                        c.n_granularity,
                        c.k_granularity,
                        c.a_type,
                        c.b_type,
                        c.result_type,
                        c.scope,
                        c.workgroup_invocations
                    )
                    .to_lowercase()
                })
                .collect()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_committed_spirv_is_spirv() {
        let [t, u] = spirv().unwrap();
        assert_ne!(t, u, "the tracked and untracked builds differ");
        assert!(words(&[1, 2, 3]).is_err());
        assert!(words(&[0; 24]).is_err());
    }
}
