//! What the driver's compiler made of each pipeline the library builds: registers, spills, shared
//! memory and whatever else the Vulkan driver reports through VK_KHR_pipeline_executable_properties,
//! for every declared shader composition and every cooperative-matrix variant under
//! scripts/coop-variants/. A kernel's speed follows from these (a GEMM workgroup's registers decide
//! how many fit on an SM, spills cost memory traffic in the inner loop), and wgpu does not expose them.
//!
//! The SPIR-V is naga's, written as wgpu-hal 30 writes it: the GEMMs as trusted modules (no bounds
//! checks, no loop bounding), the steps and the gather as checked ones (indices restricted, buffer
//! accesses left to VK_EXT_robustness2 where the device offers it, loops bounded), with overrides at
//! the values the library sets; each pipeline is created on a Vulkan device of its own (ash) with
//! the robustness wgpu enables (robustBufferAccess, robustness2's buffer and image access), so the
//! statistics are the driver's for that SPIR-V, not for wgpu's exact words (wgpu may differ in
//! SPIR-V version and workgroup-memory zeroing).
//!
//! Flags after `--` (`cargo bench --bench pipelines -- --help`): `--only` (pipelines by name),
//! `--adapter`, `--ir-dir`, `--kernel-wgsl` (a kernel file replacing that engine's kernel in all its
//! compositions, as it does in the library: `GemmKernel::with`), `--json FILE`.
//! Native only; where the driver lacks the extension it says so and exits 0.

mod common;

use std::collections::BTreeMap;
use std::ffi::CStr;
use std::path::Path;
use std::process::ExitCode;

use anyhow::{anyhow, bail, Context};
use ash::vk;
use common::{exit_code, kernel_files, Out};
use t3_wgpu::compositions::{self, Composition};
use t3_wgpu::settings::KernelFiles;
use t3_wgpu::shaders;

/// The driver's compile statistics of every pipeline the library builds.
#[derive(clap::Parser, Debug)]
#[command(name = "bench-pipelines")]
struct Args {
    /// Substrings of pipeline names (a comma list): a pipeline runs where its name contains one
    /// [default: all].
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// Substring of the Vulkan device's name [default: the first discrete GPU, else the first].
    #[arg(long)]
    adapter: Option<String>,
    /// Write each executable's internal representations into this folder, where the driver
    /// offers them.
    #[arg(long, value_name = "DIR")]
    ir_dir: Option<std::path::PathBuf>,
    /// WGSL files replacing the GEMM kernels, as t3's `--kernel-wgsl`: simt=FILE,coop=FILE.
    #[arg(long = "kernel-wgsl", value_name = "simt=FILE,coop=FILE", value_parser = kernel_files)]
    kernel_wgsl: Option<KernelFiles>,
    #[command(flatten)]
    out: Out,
}

fn main() -> ExitCode {
    exit_code(run(clap::Parser::parse()))
}

