//! Build script: parses and validates every shader with naga, so a broken kernel fails the build.
//!
//! Kernels are `shaders/*.wgsl`; snippets are `shaders/put/*.wgsl` (how a kernel writes),
//! `shaders/epilogue/*.wgsl` (what a GEMM tile does when stored), `shaders/operands/*.wgsl` (the GEMM
//! operands' element type) and `shaders/gemm/jobs.wgsl` (what the GEMM kernels share). A kernel that
//! calls `put(`/`put4(` is validated with each put snippet prepended; a GEMM kernel (one that calls
//! `tile_of(`) with each operands x put x epilogue combination and the job snippet, composed by
//! `src/compose.rs` exactly as `src/shaders.rs` does at run time. The fused epilogue needs the CAS put
//! (its output is `array<atomic<u32>>`), so it is validated with that one only; the cooperative-matrix
//! kernel (one that uses `coop_mat`) takes f16 operands only.

use std::fs;
use std::path::{Path, PathBuf};

#[path = "src/compose.rs"]
mod compose;

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
    println!("cargo:rerun-if-changed=src/compose.rs");
    let dir = Path::new("shaders");
    let read = |p: &PathBuf| {
        (
            p.display().to_string(),
            fs::read_to_string(p).expect("read shader"),
        )
    };
    let family =
        |sub: &str| -> Vec<(String, String)> { files(&dir.join(sub)).iter().map(read).collect() };
    let puts = family("put");
    let epilogues = family("epilogue");
    let operands = family("operands");
    let jobs = family("gemm");
    let mut errors = Vec::new();
    let mut check = |names: &[&str], parts: &[&str]| {
        let name = names.join(" + ");
        if let Err(e) = validate(&name, &compose::compose(parts)) {
            errors.push(e);
        }
    };
    for path in files(dir) {
        let (name, src) = read(&path);
        if src.contains("tile_of(") {
            for (on, os) in &operands {
                if src.contains("coop_mat") && !on.ends_with("/f16.wgsl") {
                    continue;
                }
                for (en, es) in &epilogues {
                    for (pn, ps) in &puts {
                        if en.ends_with("fused.wgsl") && !pn.ends_with("cas.wgsl") {
                            continue;
                        }
                        for (jn, js) in &jobs {
                            check(&[&name, on, pn, en, jn], &[os, ps, es, js, &src]);
                        }
                    }
                }
            }
        } else if src.contains("put(") || src.contains("put4(") {
            for (pn, ps) in &puts {
                check(&[&name, pn], &[ps, &src]);
            }
        } else {
            check(&[&name], &[&src]);
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
