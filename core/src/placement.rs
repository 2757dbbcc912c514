//! Placement: where R ranks live on D devices (contiguous blocks), and whether a step between two ranks
//! crosses devices (then it goes through the host-staged link).

use std::ops::Range;

use serde::Serialize;

use crate::error::{Error, Result};

/// Most devices a count may ask for: far more than any host has GPUs, few enough that a typo (`--devices
/// 200`) is refused before it opens hundreds of devices.
pub const MAX_DEVICES: usize = 64;

/// Where R ranks live on D devices: contiguous blocks, as even as they divide (device d holds ranks
/// d·R/D .. (d+1)·R/D), so that ring neighbours share a device wherever they can.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Placement {
    /// Device of each rank.
    device_of: Vec<usize>,
    /// First rank of each device, then the rank count.
    starts: Vec<usize>,
}

impl Placement {
    /// `ranks` ranks over `devices` devices; more devices than ranks (a device with no rank) is refused.
    pub fn new(ranks: usize, devices: usize) -> Result<Self> {
        if ranks == 0 {
            return Err(Error::invalid("rank count", ranks, "at least 1"));
        }
        if devices == 0 || devices > ranks {
            return Err(Error::invalid(
                "device count",
                format!("{devices} devices for {ranks} ranks"),
                format!("1 to the rank count ({ranks}): every device holds at least one rank"),
            ));
        }
        let starts: Vec<usize> = (0..=devices).map(|d| d * ranks / devices).collect();
        let device_of = (0..devices)
            .flat_map(|d| std::iter::repeat_n(d, starts[d + 1] - starts[d]))
            .collect();
        Ok(Placement { device_of, starts })
    }

    pub fn ranks(&self) -> usize {
        self.device_of.len()
    }

    pub fn devices(&self) -> usize {
        self.starts.len() - 1
    }

    /// The device `rank` lives on.
    pub fn device(&self, rank: usize) -> usize {
        self.device_of[rank]
    }

    /// The ranks on `device`.
    pub fn ranks_on(&self, device: usize) -> Range<usize> {
        self.starts[device]..self.starts[device + 1]
    }

    /// Whether a step from rank `from` to rank `to` goes through the host (their devices differ).
    pub fn crosses(&self, from: usize, to: usize) -> bool {
        self.device(from) != self.device(to)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placement_is_contiguous_and_even() {
        for ranks in 1..=33 {
            for devices in 1..=ranks.min(9) {
                let p = Placement::new(ranks, devices).unwrap();
                assert_eq!((p.ranks(), p.devices()), (ranks, devices));
                let mut next = 0;
                for d in 0..devices {
                    let r = p.ranks_on(d);
                    assert_eq!(r.start, next, "contiguous");
                    let size = r.len();
                    assert!(
                        size == ranks / devices || size == ranks.div_ceil(devices),
                        "{ranks} over {devices}: device {d} holds {size}"
                    );
                    for rank in r.clone() {
                        assert_eq!(p.device(rank), d);
                    }
                    next = r.end;
                }
                assert_eq!(next, ranks);
                for a in 0..ranks {
                    for b in 0..ranks {
                        assert_eq!(p.crosses(a, b), p.device(a) != p.device(b));
                    }
                }
            }
        }
        let p = Placement::new(8, 2).unwrap();
        assert_eq!((p.ranks_on(0), p.ranks_on(1)), (0..4, 4..8));
        assert!(p.crosses(3, 4) && !p.crosses(0, 3) && p.crosses(7, 0));
        let p = Placement::new(5, 2).unwrap();
        assert_eq!((p.ranks_on(0), p.ranks_on(1)), (0..2, 2..5));
    }

    #[test]
    fn placement_refuses_more_devices_than_ranks() {
        let e = Placement::new(2, 3).unwrap_err().to_string();
        assert!(e.contains("3 devices for 2 ranks"), "{e}");
        assert!(e.contains("1 to the rank count (2)"), "{e}");
        assert!(Placement::new(2, 0).is_err());
        assert!(Placement::new(0, 1).is_err());
        assert!(Placement::new(4, 4).is_ok());
    }
}