/// One pipeline to compile: a name, its composed source, its override values.
struct Job {
    name: String,
    source: String,
    constants: Vec<(&'static str, f64)>,
    /// Created as the library creates it: trusted (the GEMMs) or with wgpu's runtime checks.
    trusted: bool,
}

fn run(args: Args) -> anyhow::Result<()> {
    let filter: Vec<String> = args
        .only
        .iter()
        .filter(|s| !s.is_empty())
        .cloned()
        .collect();
    let jobs: Vec<Job> = jobs(&args.kernel_wgsl.unwrap_or_default())?
        .into_iter()
        .filter(|j| filter.is_empty() || filter.iter().any(|f| j.name.contains(f.as_str())))
        .collect();
    if jobs.is_empty() {
        bail!("--only {filter:?} matches no pipeline");
    }
    // Lowered first, so that a kernel naga refuses shows on any machine.
    let lowered: Vec<(&Job, Lowered)> = jobs
        .iter()
        .filter_map(|j| match spirv(j, false) {
            Ok(w) => Some((j, w)),
            Err(e) => {
                println!("{}: not lowered: {e:#}", j.name);
                None
            }
        })
        .collect();
    println!(
        "{} of {} pipelines lowered to SPIR-V",
        lowered.len(),
        jobs.len()
    );
    let Some(vk) = Vulkan::new(args.adapter.as_deref())? else {
        return Ok(());
    };
    let ir_dir = args.ir_dir;
    println!("device: {}", vk.name);
    for (job, words) in lowered {
        // A checked module's buffer accesses depend on the device's robustness2.
        let words = if job.trusted || !vk.robust2 {
            words
        } else {
            spirv(job, true)?
        };
        match vk.statistics(&words.0, &words.1, ir_dir.as_deref(), &job.name) {
            Ok(execs) => {
                for (exec, stats) in execs {
                    let line: Vec<String> = stats.iter().map(|(k, v)| format!("{k}={v}")).collect();
                    println!("{} [{exec}]: {}", job.name, line.join(", "));
                    args.out.line(&serde_json::json!({
                        "bench": "pipelines", "device": vk.name, "pipeline": job.name,
                        "executable": exec, "statistics": stats,
                    }))?;
                }
            }
            Err(e) => println!("{}: pipeline not created: {e:#}", job.name),
        }
    }
    Ok(())
}

/// Every declared composition with the override values the library creates it with, then each
/// cooperative-matrix variant file in the cooperative kernel's stored, tracked composition.
fn jobs(kernels: &KernelFiles) -> anyhow::Result<Vec<Job>> {
    let mut v = Vec::new();
    let name = |c: &Composition| {
        let mut s = c.kernel.trim_end_matches(".wgsl").to_string();
        for p in [c.operands.unwrap_or(""), c.put, c.epilogue] {
            if !p.is_empty() {
                s += " ";
                s += p;
            }
        }
        s
    };
    // Shader-level experiments: a kernel file in place of an engine's own, as the library takes it.
    let mut replaced = BTreeMap::new();
    for (what, path, kernel) in [
        ("--kernel-wgsl simt", &kernels.simt, "gemm.wgsl"),
        ("--kernel-wgsl coop", &kernels.coop, "gemm_coop.wgsl"),
    ] {
        if let Some(path) = path {
            let text = std::fs::read_to_string(path).with_context(|| format!("{what}={path}"))?;
            replaced.insert(kernel, text);
        }
    }
    for c in compositions::all() {
        let source = shaders::composed(&c, replaced.get(c.kernel).map(String::as_str));
        // Every pipeline the library makes of it (src/compositions.rs `Composition::overrides`).
        let sets = c.overrides();
        for constants in sets {
            let tag: Vec<String> = constants.iter().map(|(k, v)| format!("{k}={v}")).collect();
            v.push(Job {
                name: format!("{} {}", name(&c), tag.join(" ")).trim().to_string(),
                source: source.clone(),
                constants,
                trusted: c.kernel.starts_with("gemm"),
            });
        }
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/coop-variants");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    files.retain(|p: &std::path::PathBuf| p.extension().is_some_and(|x| x == "wgsl"));
    files.sort();
    let coop = compositions::all()
        .into_iter()
        .find(|c| c.kernel == "gemm_coop.wgsl" && c.put == "store" && c.epilogue == "track")
        .context("the cooperative kernel's stored, tracked composition")?;
    for f in files {
        let text = std::fs::read_to_string(&f).with_context(|| f.display().to_string())?;
        let stem = f.file_stem().unwrap_or_default().to_string_lossy();
        v.push(Job {
            name: format!("coop-variant {stem} TRACK=1 GRID=0"),
            source: shaders::composed(&coop, Some(&text)),
            constants: vec![("TRACK", 1.0), ("GRID", 0.0)],
            trusted: true,
        });
    }
    Ok(v)
}

/// A descriptor binding: set, binding, and whether it is a uniform buffer (else storage).
type Slot = (u32, u32, bool);
/// A job's SPIR-V words and its bindings' slots.
type Lowered = (Vec<u32>, Vec<Slot>);
/// Each executable of a pipeline: its name and the driver's statistics by name.
type Executables = Vec<(String, BTreeMap<String, serde_json::Value>)>;

/// SPIR-V words of `job` as wgpu-hal writes its module (trusted, or checked on a device with or
/// without robustness2's buffer access: `robust2`), and its bindings.
fn spirv(job: &Job, robust2: bool) -> anyhow::Result<Lowered> {
    let src = &job.source;
    let module =
        naga::front::wgsl::parse_str(src).map_err(|e| anyhow!("{}", e.emit_to_string(src)))?;
    let info = naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::all(),
    )
    .validate(&module)
    .map_err(|e| anyhow!("{}", e.emit_to_string(src)))?;
    let constants: naga::back::PipelineConstants = job
        .constants
        .iter()
        .filter(|(k, _)| src.contains(&format!("override {k}")))
        .map(|(k, v)| (k.to_string(), *v))
        .collect();
    let (module, info) =
        naga::back::pipeline_constants::process_overrides(&module, &info, None, &constants)?;
    let slots = module
        .global_variables
        .iter()
        .filter_map(|(_, g)| {
            g.binding
                .as_ref()
                .map(|b| (b.group, b.binding, g.space == naga::AddressSpace::Uniform))
        })
        .collect();
    // wgpu-hal's vulkan/adapter.rs (its naga options) and device.rs (what a trusted module drops).
    use naga::proc::BoundsCheckPolicy::{Restrict, Unchecked};
    let checked = !job.trusted;
    let options = naga::back::spv::Options {
        lang_version: (1, 3),
        flags: naga::back::spv::WriterFlags::empty(),
        force_loop_bounding: checked,
        emit_int_div_checks: checked,
        bounds_check_policies: naga::proc::BoundsCheckPolicies {
            index: if checked { Restrict } else { Unchecked },
            buffer: if checked && !robust2 {
                Restrict
            } else {
                Unchecked
            },
            image_load: Unchecked,
            binding_array: Unchecked,
        },
        ..Default::default()
    };
    let pipeline = naga::back::spv::PipelineOptions {
        shader_stage: naga::ShaderStage::Compute,
        entry_point: "main".into(),
    };
    let words = naga::back::spv::write_vec(&module, &info, &options, Some(&pipeline))?;
    Ok((words, slots))
}

/// A Vulkan device of its own with pipeline statistics enabled (and every feature it offers, so that
/// the kernels' capabilities, f16 and cooperative matrices among them, are enabled).
struct Vulkan {
    _entry: ash::Entry,
    instance: ash::Instance,
    device: ash::Device,
    props: ash::khr::pipeline_executable_properties::Device,
    name: String,
    /// VK_EXT_robustness2's robustBufferAccess2 is on (wgpu then leaves buffer bounds to it).
    robust2: bool,
}

impl Vulkan {
    fn new(wanted: Option<&str>) -> anyhow::Result<Option<Vulkan>> {
        // SAFETY: loads the system's Vulkan loader; every handle below is used while it lives.
        let entry = unsafe { ash::Entry::load() }.context("loading the Vulkan loader")?;
        let app = vk::ApplicationInfo::default().api_version(vk::API_VERSION_1_3);
        let instance = unsafe {
            entry.create_instance(
                &vk::InstanceCreateInfo::default().application_info(&app),
                None,
            )
        }
        .context("vkCreateInstance")?;
        let pds = unsafe { instance.enumerate_physical_devices() }?;
        let named: Vec<(vk::PhysicalDevice, vk::PhysicalDeviceProperties)> = pds
            .iter()
            .map(|&pd| (pd, unsafe { instance.get_physical_device_properties(pd) }))
            .collect();
        let name_of = |p: &vk::PhysicalDeviceProperties| {
            p.device_name_as_c_str()
                .map(|c| c.to_string_lossy().into_owned())
                .unwrap_or_default()
        };
        let pick = match wanted {
            Some(w) => named.iter().find(|(_, p)| name_of(p).contains(w)),
            None => named
                .iter()
                .find(|(_, p)| p.device_type == vk::PhysicalDeviceType::DISCRETE_GPU)
                .or(named.first()),
        };
        let Some((pd, p)) = pick else {
            bail!(
                "no Vulkan device{}: {:?}",
                wanted.map(|w| format!(" named *{w}*")).unwrap_or_default(),
                named.iter().map(|(_, p)| name_of(p)).collect::<Vec<_>>()
            );
        };
        let (pd, name) = (*pd, name_of(p));
        let exts = unsafe { instance.enumerate_device_extension_properties(pd) }?;
        let has = |n: &CStr| exts.iter().any(|e| e.extension_name_as_c_str() == Ok(n));
        let stats_ext = ash::khr::pipeline_executable_properties::NAME;
        if !has(stats_ext) {
            println!("{name}: the driver does not offer {stats_ext:?}: no statistics");
            // SAFETY: nothing made from the instance outlives it.
            unsafe { instance.destroy_instance(None) };
            return Ok(None);
        }
        let coop_ext = ash::khr::cooperative_matrix::NAME;
        let robust2_ext = ash::ext::robustness2::NAME;
        let mut names = vec![stats_ext.as_ptr()];
        let mut f11 = vk::PhysicalDeviceVulkan11Features::default();
        let mut f12 = vk::PhysicalDeviceVulkan12Features::default();
        let mut f13 = vk::PhysicalDeviceVulkan13Features::default();
        let mut fpe = vk::PhysicalDevicePipelineExecutablePropertiesFeaturesKHR::default();
        let mut fcm = vk::PhysicalDeviceCooperativeMatrixFeaturesKHR::default();
        let mut fr2 = vk::PhysicalDeviceRobustness2FeaturesEXT::default();
        let mut features = vk::PhysicalDeviceFeatures2::default().push_next(&mut fpe);
        // Each core version's features only where the device has that version (chaining a
        // newer one is invalid).
        let api = p.api_version;
        if api >= vk::API_VERSION_1_1 {
            features = features.push_next(&mut f11);
        }
        if api >= vk::API_VERSION_1_2 {
            features = features.push_next(&mut f12);
        }
        if api >= vk::API_VERSION_1_3 {
            features = features.push_next(&mut f13);
        }
        if has(coop_ext) {
            names.push(coop_ext.as_ptr());
            features = features.push_next(&mut fcm);
        }
        // wgpu enables VK_EXT_robustness2 where offered (its buffer and image access), and its
        // checked modules then leave buffer bounds to the driver.
        if has(robust2_ext) {
            names.push(robust2_ext.as_ptr());
            features = features.push_next(&mut fr2);
        }
        // Enables what the device offers (robustBufferAccess among them, as wgpu does): the
        // features structs come back filled.
        unsafe { instance.get_physical_device_features2(pd, &mut features) };

        let family = unsafe { instance.get_physical_device_queue_family_properties(pd) }
            .iter()
            .position(|q| q.queue_flags.contains(vk::QueueFlags::COMPUTE))
            .context("a compute queue family")? as u32;
        let prio = [1.0f32];
        let queues = [vk::DeviceQueueCreateInfo::default()
            .queue_family_index(family)
            .queue_priorities(&prio)];
        let info = vk::DeviceCreateInfo::default()
            .queue_create_infos(&queues)
            .enabled_extension_names(&names)
            .push_next(&mut features);
        let device = match unsafe { instance.create_device(pd, &info, None) } {
            Ok(d) => d,
            Err(e) => {
                // SAFETY: nothing made from the instance outlives it.
                unsafe { instance.destroy_instance(None) };
                bail!("vkCreateDevice: {e}");
            }
        };
        let robust2 = fr2.robust_buffer_access2 != 0;
        let props = ash::khr::pipeline_executable_properties::Device::new(&instance, &device);
        Ok(Some(Vulkan {
            _entry: entry,
            instance,
            device,
            props,
            name,
            robust2,
        }))
    }

