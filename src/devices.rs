//! A set of devices: `--devices` parsed and opened (every discrete adapter, adapters by index, or N devices on
//! one adapter), and the placement of ranks over them in contiguous blocks.

use std::str::FromStr;

use serde::Serialize;

use crate::error::{Error, Result};
use crate::gpu::{self, Gpu, GpuOptions, WANTED_FEATURES};
pub use crate::placement::Placement;

/// Features a device of a set is opened with, where its adapter has them: the tool's usual ones, plus
/// mappable storage buffers, so that a step kernel can write the host link's outbox in host memory and
/// the host can fill a receiver's inbox in place (src/hostlink.rs).
pub const DEVICE_FEATURES: wgpu::Features =
    WANTED_FEATURES.union(wgpu::Features::MAPPABLE_PRIMARY_BUFFERS);

pub use crate::placement::MAX_DEVICES;

/// What `--devices` accepts, said in every error about it.
const SYNTAX: &str = "all (every discrete adapter), a count N (N devices on the chosen adapter) or adapter \
                      indices as `t3 info` numbers them, separated by commas (one index alone: `1,`)";

/// Which devices the ranks run on: the value of `--devices`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum DeviceSpec {
    /// One device on every discrete adapter.
    All,
    /// One device on each adapter listed, by its index in `t3 info`'s list.
    Adapters(Vec<usize>),
    /// This many devices opened on the one adapter the usual options choose: several "GPUs" that share
    /// nothing, on one GPU or on lavapipe.
    Count(usize),
}

impl FromStr for DeviceSpec {
    type Err = Error;

    /// `all`, `N`, or `i,j,...` (a list needs a comma, so `1,` is adapter 1 and `1` one device).
    fn from_str(s: &str) -> Result<Self> {
        let t = s.trim().to_ascii_lowercase();
        if t == "all" {
            return Ok(DeviceSpec::All);
        }
        if !t.contains(',') {
            let n: usize = t
                .parse()
                .map_err(|_| Error::invalid("--devices", s, SYNTAX))?;
            if n == 0 || n > MAX_DEVICES {
                return Err(Error::invalid(
                    "device count",
                    n,
                    format!("1 to {MAX_DEVICES}"),
                ));
            }
            return Ok(DeviceSpec::Count(n));
        }
        // One trailing comma is how one index alone is written; any other empty item is a typo.
        let body = t.strip_suffix(',').unwrap_or(&t);
        let mut list = Vec::new();
        for item in body.split(',').map(str::trim) {
            let idx: usize = item
                .parse()
                .map_err(|_| Error::invalid("--devices", s, SYNTAX))?;
            if list.contains(&idx) {
                return Err(Error::invalid(
                    "device index",
                    format!("{idx} (listed twice in '{}')", s.trim()),
                    "each adapter at most once (a count opens several devices on one adapter)",
                ));
            }
            list.push(idx);
        }
        if list.is_empty() || list.len() > MAX_DEVICES {
            return Err(Error::invalid("--devices", s, SYNTAX));
        }
        Ok(DeviceSpec::Adapters(list))
    }
}

impl DeviceSpec {
    /// How many devices the spec opens, where that is known before enumerating adapters.
    pub fn count(&self) -> Option<usize> {
        match self {
            DeviceSpec::All => None,
            DeviceSpec::Adapters(l) => Some(l.len()),
            DeviceSpec::Count(n) => Some(*n),
        }
    }
}

/// The devices the ranks run on, each a full GPU context of its own.
pub struct Devices {
    pub gpus: Vec<Gpu>,
    pub spec: DeviceSpec,
}

impl Devices {
    /// Opens the devices `spec` names; `opts` picks the adapter for a count and gives every device its
    /// timeout and limits. Errors name the bad index and the adapters seen.
    pub fn open(spec: &DeviceSpec, opts: &GpuOptions) -> Result<Self> {
        let gpus = match spec {
            DeviceSpec::Count(n) => {
                let first = Gpu::with_features(opts, DEVICE_FEATURES)?;
                let mut gpus = Vec::with_capacity(*n);
                for _ in 1..*n {
                    gpus.push(Gpu::open(
                        first.instance.clone(),
                        first.adapter.clone(),
                        opts,
                        DEVICE_FEATURES,
                    )?);
                }
                gpus.insert(0, first);
                gpus
            }
            DeviceSpec::All | DeviceSpec::Adapters(_) => {
                let (inst, adapters) = gpu::adapters(opts)?;
                let seen = adapters
                    .iter()
                    .enumerate()
                    .map(|(i, a)| {
                        let info = a.get_info();
                        format!(
                            "{i}: {} ({:?}, {:?})",
                            info.name, info.backend, info.device_type
                        )
                    })
                    .collect::<Vec<_>>()
                    .join(", ");
                let seen = if seen.is_empty() { "none".into() } else { seen };
                let chosen: Vec<wgpu::Adapter> = match spec {
                    DeviceSpec::Adapters(list) => list
                        .iter()
                        .map(|&i| {
                            adapters.get(i).cloned().ok_or_else(|| {
                                Error::invalid(
                                    "device index",
                                    i,
                                    format!(
                                        "an adapter index as `t3 info` numbers them; adapters: {seen}"
                                    ),
                                )
                            })
                        })
                        .collect::<Result<_>>()?,
                    _ => adapters
                        .iter()
                        .filter(|a| a.get_info().device_type == wgpu::DeviceType::DiscreteGpu)
                        .cloned()
                        .collect(),
                };
                if chosen.is_empty() {
                    return Err(Error::NoAdapter {
                        wanted:
                            "a discrete GPU for --devices all; a count such as --devices 2 opens \
                                 several devices on any adapter"
                                .into(),
                        seen,
                    });
                }
                chosen
                    .into_iter()
                    .map(|a| Gpu::open(inst.clone(), a, opts, DEVICE_FEATURES))
                    .collect::<Result<_>>()?
            }
        };
        Ok(Devices {
            gpus,
            spec: spec.clone(),
        })
    }

