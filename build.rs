//! Build script: parses and validates every shader with naga, so a broken kernel fails the build.
//!
//! Kernels are `shaders/*.wgsl`; snippets are `shaders/put/*.wgsl` (how a kernel writes) and
//! `shaders/epilogue/*.wgsl` (what a GEMM tile does when stored). A kernel that calls `put(`/`put4(`
//! is validated with each put snippet prepended, one that calls `tile_done(` with each epilogue too,
//! exactly as `src/shaders.rs` composes them at run time. The fused epilogue needs the CAS put (its
//! output is `array<atomic<u32>>`), so it is validated with that one only.

use std::fs;
use std::path::{Path, PathBuf};

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

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<_> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "wgsl"))
        .collect();
    v.sort();
    for p in &v {
        println!("cargo:rerun-if-changed={}", p.display());
    }
    v
}

fn main() {
    println!("cargo:rerun-if-changed=shaders");
    let dir = Path::new("shaders");
    let read = |p: &PathBuf| {
        (
            p.display().to_string(),
            fs::read_to_string(p).expect("read shader"),
        )
    };
    let puts: Vec<_> = files(&dir.join("put")).iter().map(read).collect();
    let epilogues: Vec<_> = files(&dir.join("epilogue")).iter().map(read).collect();
    let mut errors = Vec::new();
    let mut check = |name: String, src: String| {
        if let Err(e) = validate(&name, &src) {
            errors.push(e);
        }
    };
    for path in files(dir) {
        let (name, src) = read(&path);
        let uses_put = src.contains("put(") || src.contains("put4(");
        let uses_epilogue = src.contains("tile_done(");
        match (uses_put, uses_epilogue) {
            (false, false) => check(name, src),
            (true, false) => {
                for (pn, ps) in &puts {
                    check(format!("{name} + {pn}"), format!("{ps}\n{src}"));
                }
            }
            (_, true) => {
                for (en, es) in &epilogues {
                    for (pn, ps) in &puts {
                        if en.ends_with("fused.wgsl") && !pn.ends_with("cas.wgsl") {
                            continue;
                        }
                        check(
                            format!("{name} + {pn} + {en}"),
                            format!("{ps}\n{es}\n{src}"),
                        );
                    }
                }
            }
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
