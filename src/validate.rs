//! The host's side of validation: the memory it has free, which the core's `Config::check_memory`
//! weighs every rank's buffers against (the core reads no environment).

pub use t3_core::validate::*;

/// Host memory available to a new allocation (Linux's MemAvailable; None where unknown).
pub fn available_host_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}