    pub fn len(&self) -> usize {
        self.gpus.len()
    }

    pub fn is_empty(&self) -> bool {
        self.gpus.is_empty()
    }

    /// The device at `index`, or an error naming the index and how many there are.
    pub fn get(&self, index: usize) -> Result<&Gpu> {
        device(&self.gpus, index)
    }

    /// `ranks` ranks over these devices.
    pub fn place(&self, ranks: usize) -> Result<Placement> {
        Placement::new(ranks, self.gpus.len())
    }

    /// One line per device: "device 0: NVIDIA H200 (Vulkan, 580.159.04)".
    pub fn describe(&self) -> Vec<String> {
        self.gpus
            .iter()
            .enumerate()
            .map(|(i, g)| format!("device {i}: {}", g.describe()))
            .collect()
    }

    /// [`Gpu::check`] on every device: a lost one or an escaped error becomes an [`Error`].
    pub fn check(&self, during: &str) -> Result<()> {
        self.gpus.iter().try_for_each(|g| g.check(during))
    }
}

/// Device `index` of `gpus`, or an error naming the index and how many there are.
pub fn device(gpus: &[Gpu], index: usize) -> Result<&Gpu> {
    gpus.get(index).ok_or_else(|| {
        Error::invalid(
            "device",
            index,
            format!("below the device count ({})", gpus.len()),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<DeviceSpec> {
        s.parse()
    }

    #[test]
    fn parses_the_three_forms() {
        assert_eq!(parse("all").unwrap(), DeviceSpec::All);
        assert_eq!(parse(" ALL ").unwrap(), DeviceSpec::All);
        assert_eq!(parse("2").unwrap(), DeviceSpec::Count(2));
        assert_eq!(parse("0,1").unwrap(), DeviceSpec::Adapters(vec![0, 1]));
        assert_eq!(parse(" 3 , 1 ").unwrap(), DeviceSpec::Adapters(vec![3, 1]));
        assert_eq!(parse("1,").unwrap(), DeviceSpec::Adapters(vec![1]));
        assert_eq!(parse("2").unwrap().count(), Some(2));
        assert_eq!(parse("0,2,").unwrap().count(), Some(2));
        assert_eq!(parse("all").unwrap().count(), None);
    }

    #[test]
    fn refuses_bad_values_naming_them() {
        for bad in [
            "", "two", "0,,1", ",", ",1", "-1", "1.5", "0,x", "0;1", "1,,",
        ] {
            let e = parse(bad).expect_err(bad).to_string();
            assert!(
                e.contains("--devices") || e.contains("device"),
                "{bad}: {e}"
            );
            assert!(e.contains(bad.trim()), "{bad}: {e}");
        }
        let e = parse("0").unwrap_err().to_string();
        assert!(
            e.contains("device count: 0") && e.contains("1 to 64"),
            "{e}"
        );
        let e = parse("65").unwrap_err().to_string();
        assert!(e.contains("65"), "{e}");
        let e = parse("0,1,0").unwrap_err().to_string();
        assert!(e.contains("0 (listed twice in '0,1,0')"), "{e}");
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config {
            cases: 256,
            failure_persistence: None,
            ..Default::default()
        })]

        #[test]
        fn any_value_parses_or_is_refused_naming_it(s in "[0-9a-zA-Z, ]{0,12}") {
            match parse(&s) {
                Ok(DeviceSpec::Count(n)) => proptest::prop_assert!((1..=MAX_DEVICES).contains(&n)),
                Ok(DeviceSpec::Adapters(l)) => {
                    let mut u = l.clone();
                    u.sort();
                    u.dedup();
                    proptest::prop_assert_eq!(u.len(), l.len());
                    let again = l.iter().map(|i| i.to_string()).collect::<Vec<_>>().join(",") + ",";
                    proptest::prop_assert_eq!(parse(&again).unwrap(), DeviceSpec::Adapters(l));
                }
                Ok(DeviceSpec::All) => proptest::prop_assert_eq!(s.trim().to_lowercase(), "all"),
                Err(e) => proptest::prop_assert!(e.to_string().contains("device"), "{}", e),
            }
        }
    }
}
