//! What the host shares with the kernels: the parameter blocks and tables they read (the main
//! crate's build reflects each WGSL twin with naga and a test compares the layouts), their
//! workgroup widths, and the variants lowering picks between.

pub mod gather;
pub mod gemm;
pub mod polled;
mod put;
pub mod step;

pub use put::Put;
