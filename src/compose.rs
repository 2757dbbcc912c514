//! How a WGSL module is put together from snippets and a kernel; build.rs includes this file too, so
//! what naga validates at build time is exactly what the device compiles.

/// Concatenates `parts` in order with every `enable ...;` directive hoisted to the top (WGSL wants
/// them before any declaration) and repeats dropped.
pub fn compose(parts: &[&str]) -> String {
    let mut enables: Vec<&str> = Vec::new();
    let mut body = String::new();
    for part in parts {
        for line in part.lines() {
            let l = line.trim();
            if is_enable(l) {
                if !enables.contains(&l) {
                    enables.push(l);
                }
            } else {
                body.push_str(line);
                body.push('\n');
            }
        }
    }
    let mut out = enables.join("\n");
    out.push('\n');
    out + &body
}

/// Whether `line` is an `enable ...;` directive ([`compose`] hoists those to the top).
pub fn is_enable(line: &str) -> bool {
    line.trim().starts_with("enable ")
}
