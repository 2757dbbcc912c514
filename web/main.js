// The page: checks for WebGPU and JSPI, fills the controls from the adapter, runs each chosen mode
// through the wasm export and shows its row, timeline and verification as it comes in.
// window.t3 carries the state for the page test (web/test).
import init, { describe, run } from "./pkg/t3_web.js";

const $ = (id) => document.getElementById(id);
const state = (window.t3 = {
  status: "starting", reports: [], error: null, firstResultMs: null, firstResultSincePageMs: null,
});
const TOLERANCE = 1e-4; // the CLI's bound on max_rel_error (src/cli/run.rs `wrong`)

function fail(msg) {
  state.status = "error";
  state.error = msg;
  $("missing").hidden = false;
  $("missing").textContent = msg;
}

function missing() {
  if (!navigator.gpu) return "This browser has no WebGPU (navigator.gpu is missing): try a recent Chrome, Edge or Firefox, or enable WebGPU in its settings.";
  if (typeof WebAssembly.Suspending !== "function" || typeof WebAssembly.promising !== "function")
    return "This browser has WebGPU but not WebAssembly JS Promise Integration (JSPI), which the page needs to wait for the GPU: Chromium 137+ or Firefox 153+.";
  return null;
}

function option(sel, value, text, selected) {
  const o = document.createElement("option");
  o.value = value;
  o.textContent = text ?? value;
  o.selected = !!selected;
  sel.appendChild(o);
}

const fmt = (x, d = 3) => (x === null || x === undefined ? "–" : Number(x).toFixed(d));

function showRow(r) {
  const tr = document.createElement("tr");
  const wrong = r.trackers_ok === false || (r.max_rel_error !== null && !(r.max_rel_error <= TOLERANCE));
  const cells = [r.mode, fmt(r.median_ms), fmt(r.speedup, 2), fmt(r.overlap_efficiency, 2),
    r.max_rel_error === null ? "–" : r.max_rel_error.toExponential(2),
    r.trackers_ok === null ? "–" : r.trackers_ok ? "ok" : "WRONG",
    r.skipped ?? r.checks_failed.join("; ")];
  for (const c of cells) {
    const td = document.createElement("td");
    td.textContent = c;
    tr.appendChild(td);
  }
  if (wrong) tr.className = "bad";
  $("results").tBodies[0].appendChild(tr);
}

async function runAll(params) {
  const modes = [...document.querySelectorAll("#modes input:checked")].map((c) => c.value);
  const base = {
    preset: $("preset").value,
    scale: Number($("scale").value),
    ranks: $("ranks").value ? Number($("ranks").value) : null,
    chunks: Number($("chunks").value),
    collective: $("collective").value || null,
    reps: Number($("reps").value),
    warmup: 1,
    seed: Number(params.get("seed") ?? 1),
  };
  $("results").tBodies[0].replaceChildren();
  $("timeline").replaceChildren();
  $("text").textContent = "";
  $("run").disabled = true;
  state.status = "running";
  state.reports = [];
  state.firstResultMs = null;
  const t0 = performance.now();
  try {
    for (const mode of modes) {
      $("status").textContent = `Running ${mode}…`;
      const out = JSON.parse(await run(JSON.stringify({ ...base, modes: [mode] })));
      if (state.firstResultMs === null) {
        state.firstResultMs = performance.now() - t0;
        // From navigation: wasm load, device, pipelines, and the first mode's run.
        state.firstResultSincePageMs = performance.now();
      }
      state.reports.push({ mode, ...out });
      out.report.results.filter((r) => r.mode === mode).forEach(showRow);
      const h = document.createElement("h3");
      h.textContent = `${mode}: ${out.label}`;
      const fig = document.createElement("div");
      fig.innerHTML = out.gantt_svg;
      $("timeline").append(h, fig);
      $("text").textContent += `${mode}: ${out.label}\n${out.table}\n`;
    }
    const secs = ((performance.now() - t0) / 1000).toFixed(1);
    $("status").textContent = `Done in ${secs} s (first result after ${(state.firstResultMs / 1000).toFixed(1)} s).`;
    state.status = "done";
  } catch (e) {
    $("status").textContent = "";
    fail(`The run failed: ${e.message ?? e}`);
  } finally {
    $("run").disabled = false;
  }
}

async function main() {
  const params = new URLSearchParams(location.search);
  const why = missing();
  if (why) return fail(why);
  await init();
  let info;
  try {
    info = JSON.parse(await describe());
  } catch (e) {
    return fail(`This browser has WebGPU but gave no usable adapter (WebGPU may be disabled, or this GPU blocklisted): ${e.message ?? e}`);
  }
  state.adapter = info;
  const lacks = [];
  if (!info.timestamps) lacks.push("timestamp queries (times come from the host clock)");
  if (!info.mappable_primary_buffers) lacks.push("mappable storage buffers (no host-link modes)");
  // The browser may hide the adapter's name (WebGPU exposes only what the user agent chooses).
  const name = info.adapter.name || `a WebGPU adapter (${info.adapter.device_type}; the browser hides its name)`;
  $("adapter").textContent = `Adapter: ${name}${info.cpu ? " (a CPU adapter: runs start at scale 1/16)" : ""}.` + (lacks.length ? ` The browser lacks ${lacks.join(" and ")}.` : "");
  for (const p of info.presets) option($("preset"), p, p, p === (params.get("preset") ?? "tnlg-op-tp4"));
  const scale = Number(params.get("scale") ?? info.default_scale);
  for (const d of [1, 2, 4, 8, 16, 32, 64, 128]) option($("scale"), 1 / d, d === 1 ? "1" : `1/${d}`, Math.abs(1 / d - scale) < 1e-9);
  for (const c of info.collectives) option($("collective"), c, c, c === params.get("collective"));
  const wanted = params.get("modes")?.split(",") ?? info.modes;
  for (const m of info.modes) {
    const l = document.createElement("label");
    l.innerHTML = `<input type="checkbox" value="${m}" ${wanted.includes(m) ? "checked" : ""}> ${m}`;
    $("modes").appendChild(l);
  }
  for (const k of ["ranks", "chunks", "reps"]) if (params.has(k)) $(k).value = params.get(k);
  $("controls").addEventListener("submit", (e) => {
    e.preventDefault();
    runAll(params);
  });
  $("run").disabled = false;
  state.status = "ready";
  if (params.has("autorun")) runAll(params);
}

main().catch((e) => fail(`The page failed to start: ${e.message ?? e}`));
