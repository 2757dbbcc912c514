//! What the binary says: standard output that a closed pipe cannot panic, and errors with each
//! cause once.

use std::io::Write;

use anyhow::{Context, Result};

/// Standard output was closed by its reader (`t3 sweep | head -1`): stop quietly, as a pipe expects.
#[derive(Debug, thiserror::Error)]
#[error("standard output closed")]
pub struct StdoutClosed;

/// Writes to standard output; a closed pipe becomes [`StdoutClosed`] instead of a panic.
pub fn out(text: &str) -> Result<()> {
    let mut o = std::io::stdout().lock();
    match o.write_all(text.as_bytes()).and_then(|()| o.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Err(StdoutClosed.into()),
        r => Ok(r.context("writing to standard output")?),
    }
}

/// The error and its causes, each once: a cause whose text its parent already quotes (an OS error
/// inside "could not read x: ...") is not repeated.
pub fn chain(e: &anyhow::Error) -> String {
    let mut s = String::new();
    for cause in e.chain() {
        let c = cause.to_string();
        if !s.contains(&c) {
            if !s.is_empty() {
                s += ": ";
            }
            s += &c;
        }
    }
    s
}

/// `n` and `noun`, plural but for one ("1 point", "3 points").
pub fn counted(n: usize, noun: &str) -> String {
    format!("{n} {noun}{}", if n == 1 { "" } else { "s" })
}
