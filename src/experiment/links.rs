//! What each host link carried in a run's collective alone, and that rate read against the host
//! link table `t3 calibrate --devices` saved.

use serde::Serialize;

use super::Report;
use crate::modes::System;

/// One host link as the collective alone used it: the bytes it carries in a run (its steps' chunks
/// as stored) and their rate over T_comm, a floor on the link's own rate (T_comm also holds the
/// landings' adds, the submissions' gaps and the other links' steps it waits for).
#[derive(Clone, Debug, Serialize)]
pub struct LinkSeen {
    pub from: usize,
    pub to: usize,
    /// Whether its slots are host memory both devices bind and their kernels write and read (else
    /// the host copies, or, `engine`, the receiver's copy lands them).
    pub zero_copy: bool,
    /// Whether the receiver's copy lands its chunks out of host memory (`--link-path engine`).
    pub engine: bool,
    pub bytes: u64,
    pub gbps: f64,
}

/// What `t3 calibrate --devices` streamed on these devices' links with every link a collective
/// drives busy at once (the slowest direction), from the table in `file`.
#[derive(Clone, Debug, Serialize)]
pub struct LinkCalibration {
    pub file: String,
    pub streamed_gbps: f64,
}

/// How far the collective's rate on a link may pass the calibration's before the report says one
/// of them is wrong: two measurements on a shared host, minutes apart.
const LINK_SHARE_NOISE: f64 = 1.10;

impl Report {
    /// The links' rates in the collective alone read against `link_calibration`: the calibration,
    /// the largest share of what it streamed, and whether that share passes the noise (then one of
    /// the two figures is wrong: the collective cannot outrun the link).
    pub fn links_against_calibration(&self) -> Option<(&LinkCalibration, f64, bool)> {
        let c = self.link_calibration.as_ref()?;
        let fastest = self.links.iter().map(|l| l.gbps).fold(f64::NAN, f64::max);
        let share = fastest / c.streamed_gbps;
        (fastest.is_finite() && c.streamed_gbps > 0.0).then_some((
            c,
            share,
            share > LINK_SHARE_NOISE,
        ))
    }
}

/// Sets `r.link_calibration` from `table` (read from `file`) where it calibrated the devices `r`
/// ran on (the same adapters in the same order) on the same paths (zero-copy, engine or a host
/// copy); else says
/// why not.
pub fn read_links_against(
    r: &mut Report,
    table: &crate::hostlink::calibration::HostLinkTable,
    file: &str,
) -> std::result::Result<(), String> {
    let ran: Vec<&String> = r
        .devices
        .iter()
        .filter(|d| d.starts_with("device "))
        .collect();
    let same = ran.len() == table.devices.len()
        && ran.iter().zip(&table.devices).all(|(d, t)| {
            d.strip_prefix(t.as_str())
                .is_some_and(|x| x.starts_with(" (ranks"))
        });
    if !same {
        return Err(format!(
            "it calibrated {} (t3 calibrate --devices on these devices makes one)",
            table.devices.join(", ")
        ));
    }
    // Kernels' links, engine links and host copies each calibrate their own rate.
    use crate::hostlink::Path;
    let table_path = (
        table.directions.iter().all(|d| d.send == Path::ZeroCopy),
        table.directions.iter().all(|d| d.send == Path::Engine),
    );
    let run_path = (
        r.links.iter().all(|l| l.zero_copy),
        r.links.iter().all(|l| l.engine),
    );
    if table_path != run_path {
        return Err("it calibrated the links on another path (--link-path)".into());
    }
    let streamed_gbps = table
        .streamed_busy()
        .ok_or("it has no streamed row with every link busy at once")?;
    r.link_calibration = Some(LinkCalibration {
        file: file.to_string(),
        streamed_gbps,
    });
    Ok(())
}

/// Each host link of `sys` as its collective alone used it in `t_comm_ms`.
pub(super) fn links_seen(sys: &System, t_comm_ms: f64) -> Vec<LinkSeen> {
    let links = &sys.host_links;
    links
        .links
        .iter()
        .zip(links.bytes())
        .map(|(l, bytes)| LinkSeen {
            from: l.from,
            to: l.to,
            zero_copy: l.zero_copy,
            engine: l.engine,
            bytes,
            gbps: bytes as f64 / (t_comm_ms * 1e-3).max(1e-12) / 1e9,
        })
        .collect()
}
