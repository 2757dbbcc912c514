//! The calibration table as a person reads it (fixed-width text, each direction's best rate, the
//! streamed rates) and as a file.

use std::fmt::Write as _;

use super::{Direction, HostLinkRow, HostLinkTable, Path};
use crate::error::{Error, Result};

/// "256 MiB", "46.9 KiB", "16 B".
pub(super) fn size(bytes: u64) -> String {
    let b = bytes as f64;
    if bytes >= 1 << 20 {
        let mib = format!("{:.4}", b / (1u64 << 20) as f64);
        format!("{} MiB", mib.trim_end_matches('0').trim_end_matches('.'))
    } else if bytes >= 1 << 10 {
        format!("{:.1} KiB", b / 1024.0)
    } else {
        format!("{bytes} B")
    }
}

impl HostLinkTable {
    /// The row with the highest host rate for the direction `from` -> `to` at its largest size.
    pub fn best(&self, from: usize, to: usize) -> Option<&HostLinkRow> {
        let rows = self.rows.iter().filter(|r| r.from == from && r.to == to);
        let largest = rows.clone().map(|r| r.bytes).max()?;
        rows.filter(|r| r.bytes == largest)
            .max_by(|a, b| a.host_gbps.total_cmp(&b.host_gbps))
    }

    /// A fixed-width text table, then one line per direction with its best rate.
    pub fn text(&self) -> String {
        let mut out = String::new();
        for d in &self.devices {
            let _ = writeln!(out, "{d}");
        }
        let _ = writeln!(
            out,
            "send and landing kernels: {}; timer: {}; medians of {} reps",
            self.step_link, self.timer, self.reps
        );
        let _ = writeln!(
            out,
            "{:<6} {:>10} {:>7} {:>10} {:>8} {:>10} {:>10} {:>10}",
            "link",
            "chunk",
            "threads",
            "write GB/s",
            "map ms",
            "copy GB/s",
            "host GB/s",
            "total GB/s"
        );
        for r in &self.rows {
            let _ = writeln!(
                out,
                "{:<6} {:>10} {:>7} {:>10.2} {:>8.3} {:>10.2} {:>10.2} {:>10.2}",
                format!("{}->{}", r.from, r.to),
                size(r.bytes),
                r.threads,
                r.write_gbps,
                r.map_ms,
                r.copy_gbps,
                r.host_gbps,
                r.total_gbps
            );
        }
        for d in &self.directions {
            if let Some(l) = self.best_line(d) {
                let _ = writeln!(out, "{l}");
            }
        }
        for x in &self.duplex {
            let _ = writeln!(
                out,
                "device {} sending to {} and landing from {} at once (zero-copy, {} each): its kernels {:.2} GB/s each in one pass ({:.2} in two), alone write {:.2}, read {:.2}; the queue's copies {:.2} GB/s each, alone {:.2}, {:.2}",
                x.device,
                x.send.1,
                x.land.0,
                size(x.bytes),
                x.one_pass_gbps,
                x.passes_gbps,
                x.write_gbps,
                x.read_gbps,
                x.copies_gbps,
                x.copy_write_gbps,
                x.copy_read_gbps
            );
            if let Some(b) = &x.beside {
                let _ = writeln!(
                    out,
                    "  beside a {} {} GEMM on device {}{} (ms, one pass): GEMM alone {:.3}, sending and landing alone {:.3}; both, the link first {:.3} ({:.0}% of the shorter hidden), the GEMM first {:.3} (one after the other {:.3})",
                    b.dtype,
                    b.shape,
                    x.device,
                    match (b.send_workgroups, b.land_workgroups) {
                        (Some(s), Some(l)) => format!(", the send on {s} workgroups, the landing on {l}"),
                        _ => String::new(),
                    },
                    b.gemm_ms,
                    b.link_ms,
                    b.link_first_ms,
                    100.0 * b.hidden(),
                    b.gemm_first_ms,
                    b.gemm_ms + b.link_ms
                );
            }
        }
        if self.one_gpu && !self.streams.is_empty() {
            let _ = writeln!(
                out,
                "the {} devices are on one GPU (--devices N) and time-share it: the streamed rows are that GPU's, not a link's between GPUs",
                self.devices.len()
            );
        }
        for st in &self.streams {
            let each: Vec<String> = st
                .directions
                .iter()
                .zip(&st.gbps)
                .map(|((f, t), g)| format!("{f}->{t} {g:.2} GB/s"))
                .collect();
            let zero_copy = self.directions.iter().all(|d| d.send == Path::ZeroCopy);
            let engine = self.directions.iter().all(|d| d.send == Path::Engine);
            let how = if zero_copy {
                "zero-copy".to_string()
            } else if engine {
                "engine (the receivers' copies)".to_string()
            } else {
                format!("copies on {} threads", st.threads)
            };
            let n = self.devices.len();
            let ring = n > 2
                && st.directions.len() == n
                && st.directions.iter().all(|&(f, t)| t == (f + 1) % n);
            let _ = writeln!(
                out,
                "streamed {} x {} through {} slots, {} queued per device, {how}, {}: {}{}",
                st.chunks,
                size(st.bytes),
                st.slots,
                st.in_flight,
                match st.directions.len() {
                    1 => "alone",
                    _ if ring => "the ring's directions at once",
                    _ => "all directions at once",
                },
                each.join(", "),
                // Where each device sends one link and lands one (a pair both ways, a ring), the
                // slowest device's own rate at once bounds every direction.
                if !self.one_gpu && (ring || (n == 2 && st.directions.len() == 2)) {
                    self.against_ceiling(&st.gbps)
                } else {
                    String::new()
                }
            );
        }
        out
    }

