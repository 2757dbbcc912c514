//! The page's wasm exports: the adapter described, and one experiment run from a JSON request, each
//! a JSPI export so the synchronous library suspends (instead of blocking) at its waits.

use serde::Deserialize;

use t3_wgpu::config::{Config, StepLead};
use t3_wgpu::experiment::{self, Options, Stability};
use t3_wgpu::gantt::gantt_svg;
use t3_wgpu::gpu::{Gpu, GpuOptions};
use t3_wgpu::modes::Kernels;
use t3_wgpu::plan::ReduceVia;
use t3_wgpu::schedule::Collective;
use t3_wgpu::shapes::{Dtype, Shape};
use t3_wgpu::steps::Link;
use t3_wgpu::{report, workload, Error, Result};

/// What the page asks for: a preset (scaled to the adapter), ranks, chunks, collective and modes.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Request {
    pub preset: String,
    /// Largest scale tried; halved until every buffer fits the adapter's binding limit.
    pub scale: f64,
    pub ranks: Option<usize>,
    pub chunks: usize,
    pub collective: Option<String>,
    pub modes: Vec<String>,
    pub reps: usize,
    pub warmup: usize,
    pub seed: u64,
}

/// The device context, opened once per page: pipelines are built once and every run reuses them.
pub struct Session {
    pub gpu: Gpu,
    pub kernels: Kernels,
}

impl Session {
    pub fn open() -> Result<Self> {
        let gpu = Gpu::new(&GpuOptions::default())?;
        let kernels = Kernels::with(&gpu, Dtype::F32, None)?;
        Ok(Session { gpu, kernels })
    }

    /// The adapter, the features the browser lacks, and the presets the page offers.
    pub fn describe(&self) -> serde_json::Value {
        let cpu = self.gpu.info.device_type == wgpu::DeviceType::Cpu;
        serde_json::json!({
            "adapter": self.gpu.report(),
            "describe": self.gpu.describe(),
            "cpu": cpu,
            "timestamps": self.gpu.has(wgpu::Features::TIMESTAMP_QUERY),
            "mappable_primary_buffers": self.gpu.adapter.features().contains(wgpu::Features::MAPPABLE_PRIMARY_BUFFERS),
            // The demo's scale (src/cli/run.rs): 1/16 on a CPU adapter keeps a run short.
            "default_scale": if cpu { 1.0 / 16.0 } else { 1.0 },
            "presets": workload::names(),
            "modes": t3_wgpu::modes::names(),
            "collectives": Collective::ALL.iter().map(|c| c.name()).collect::<Vec<_>>(),
        })
    }

    /// Runs `req` and returns the report: its JSON, the table text, the Gantt SVG and the label.
    pub fn run(&self, req: &Request) -> Result<serde_json::Value> {
        if !workload::valid_scale(req.scale) {
            return Err(Error::invalid("scale", req.scale, "in (0, 1]"));
        }
        let (pr, scale) = workload::fitted(
            &req.preset,
            workload::DEFAULT_TOKENS,
            req.scale,
            self.gpu.max_binding,
        )
        .ok_or_else(|| Error::invalid("preset", &req.preset, "a name from `t3 presets`"))?;
        let collective = match &req.collective {
            None => pr.collective,
            Some(c) => Collective::parse(c).ok_or_else(|| {
                Error::invalid(
                    "collective",
                    c,
                    "reduce-scatter, direct-reduce-scatter, all-gather or all-reduce",
                )
            })?,
        };
        let config = Config {
            shape: Shape::new(pr.m, pr.n, pr.k)?,
            ranks: req.ranks.unwrap_or(pr.tp),
            chunks: req.chunks,
            collective,
            via: ReduceVia::Update,
            link: Link::Unthrottled,
            dtype: Dtype::F32,
            arbitrate: None,
            gemm_grid: None,
            step_lead: StepLead::Auto,
        };
        config.validate()?;
        req.modes.iter().try_for_each(|m| config.check_mode(m))?;
        let opts = Options {
            config,
            modes: req.modes.clone(),
            reps: req.reps,
            warmup: req.warmup,
            seed: req.seed,
            verify: None,
            stability: Stability {
                warmup_s: 0.0,
                ..Default::default()
            },
        };
        let r = experiment::run(&self.gpu, &self.kernels, &opts)?;
        Ok(serde_json::json!({
            "label": format!("{} ({} x {} ranks, scale {scale})", pr.name, opts.config.shape, opts.config.ranks),
            "scale": scale,
            "report": r,
            "table": report::text(&r),
            "gantt_svg": gantt_svg(&r.timelines),
        }))
    }
}

#[cfg(target_arch = "wasm32")]
// js-sys and wasm-bindgen mark JSPI experimental; this crate is built on it.
#[allow(deprecated)]
mod exports {
    use std::cell::OnceCell;

    use wasm_bindgen::prelude::*;

    use super::{Request, Session};

    thread_local! {
        /// The page's one session; leaked so that runs can borrow it across suspensions.
        static SESSION: OnceCell<&'static Session> = const { OnceCell::new() };
    }

    fn session() -> Result<&'static Session, JsError> {
        if let Some(s) = SESSION.with(|s| s.get().copied()) {
            return Ok(s);
        }
        let s: &'static Session = Box::leak(Box::new(Session::open().map_err(err)?));
        SESSION.with(|c| {
            let _ = c.set(s);
        });
        Ok(s)
    }

    fn err(e: impl std::fmt::Display) -> JsError {
        JsError::new(&e.to_string())
    }

    /// The adapter as JSON (opens the device and builds the pipelines on the first call).
    #[wasm_bindgen(jspi)]
    pub fn describe() -> Result<String, JsError> {
        Ok(session()?.describe().to_string())
    }

    /// Runs the experiment a JSON [`Request`] asks for; the report as JSON.
    #[wasm_bindgen(jspi)]
    pub fn run(request: String) -> Result<String, JsError> {
        let req: Request = serde_json::from_str(&request).map_err(err)?;
        Ok(session()?.run(&req).map_err(err)?.to_string())
    }
}