    /// Creates the compute pipeline of `words` (bindings `slots`) and returns each executable's
    /// name and statistics; writes its internal representations under `ir_dir` where offered.
    fn statistics(
        &self,
        words: &[u32],
        slots: &[Slot],
        ir_dir: Option<&Path>,
        label: &str,
    ) -> anyhow::Result<Executables> {
        let d = &self.device;
        let mut sets: BTreeMap<u32, Vec<vk::DescriptorSetLayoutBinding>> = BTreeMap::new();
        for &(set, binding, uniform) in slots {
            sets.entry(set)
                .or_default()
                .push(vk::DescriptorSetLayoutBinding {
                    binding,
                    descriptor_type: if uniform {
                        vk::DescriptorType::UNIFORM_BUFFER
                    } else {
                        vk::DescriptorType::STORAGE_BUFFER
                    },
                    descriptor_count: 1,
                    stage_flags: vk::ShaderStageFlags::COMPUTE,
                    ..Default::default()
                });
        }
        let last = sets.keys().next_back().copied().unwrap_or(0);
        // SAFETY (every call below): handles of this device, destroyed before returning.
        let layouts = (0..=last)
            .map(|s| {
                let b = sets.get(&s).map(Vec::as_slice).unwrap_or(&[]);
                unsafe {
                    d.create_descriptor_set_layout(
                        &vk::DescriptorSetLayoutCreateInfo::default().bindings(b),
                        None,
                    )
                }
            })
            .collect::<Result<Vec<_>, _>>()?;
        let layout = unsafe {
            d.create_pipeline_layout(
                &vk::PipelineLayoutCreateInfo::default().set_layouts(&layouts),
                None,
            )
        }?;
        let module = unsafe {
            d.create_shader_module(&vk::ShaderModuleCreateInfo::default().code(words), None)
        }?;
        let stage = vk::PipelineShaderStageCreateInfo::default()
            .stage(vk::ShaderStageFlags::COMPUTE)
            .module(module)
            .name(c"main");
        let mut flags = vk::PipelineCreateFlags::CAPTURE_STATISTICS_KHR;
        if ir_dir.is_some() {
            flags |= vk::PipelineCreateFlags::CAPTURE_INTERNAL_REPRESENTATIONS_KHR;
        }
        let created = unsafe {
            d.create_compute_pipelines(
                vk::PipelineCache::null(),
                &[vk::ComputePipelineCreateInfo::default()
                    .stage(stage)
                    .layout(layout)
                    .flags(flags)],
                None,
            )
        };
        let result = match created {
            Ok(p) => {
                let r = self.read(p[0], ir_dir, label);
                unsafe { d.destroy_pipeline(p[0], None) };
                r
            }
            Err((_, e)) => Err(anyhow!("vkCreateComputePipelines: {e}")),
        };
        unsafe {
            d.destroy_shader_module(module, None);
            d.destroy_pipeline_layout(layout, None);
            for l in layouts {
                d.destroy_descriptor_set_layout(l, None);
            }
        }
        result
    }