    /// Direction `d`'s fastest row in words, as its path moves a chunk.
    fn best_line(&self, d: &Direction) -> Option<String> {
        let b = self.best(d.from, d.to)?;
        Some(match d.send {
            Path::ZeroCopy => format!(
                "{}->{} (zero-copy): the receiver's kernel reads {:.2} GB/s at {}; the sender's writes {:.2} GB/s",
                d.from,
                d.to,
                b.host_gbps,
                size(b.bytes),
                b.write_gbps
            ),
            Path::Engine => format!(
                "{}->{} (engine): the receiver's copy lands {:.2} GB/s at {}; the sender's kernel writes {:.2} GB/s",
                d.from,
                d.to,
                b.host_gbps,
                size(b.bytes),
                b.write_gbps
            ),
            _ => format!(
                "{}->{} (sender {}, receiver {}): {:.2} GB/s host part at {} on {} threads; kernel write {:.2} GB/s",
                d.from,
                d.to,
                d.send.name(),
                d.recv.name(),
                b.host_gbps,
                size(b.bytes),
                b.threads,
                b.write_gbps
            ),
        })
    }

    /// "; the slowest is 82% of the 30.00 GB/s each device sends and lands at once" for streamed rates `gbps` against the slowest
    /// device's sending and landing at once in one pass (nothing where that was not measured).
    fn against_ceiling(&self, gbps: &[f64]) -> String {
        let ceiling = self
            .duplex
            .iter()
            .map(|x| x.one_pass_gbps)
            .fold(f64::INFINITY, f64::min);
        let slowest = gbps.iter().copied().fold(f64::INFINITY, f64::min);
        if !(ceiling.is_finite() && ceiling > 0.0 && slowest.is_finite()) {
            return String::new();
        }
        format!(
            "; the slowest is {:.0}% of the {ceiling:.2} GB/s each device sends and lands at once",
            100.0 * slowest / ceiling
        )
    }

    /// Reads a table `t3 calibrate --devices` saved: a regular file of bounded size (a FIFO or a
    /// device is refused, never read), JSON of this layout.
    pub fn load(path: &str) -> Result<Self> {
        let s = crate::files::read_text(path, "host link table", crate::files::MAX_TABLE_BYTES)?;
        serde_json::from_str(&s).map_err(|e| {
            Error::invalid(
                "host link table",
                path,
                format!("a table written by `t3 calibrate --devices` ({e})"),
            )
        })
    }

    /// The GB/s of the slowest direction where every link a collective drives at once streamed
    /// together: a pair both ways, or the ring's directions (more than two devices); None where the
    /// table has no such row or a rate in it is not positive and finite.
    pub fn streamed_busy(&self) -> Option<f64> {
        let n = self.devices.len();
        let busy = |st: &&super::StreamRow| {
            let ring = (0..n).map(|d| (d, (d + 1) % n));
            match n {
                2 => st.directions.len() == 2,
                _ => n > 2 && st.directions.iter().copied().eq(ring),
            }
        };
        let st = self.streams.iter().find(busy)?;
        let slowest = st.gbps.iter().copied().fold(f64::INFINITY, f64::min);
        (slowest.is_finite() && slowest > 0.0).then_some(slowest)
    }

    /// Writes the table as JSON to `path`, atomically (src/files.rs).
    pub fn save(&self, path: &str) -> Result<()> {
        let json = serde_json::to_string_pretty(self).map_err(|e| Error::Write {
            path: path.to_string(),
            source: e.into(),
        })?;
        crate::files::write(path, &json)
    }
}
