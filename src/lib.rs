//! t3-wgpu: T3's track & trigger overlap of GEMMs and collectives, run and measured on any GPU through wgpu.
//!
//! Data flows one way: [`workload`] -> [`shapes`] -> [`ranks`]' buffers -> [`schedule`] -> [`modes`]
//! -> [`timeline`] -> [`report`].

pub mod compose;
pub mod devices;
pub mod error;
pub mod experiment;
pub mod gantt;
pub mod gemm;
pub mod gpu;
pub mod hostlink;
pub mod link;
pub mod modes;
pub mod plan;
pub mod plot;
pub mod ranks;
pub mod reference;
pub mod report;
pub mod schedule;
pub mod shaders;
pub mod shapes;
pub mod steps;
pub mod timeline;
pub mod trace;
pub mod workload;

pub use error::{Error, Result};
