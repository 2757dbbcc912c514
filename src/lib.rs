//! t3-wgpu: T3's track & trigger overlap of GEMMs and collectives, run and measured on any GPU through wgpu.
//!
//! Data flows one way: [`workload`] -> [`shapes`] -> [`schedule`] -> [`plan`] -> [`lower`]
//! (recordings: GPU work as data) -> [`ranks`]' buffers and the [`executor`] that runs recordings on
//! them (for the [`modes`]) -> [`timeline`] -> [`report`]. [`gpu`], [`shaders`] and the kernels
//! ([`gemm`], [`steps`]) are the device context every GPU stage borrows.

pub mod adapters;
pub mod alias;
pub mod compose;
pub mod compositions;
pub mod config;
pub mod consistency;
pub mod coopmat2;
pub mod devices;
pub mod error;
pub mod executor;
pub mod experiment;
pub mod files;
pub mod gantt;
pub mod gather;
pub mod gemm;
pub mod gpu;
pub mod hostlink;
pub mod link;
pub mod lower;
pub mod modes;
pub mod placement;
pub mod plan;
pub mod plot;
pub mod ranks;
pub mod readback;
pub mod reference;
pub mod reflect;
pub mod report;
pub mod schedule;
pub mod settings;
pub mod shaders;
pub mod shapes;
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
pub mod workload;

pub use error::{Error, Result};
