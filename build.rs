//! Build script: parses and validates every shader with naga, so a broken kernel fails the build.
//!
//! Kernels are `shaders/*.wgsl`. A kernel that writes through `put(` or `put4(` is validated once with each
//! snippet in `shaders/put/` prepended, exactly as `src/shaders.rs` composes them at run time.

use std::fs;
use std::path::Path;

fn validate(name: &str, src: &str) -> Result<(), String> {
    let module =
        naga::front::wgsl::parse_str(src).map_err(|e| e.emit_to_string_with_path(src, name))?;
    naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::all(),
    )
    .validate(&module)
    .map_err(|e| e.emit_to_string_with_path(src, name))?;
    Ok(())
}

fn main() {
    println!("cargo:rerun-if-changed=shaders");
    let dir = Path::new("shaders");
    let mut puts = Vec::new();
    for e in fs::read_dir(dir.join("put")).expect("shaders/put") {
        let p = e.expect("dir entry").path();
        println!("cargo:rerun-if-changed={}", p.display());
        puts.push((
            p.display().to_string(),
            fs::read_to_string(&p).expect("read put snippet"),
        ));
    }
    puts.sort();
    let mut errors = Vec::new();
    let mut kernels: Vec<_> = fs::read_dir(dir)
        .expect("shaders/")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "wgsl"))
        .collect();
    kernels.sort();
    for path in kernels {
        println!("cargo:rerun-if-changed={}", path.display());
        let src = fs::read_to_string(&path).expect("read shader");
        let name = path.display().to_string();
        if src.contains("put(") || src.contains("put4(") {
            for (pname, psrc) in &puts {
                let full = format!("{psrc}\n{src}");
                if let Err(e) = validate(&format!("{name} + {pname}"), &full) {
                    errors.push(e);
                }
            }
        } else if let Err(e) = validate(&name, &src) {
            errors.push(e);
        }
    }
    if !errors.is_empty() {
        for e in &errors {
            for line in e.lines() {
                println!("cargo:warning={line}");
            }
        }
        panic!(
            "{} shader(s) failed naga validation:\n{}",
            errors.len(),
            errors.join("\n")
        );
    }
}
