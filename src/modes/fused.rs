//! Fused mode: the device-side trigger (T3's transparency). Not yet runnable: reported as skipped.

use super::{Mode, Run, System};
use crate::error::{Error, Result};

pub struct Fused;

impl Mode for Fused {
    fn name(&self) -> &'static str {
        "fused"
    }

    fn skip_reason(&self, sys: &System) -> Option<String> {
        if !sys.gpu.has(wgpu::Features::MEMORY_DECORATION_COHERENT) {
            return Some(format!(
                "adapter {} lacks MEMORY_DECORATION_COHERENT",
                sys.gpu.info.name
            ));
        }
        Some("the device-side trigger kernel is not built yet".into())
    }

    fn run(&self, _sys: &System) -> Result<Run> {
        Err(Error::invalid(
            "mode",
            "fused",
            "a mode whose kernel exists",
        ))
    }
}
