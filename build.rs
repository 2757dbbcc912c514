//! Build script: composes every shader composition declared in src/compositions.rs (with
//! src/compose.rs, exactly as src/shaders.rs does at run time), validates each with naga so that a
//! broken kernel fails the build, and reflects what the host must agree with: each kernel's bindings
//! and workgroup memory, and the layouts of the structs it shares with the host. Writes them, with
//! every shader file's source, to $OUT_DIR/reflected.rs (read by src/reflect.rs).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

#[path = "src/compose.rs"]
mod compose;
#[path = "src/compositions.rs"]
#[allow(dead_code)]
mod compositions;

/// Structs the host mirrors (src/reflect.rs tests each against its Rust twin).
const SHARED_STRUCTS: [&str; 7] = [
    "GemmParams",
    "Job",
    "StepParams",
    "Forward",
    "ForwardHeader",
    "GatherParams",
    "PolledParams",
];

/// `const NAME: u32`s the host mirrors, reflected from every kernel that declares them
/// (src/reflect.rs tests each against its Rust twin): workgroup widths, the polled link's flag
/// layout (shaders/polled.wgsl) and fused mode's counter layout (shaders/fused/epilogue.wgsl).
const SHARED_CONSTANTS: [&str; 12] = [
    "INVOCATIONS",
    "CLAIMS_NC",
    "DONE_NC",
    "ARMED_NC",
    "TAIL_NC",
    "ALIVE_PAST_TAIL",
    "LIVE_PAST_TAIL",
    "PAUSE_SLOTS",
    "PAUSE_STRIDE",
    "FLAG_STRIDE",
    "CONSUMED_AT",
    "RESULT_WORDS",
];

fn validate(name: &str, src: &str) -> Result<naga::Module, String> {
    let module =
        naga::front::wgsl::parse_str(src).map_err(|e| e.emit_to_string_with_path(src, name))?;
    naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::all(),
    )
    .validate(&module)
    .map_err(|e| e.emit_to_string_with_path(src, name))?;
    Ok(module)
}

/// Every .wgsl file under `dir`, relative to it.
fn wgsl_files(dir: &Path, rel: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("dir entry").path())
        .collect();
    entries.sort();
    for p in entries {
        let name = rel.join(p.file_name().expect("file name"));
        if p.is_dir() {
            wgsl_files(&p, &name, out);
        } else if p.extension().is_some_and(|x| x == "wgsl") {
            out.push(name);
        }
    }
}