    fn read(
        &self,
        pipeline: vk::Pipeline,
        ir_dir: Option<&Path>,
        label: &str,
    ) -> anyhow::Result<Executables> {
        let execs = unsafe {
            self.props.get_pipeline_executable_properties(
                &vk::PipelineInfoKHR::default().pipeline(pipeline),
            )
        }?;
        let mut out = Vec::new();
        for (i, e) in execs.iter().enumerate() {
            let info = vk::PipelineExecutableInfoKHR::default()
                .pipeline(pipeline)
                .executable_index(i as u32);
            let exec = e
                .name_as_c_str()
                .map(|c| c.to_string_lossy().into_owned())
                .unwrap_or_default();
            let mut stats = BTreeMap::new();
            for s in unsafe { self.props.get_pipeline_executable_statistics(&info) }? {
                let key = s
                    .name_as_c_str()
                    .map(|c| c.to_string_lossy().into_owned())
                    .unwrap_or_default();
                // SAFETY: the union member read is the one `format` names.
                let value = unsafe {
                    match s.format {
                        vk::PipelineExecutableStatisticFormatKHR::BOOL32 => {
                            serde_json::json!(s.value.b32 != 0)
                        }
                        vk::PipelineExecutableStatisticFormatKHR::INT64 => {
                            serde_json::json!(s.value.i64)
                        }
                        vk::PipelineExecutableStatisticFormatKHR::UINT64 => {
                            serde_json::json!(s.value.u64)
                        }
                        _ => serde_json::json!(s.value.f64),
                    }
                };
                stats.insert(key, value);
            }
            if let Some(dir) = ir_dir {
                self.write_ir(&info, dir, &format!("{label} {exec}"))?;
            }
            out.push((exec, stats));
        }
        Ok(out)
    }

