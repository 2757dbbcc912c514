//! The page's wasm exports: the adapter described, and one experiment run from a JSON request, each
//! a JSPI export so the synchronous library suspends (instead of blocking) at its waits.

use std::cell::{Cell, RefCell};

use serde::Deserialize;

use t3_wgpu::config::Config;
use t3_wgpu::experiment::{self, Options, Stability};
use t3_wgpu::gpu::{Gpu, GpuOptions};
use t3_wgpu::modes::{Kernels, ModeKind};
use t3_wgpu::schedule::Collective;
use t3_wgpu::shapes::{Dtype, Shape};
use t3_wgpu::{report, trace, workload, Error, Result};

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
    pub modes: Vec<ModeKind>,
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

    /// What `req` would run, checked by the library's rules without touching the GPU: the fitted
    /// preset and scale, the configuration, and its work (the page's estimate of how long it takes).
    pub fn plan(&self, req: &Request) -> Result<Plan> {
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
                    "reduce-scatter, direct-reduce-scatter, all-gather, all-reduce or direct-all-reduce",
                )
            })?,
        };
        let config = Config {
            chunks: req.chunks,
            collective,
            // The page has no environment: every knob at its default; it draws the timeline.
            fused: t3_wgpu::config::fused::FusedOptions {
                timeline: true,
                ..Default::default()
            },
            ..Config::new(Shape::new(pr.m, pr.n, pr.k)?, req.ranks.unwrap_or(pr.tp))
        };
        // A ticked mode the configuration cannot run (fused mode with the direct all-reduce) is
        // listed as skipped with its reason, as under the CLI's `--mode all`: the page ticks every
        // mode by default, and its reduce is always update.
        config.validate()?;
        let cpu = self.gpu.info.device_type == wgpu::DeviceType::Cpu;
        config.check_memory(cpu, t3_wgpu::validate::available_host_memory())?;
        if req.reps == 0 {
            return Err(Error::invalid("repetition count", 0, "at least 1"));
        }
        let label = format!(
            "{} ({} x {} ranks, scale {scale})",
            pr.name, config.shape, config.ranks
        );
        Ok(Plan {
            label,
            scale,
            config,
        })
    }

    /// Runs `req` and returns the report: its JSON, the table text, the timelines and the label.
    /// `progress` sees each step (building, checking, every timed run); where it answers true the
    /// run stops there and returns `{"stopped": true}`.
    pub fn run(
        &self,
        req: &Request,
        progress: &dyn Fn(&serde_json::Value) -> bool,
    ) -> Result<serde_json::Value> {
        let plan = self.plan(req)?;
        let opts = Options {
            config: plan.config.clone(),
            modes: req.modes.clone(),
            reps: req.reps,
            warmup: req.warmup,
            seed: req.seed,
            verify: None,
            stability: Stability {
                warmup_s: 0.0,
                ..Default::default()
            },
            baselines: Default::default(),
        };
        let stopped = serde_json::json!({ "stopped": true });
        if progress(&serde_json::json!({ "phase": "building" })) {
            return Ok(stopped);
        }
        let (mut sys, inputs) = experiment::prepare(&self.gpu, &self.kernels, &opts)?;
        if progress(&serde_json::json!({ "phase": "checking" })) {
            return Ok(stopped);
        }
        // Every timed run, counted per thing: its count says which warm-up round or rep it was.
        let counts = RefCell::new(std::collections::HashMap::<String, usize>::new());
        let stop = Cell::new(false);
        let adjust = |what: &str, _: &mut experiment::Rep| -> Result<()> {
            let n = {
                let mut c = counts.borrow_mut();
                let n = c.entry(what.to_string()).or_default();
                *n += 1;
                *n
            };
            let p = serde_json::json!({
                "phase": "timing", "thing": what, "run": n,
                "warmup": opts.warmup, "reps": opts.reps,
            });
            if progress(&p) {
                stop.set(true);
                return Err(Error::invalid(
                    "run",
                    "stopped",
                    "not stopped by the visitor",
                ));
            }
            Ok(())
        };
        let r = match experiment::measure_with(&mut sys, &inputs, &opts, &adjust) {
            Err(_) if stop.get() => return Ok(stopped),
            r => r?,
        };
        Ok(serde_json::json!({
            "label": plan.label,
            "scale": plan.scale,
            "table": report::text(&r),
            // The mode's timeline as the CLI's t3-trace.json has it (the page merges the runs').
            "trace": trace::chrome_trace(&r.timelines),
            "report": r,
        }))
    }
}

/// A checked request: what the page shows before it runs.
pub struct Plan {
    pub label: String,
    /// The scale the preset runs at (the request's, halved until it fits the adapter).
    pub scale: f64,
    pub config: Config,
}

impl Plan {
    pub fn json(&self) -> serde_json::Value {
        let c = &self.config;
        serde_json::json!({
            "label": self.label,
            "scale": self.scale,
            "m": c.shape.m, "n": c.shape.n, "k": c.shape.k,
            "ranks": c.ranks,
            "chunks": c.chunks,
            "collective": c.collective.name(),
            "flops": c.total_flops(),
        })
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

    #[wasm_bindgen]
    extern "C" {
        /// The page's progress hook (main.js sets `globalThis.t3Progress`): sees each step as JSON and
        /// answers true to stop the run there.
        #[wasm_bindgen(js_name = t3Progress)]
        fn t3_progress(step: &str) -> bool;
    }

    fn request(json: &str) -> Result<Request, JsError> {
        serde_json::from_str(json).map_err(|e| JsError::new(&format!("a malformed request: {e}")))
    }

    /// Checks a JSON [`Request`] by the library's rules (no GPU work): what it would run, as JSON.
    /// Needs the session [`describe`] opened.
    #[wasm_bindgen]
    pub fn plan(request_json: String) -> Result<String, JsError> {
        let s = SESSION
            .with(|s| s.get().copied())
            .ok_or_else(|| JsError::new("the device is not open yet"))?;
        Ok(s.plan(&request(&request_json)?)
            .map_err(err)?
            .json()
            .to_string())
    }

    /// Runs the experiment a JSON [`Request`] asks for; the report as JSON (or `{"stopped": true}`
    /// where the page's progress hook asked to stop).
    #[wasm_bindgen(jspi)]
    pub fn run(request_json: String) -> Result<String, JsError> {
        let req = request(&request_json)?;
        let progress = |p: &serde_json::Value| t3_progress(&p.to_string());
        Ok(session()?.run(&req, &progress).map_err(err)?.to_string())
    }
}
