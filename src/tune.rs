//! `t3 tune`'s library: per mode, the configuration that runs fastest on this adapter ([`search`]
//! over the [`space`] the cost [`model`] orders, measuring through [`rig`]), kept in a per-adapter
//! [`table`] that `run` and `sweep` [`apply`]; [`knobs`] is one configuration as data.

pub mod apply;
pub mod knobs;
pub mod model;
mod rig;
pub mod search;
pub mod space;
pub mod table;

#[cfg(test)]
mod tests;

pub use knobs::{Knobs, Source};
pub use table::Table;