    /// Each internal representation of executable `info` as a file under `dir` (text ones as text).
    fn write_ir(
        &self,
        info: &vk::PipelineExecutableInfoKHR,
        dir: &Path,
        label: &str,
    ) -> anyhow::Result<()> {
        let get = self
            .props
            .fp()
            .get_pipeline_executable_internal_representations_khr;
        let dev = self.device.handle();
        let mut n = 0u32;
        // SAFETY: the two-call idiom; the second call's data pointers point into `bufs`, alive until
        // the reps are read.
        unsafe { get(dev, info, &mut n, std::ptr::null_mut()) }.result()?;
        let mut reps = vec![vk::PipelineExecutableInternalRepresentationKHR::default(); n as usize];
        unsafe { get(dev, info, &mut n, reps.as_mut_ptr()) }.result()?;
        let mut bufs: Vec<Vec<u8>> = reps.iter().map(|r| vec![0u8; r.data_size]).collect();
        for (r, b) in reps.iter_mut().zip(bufs.iter_mut()) {
            r.p_data = b.as_mut_ptr().cast();
        }
        unsafe { get(dev, info, &mut n, reps.as_mut_ptr()) }.result()?;
        std::fs::create_dir_all(dir)?;
        let safe = file_safe(label);
        for (i, (r, b)) in reps.iter().zip(&bufs).enumerate() {
            let what = file_safe(
                &r.name_as_c_str()
                    .map(|c| c.to_string_lossy().into_owned())
                    .unwrap_or_default(),
            );
            let ext = if r.is_text != 0 { "txt" } else { "bin" };
            let data = if r.is_text != 0 {
                &b[..b.iter().position(|&x| x == 0).unwrap_or(b.len())]
            } else {
                &b[..]
            };
            std::fs::write(dir.join(format!("{safe}.{i}-{what}.{ext}")), data)?;
        }
        Ok(())
    }
}

impl Drop for Vulkan {
    fn drop(&mut self) {
        // SAFETY: every object of the device was destroyed after use.
        unsafe {
            self.device.destroy_device(None);
            self.instance.destroy_instance(None);
        }
    }
}

/// `s` with every character but ASCII letters, digits and '-' made '_': a file name's part.
fn file_safe(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}
