//! t3-core: the GPU-free layer of t3-wgpu, a crate of its own so that the compiler keeps it so.
//!
//! Data flows one way: [`workload`] -> [`shapes`] -> [`schedule`] -> [`plan`] -> [`lower`]
//! (recordings: GPU work as data; fused mode's wing is `lower::fused`). [`kernels`] holds what the
//! host and the kernels share; the main crate binds, encodes and runs the recordings.

pub mod config;
pub mod error;
pub mod kernels;
pub mod lower;
pub mod placement;
pub mod plan;
pub mod reference;
pub mod schedule;
pub mod shapes;
pub mod validate;
pub mod workload;

pub use error::{Error, Result};