/// One binding: its access ("Uniform", "Read" or "ReadWrite") and its role, the name the WGSL gives
/// its buffer without an `unused_` prefix (a composition that declares a buffer only so that its
/// layout matches another's calls it so).
type Slot = (&'static str, String);

/// (bindings by number; workgroup bytes) of a module.
fn interface(module: &naga::Module) -> Result<(Vec<Slot>, u32), String> {
    let gctx = module.to_ctx();
    let mut bindings = BTreeMap::new();
    let mut workgroup = 0;
    for (_, g) in module.global_variables.iter() {
        let access = match g.space {
            naga::AddressSpace::WorkGroup => {
                workgroup += module.types[g.ty].inner.size(gctx);
                continue;
            }
            naga::AddressSpace::Uniform => "Uniform",
            naga::AddressSpace::Storage { access } => {
                if access.contains(naga::StorageAccess::STORE) {
                    "ReadWrite"
                } else {
                    "Read"
                }
            }
            _ => continue,
        };
        let b = g.binding.as_ref().ok_or("a buffer without a binding")?;
        if b.group != 0 {
            return Err(format!(
                "binding {} in group {}: only group 0 is bound",
                b.binding, b.group
            ));
        }
        let name = g.name.as_deref().ok_or("a buffer without a name")?;
        let role = name.strip_prefix("unused_").unwrap_or(name).to_string();
        bindings.insert(b.binding, (access, role));
    }
    let dense: Vec<Slot> = bindings.values().cloned().collect();
    if bindings.keys().copied().ne(0..dense.len() as u32) {
        return Err(format!(
            "bindings {:?} are not 0..{}",
            bindings.keys(),
            dense.len()
        ));
    }
    Ok((dense, workgroup))
}

/// The value of the module's `const NAME: u32`, if it declares one.
fn constant(module: &naga::Module, name: &str) -> Option<u32> {
    let (_, c) = module
        .constants
        .iter()
        .find(|(_, c)| c.name.as_deref() == Some(name))?;
    match module.global_expressions[c.init] {
        naga::Expression::Literal(naga::Literal::U32(v)) => Some(v),
        naga::Expression::Literal(naga::Literal::AbstractInt(v)) => u32::try_from(v).ok(),
        _ => None,
    }
}

/// The layouts of the shared structs a module declares: name -> (size, [(member, offset)]).
fn structs(module: &naga::Module) -> BTreeMap<String, (u32, Vec<(String, u32)>)> {
    let mut out = BTreeMap::new();
    for (_, t) in module.types.iter() {
        let (Some(name), naga::TypeInner::Struct { members, span }) = (&t.name, &t.inner) else {
            continue;
        };
        if SHARED_STRUCTS.contains(&name.as_str()) {
            let members = members
                .iter()
                .map(|m| (m.name.clone().unwrap_or_default(), m.offset))
                .collect();
            out.insert(name.clone(), (*span, members));
        }
    }
    out
}

fn main() {
    // `wgpu_vulkan`: the targets wgpu builds its Vulkan backend for (wgpu 30's build.rs), where
    // src/alias.rs can make buffers that share memory.
    println!("cargo::rustc-check-cfg=cfg(wgpu_vulkan)");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if ["windows", "linux", "android", "freebsd"].contains(&os.as_str()) {
        println!("cargo::rustc-cfg=wgpu_vulkan");
    }
    println!("cargo:rerun-if-changed=shaders");
    println!("cargo:rerun-if-changed=src/compose.rs");
    println!("cargo:rerun-if-changed=src/compositions.rs");
    let dir = Path::new("shaders");
    let mut files = Vec::new();
    wgsl_files(dir, Path::new(""), &mut files);
    let source = |rel: &str| -> String {
        fs::read_to_string(dir.join(rel)).unwrap_or_else(|e| panic!("shaders/{rel}: {e}"))
    };
    let mut errors = Vec::new();
    let mut used = std::collections::BTreeSet::new();
    // (kernel, epilogue) -> (bindings, workgroup bytes), equal over its operand types and puts.
    let mut interfaces: BTreeMap<(&str, &str), (Vec<Slot>, u32)> = BTreeMap::new();
    // GEMM kernel -> its tile (`const BM`, `BN`, `BK`): tracker thresholds count these tiles and the
    // operands are padded to them.
    let mut tiles: BTreeMap<&str, [u32; 3]> = BTreeMap::new();
    let mut layouts = BTreeMap::new();
    // (kernel, constant) -> its value, equal over the kernel's compositions.
    let mut constants: BTreeMap<(&str, &str), u32> = BTreeMap::new();
    for c in compositions::all() {
        let parts = c.parts();
        used.extend(parts.iter().cloned());
        let name = parts.join(" + ");
        let srcs: Vec<String> = parts.iter().map(|p| source(p)).collect();
        let refs: Vec<&str> = srcs.iter().map(String::as_str).collect();
        let module = match validate(&name, &compose::compose(&refs)) {
            Ok(m) => m,
            Err(e) => {
                errors.push(e);
                continue;
            }
        };
        match interface(&module) {
            Ok(i) => {
                let seen = interfaces
                    .entry((c.kernel, c.epilogue))
                    .or_insert(i.clone());
                if seen.0 != i.0 {
                    errors.push(format!(
                        "{name}: bindings {:?}, other variants {:?}",
                        i.0, seen.0
                    ));
                }
                seen.1 = seen.1.max(i.1);
            }
            Err(e) => errors.push(format!("{name}: {e}")),
        }
        if c.operands.is_some() {
            match ["BM", "BN", "BK"].map(|n| constant(&module, n)) {
                [Some(m), Some(n), Some(k)] => {
                    tiles.insert(c.kernel, [m, n, k]);
                }
                _ => errors.push(format!(
                    "{name}: a GEMM kernel without `const BM, BN, BK: u32`"
                )),
            }
        }
        for name_of in SHARED_CONSTANTS {
            let Some(v) = constant(&module, name_of) else {
                continue;
            };
            if constants
                .insert((c.kernel, name_of), v)
                .is_some_and(|seen| seen != v)
            {
                errors.push(format!(
                    "{name}: const {name_of} differs from another composition's"
                ));
            }
        }
        for (s, l) in structs(&module) {
            if layouts.get(&s).is_some_and(|seen| *seen != l) {
                errors.push(format!(
                    "{name}: struct {s} differs from another composition's"
                ));
            }
            layouts.insert(s, l);
        }
    }
    for f in &files {
        let f = f.to_string_lossy().replace('\\', "/");
        if !used.contains(&f) {
            errors.push(format!(
                "shaders/{f} is in no composition: declare it in src/compositions.rs"
            ));
        }
    }
    for s in SHARED_STRUCTS {
        if !layouts.contains_key(s) {
            errors.push(format!("no composition declares struct {s}"));
        }
    }
    if !errors.is_empty() {
        for e in &errors {
            for line in e.lines() {
                println!("cargo:warning={line}");
            }
        }
        panic!("{} shader problem(s):\n{}", errors.len(), errors.join("\n"));
    }
    let root = std::env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR");
    let mut out =
        String::from("// Generated by build.rs from the shaders with naga: do not edit.\n\n");
    out += "/// Every shader file, by its path under shaders/.\npub const SOURCES: &[(&str, &str)] = &[\n";
    for f in &files {
        let rel = f.to_string_lossy().replace('\\', "/");
        let abs = Path::new(&root).join("shaders").join(f);
        writeln!(
            out,
            "    ({rel:?}, include_str!({:?})),",
            abs.display().to_string()
        )
        .unwrap();
    }
    out += "];\n\n/// Each (kernel, epilogue)'s bindings, their roles and workgroup memory.\npub const INTERFACES: &[Interface] = &[\n";
    for ((kernel, epilogue), (bindings, bytes)) in &interfaces {
        let b: Vec<String> = bindings
            .iter()
            .map(|(a, _)| format!("Access::{a}"))
            .collect();
        let roles: Vec<&str> = bindings.iter().map(|(_, r)| r.as_str()).collect();
        writeln!(
            out,
            "    Interface {{ kernel: {kernel:?}, epilogue: {epilogue:?}, bindings: &[{}], roles: &{roles:?}, workgroup_bytes: {bytes}, tile: {:?} }},",
            b.join(", "),
            tiles.get(kernel).copied().unwrap_or([0; 3])
        )
        .unwrap();
    }
    out += "];\n\n/// The layouts of the structs the host mirrors.\npub const STRUCTS: &[StructLayout] = &[\n";
    for (name, (size, members)) in &layouts {
        writeln!(
            out,
            "    StructLayout {{ name: {name:?}, size: {size}, members: &{members:?} }},"
        )
        .unwrap();
    }
    out += "];\n\n/// The constants the host mirrors: (kernel, name, value).\npub const CONSTANTS: &[(&str, &str, u32)] = &[\n";
    for ((kernel, name), v) in &constants {
        writeln!(out, "    ({kernel:?}, {name:?}, {v}),").unwrap();
    }
    out += "];\n";
    let dest = Path::new(&std::env::var("OUT_DIR").expect("OUT_DIR")).join("reflected.rs");
    fs::write(dest, out).expect("write reflected.rs");
}
