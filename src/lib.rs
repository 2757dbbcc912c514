//! t3-wgpu: T3's track & trigger overlap of GEMMs and collectives, run and measured on any GPU through wgpu.
//!
//! Data flows one way: [`workload`] -> [`shapes`] -> [`schedule`] -> [`plan`] -> [`lower`]
//! (recordings: GPU work as data) -> [`ranks`]' buffers and the [`executor`] that runs recordings on
//! them (for the [`modes`]) -> [`timeline`] -> [`report`]. [`gpu`], [`shaders`] and the kernels
//! ([`gemm`], [`steps`]) are the device context every GPU stage borrows.
//!
//! The stages up to [`lower`], with [`config`], [`validate`]'s rules and the [`reference`], are
//! the GPU-free crate t3-core's (core/), re-exported here under their old paths.

pub mod adapters;
pub mod alias;
pub mod check;
pub mod compose;
pub mod compositions;
pub mod consistency;
pub mod coopmat2;
pub mod devices;
pub mod executor;
pub mod experiment;
pub mod files;
pub mod gantt;
pub mod gather;
pub mod gemm;
pub mod gpu;
pub mod hostlink;
pub mod link;
pub mod modes;
pub mod plot;
pub mod ranks;
pub mod readback;
pub mod reflect;
pub mod report;
pub mod settings;
pub mod shaders;
pub mod sidequeue;
pub mod sms;
pub mod staging;
pub mod stats;
pub mod steps;
pub mod suspend;
pub mod timeline;
pub mod timestamps;
pub mod timing;
pub mod trace;
pub mod tracked;
pub mod tune;
pub mod validate;
pub mod vkdevice;

// The GPU-free layer lives in t3-core; its modules keep their paths here.
pub use t3_core::{config, error, lower, placement, plan, reference, schedule, shapes, workload};

pub use error::{Error, Result};
