// The page: checks for WebGPU and JSPI, fills the controls from the adapter, validates every form and URL
// value by one set of rules, runs each chosen mode through the wasm export (progress and Stop through the
// t3Progress hook), and shows each row against the run's one sequential baseline, every timeline on one
// axis in ms, and downloads of what it measured (the report, the SVG, the Perfetto trace); its viewer shows
// a results file the CLI wrote (web/viewer.js), with or without WebGPU. window.t3 carries the state for the
// page test (web/test).
import init, { describe, plan, run } from "./pkg/t3_web.js";
import { readResults, summaryText } from "./viewer.js";

const $ = (id) => document.getElementById(id);
const state = (window.t3 = {
  status: "starting", reports: [], baseline: null, error: null, notices: [], problems: [],
  progress: null, stopRequested: false, firstResultMs: null, firstResultSincePageMs: null,
});
const TOLERANCE = 1e-4; // the CLI's bound on max_rel_error (src/cli/run.rs `wrong`)
const SCALES = [1, 2, 4, 8, 16, 32, 64, 128]; // offered scales: 1/d
const LIMITS = { ranks: [2, 64], chunks: [1, 64], reps: [1, 50] };
const DEFAULTS = { chunks: "2", reps: "3" };
const LONG_S = 60; // a run estimated past this gets a warning first

function fail(msg) {
  state.status = "error";
  state.error = msg;
  $("missing").hidden = false;
  $("missing").textContent = msg;
}

function clearFailure() {
  state.error = null;
  $("missing").hidden = true;
  $("missing").textContent = "";
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

function list(el, items) {
  el.replaceChildren(...items.map((t) => Object.assign(document.createElement("li"), { textContent: t })));
  el.hidden = items.length === 0;
}

const fmt = (x, d = 3) => (x === null || x === undefined || !Number.isFinite(x) ? "–" : Number(x).toFixed(d));
const scaleText = (s) => (Math.abs(s - 1) < 1e-12 ? "1" : `1/${Math.round(1 / s)}`);
const say = (v) => JSON.stringify(String(v));

// ---- One set of rules for every value, from the form or the URL ----

// A whole number in [lo, hi], or a message in the form's words. `empty` is what an empty value means.
function whole(label, raw, [lo, hi], empty) {
  const s = String(raw ?? "").trim();
  if (s === "") return empty !== undefined ? { value: empty } : { error: `${label} is empty: enter a whole number from ${lo} to ${hi}.` };
  if (!/^\d+$/.test(s)) return { error: `${label} ${say(s)} is not a whole number from ${lo} to ${hi}.` };
  const n = Number(s);
  if (n < lo || n > hi) return { error: `${label} ${n} is out of range: enter a whole number from ${lo} to ${hi}.` };
  return { value: n };
}

// Each rule takes the raw string and gives {value} or {error}.
const rules = {
  preset: (s) => (state.adapter.presets.includes(s) ? { value: s } : { error: `Preset ${say(s)} is not one of the offered presets.` }),
  scale: (s) => {
    const t = String(s).trim();
    const m = /^1\/(\d+)$/.exec(t);
    const x = m ? 1 / Number(m[1]) : /^[0-9.eE+-]+$/.test(t) ? Number(t) : NaN;
    const d = SCALES.find((d) => Math.abs(1 / d - x) < 1e-9);
    return d ? { value: 1 / d } : { error: `Scale ${say(t)} is not one of the offered scales (1, 1/2, 1/4, ... 1/128).` };
  },
  ranks: (s) => whole("Ranks", s, LIMITS.ranks, null),
  chunks: (s) => whole("Chunks", s, LIMITS.chunks),
  reps: (s) => whole("Reps", s, LIMITS.reps),
  collective: (s) => (s === "" || state.adapter.collectives.includes(s) ? { value: s || null } : { error: `Collective ${say(s)} is not one of ${state.adapter.collectives.join(", ")}.` }),
  modes: (s) => {
    const names = String(s).split(",").map((m) => m.trim()).filter(Boolean);
    const unknown = names.filter((m) => !state.adapter.modes.includes(m));
    if (unknown.length) return { error: `Modes: ${unknown.map(say).join(", ")} ${unknown.length > 1 ? "are not modes" : "is not a mode"} (the modes are ${state.adapter.modes.join(", ")}).` };
    if (!names.length) return { error: "Modes: check at least one mode." };
    return { value: names };
  },
  seed: (s) => whole("Seed", s, [0, 2 ** 32 - 1]),
};

// The URL's values, each checked by its rule; an unknown or bad one is named and the default kept.
function fromUrl(params, defaults) {
  const v = { ...defaults };
  const notices = [];
  const known = new Set([...Object.keys(rules), "autorun"]);
  for (const [k, raw] of params) {
    if (!known.has(k)) {
      notices.push(`The link's ${k}=${raw} is not a setting of this page; it was ignored.`);
      continue;
    }
    if (k === "autorun") continue;
    const r = rules[k](raw);
    if (r.error) notices.push(`The link's ${k}=${raw}: ${r.error} Kept the default (${show(k, defaults[k])}).`);
    else v[k] = r.value;
  }
  return { values: v, notices };
}

function show(k, v) {
  if (v === null || v === undefined) return k === "collective" ? "the preset's" : k === "ranks" ? "the preset's" : "none";
  if (k === "scale") return scaleText(v);
  if (k === "modes") return v.join(", ");
  return String(v);
}

// The form's values, each checked by the same rules.
function fromForm() {
  const modes = [...document.querySelectorAll("#modes input:checked")].map((c) => c.value).join(",");
  const raw = {
    preset: $("preset").value, scale: $("scale").value, ranks: $("ranks").value, chunks: $("chunks").value,
    collective: $("collective").value, reps: $("reps").value, modes,
  };
  const values = { seed: state.seed };
  const problems = [];
  for (const [k, s] of Object.entries(raw)) {
    const r = rules[k](s);
    if (r.error) problems.push(r.error);
    else values[k] = r.value;
  }
  return { values, problems };
}

function setForm(v) {
  $("preset").value = v.preset;
  $("scale").value = String(v.scale);
  $("ranks").value = v.ranks ?? "";
  $("chunks").value = v.chunks;
  $("reps").value = v.reps;
  $("collective").value = v.collective ?? "";
  for (const c of document.querySelectorAll("#modes input")) c.checked = v.modes.includes(c.value);
}

const request = (v) => ({
  preset: v.preset, scale: v.scale, ranks: v.ranks, chunks: v.chunks, collective: v.collective,
  reps: v.reps, warmup: 1, seed: v.seed, modes: v.modes,
});

// The permalink: the form's values in the URL (defaults left out).
function permalink(v) {
  const p = new URLSearchParams();
  p.set("preset", v.preset);
  p.set("scale", scaleText(v.scale));
  if (v.ranks !== null) p.set("ranks", v.ranks);
  p.set("chunks", v.chunks);
  if (v.collective) p.set("collective", v.collective);
  p.set("modes", v.modes.join(","));
  p.set("reps", v.reps);
  if (v.seed !== 1) p.set("seed", v.seed);
  return `${location.pathname}?${p}`;
}

// How long a run takes: each mode checks once, then times warm-up + reps rounds of about five GEMM-sized
// things (tracked and untracked GEMM, sequential, the mode, fused's own run); the GEMM rate is the last
// run's where it beats a guess for the adapter's kind (a small run's rate is mostly overhead).
function estimateSeconds(p, v) {
  const guess = state.adapter.cpu ? 3e9 : 3e11;
  const last = state.reports.length ? state.reports.at(-1).report.gemm_tflops * 1e12 : 0;
  const measured = last > guess;
  const rate = measured ? last : guess;
  const gemmS = p.flops / rate;
  return { seconds: v.modes.length * (1 + 1 + v.reps) * 5 * gemmS, measured: !!measured };
}

let planned = null;
function refresh() {
  if (state.status === "running") return;
  const { values, problems } = fromForm();
  planned = null;
  $("estimate").hidden = true;
  if (!problems.length) {
    try {
      const p = JSON.parse(plan(JSON.stringify(request(values))));
      planned = { values, plan: p };
      $("plan").textContent = `Will run ${p.label}: ${p.chunks} chunks, ${p.collective}, ${(p.flops / 1e9).toPrecision(3)} GFLOP per pass.`;
      const e = estimateSeconds(p, values);
      if (e.seconds > LONG_S) {
        $("estimate").hidden = false;
        $("estimate").textContent = `Warning: this size will take about ${Math.round(e.seconds / 60)} min or more on this adapter (${e.measured ? "from the last run's GEMM rate" : "a guess for this kind of adapter"}). A smaller scale runs in seconds; Stop ends a run between passes.`;
      }
    } catch (e) {
      problems.push(`These settings cannot run: ${e.message ?? e}`);
    }
  }
  if (problems.length) $("plan").textContent = "";
  state.problems = problems;
  list($("problems"), problems);
  $("run").disabled = problems.length > 0;
  const href = permalink({ ...fromUrlDefaults, ...values });
  $("permalink").href = href;
  if (!problems.length) history.replaceState(null, "", href);
}
let fromUrlDefaults = {};

// ---- Results ----

// The run's one baseline: its first report's sequential time and ideal (every row is compared to it).
function baselineOf(out) {
  const r = out.report;
  return {
    from_mode: out.mode, t_seq_ms: r.t_seq_ms, t_gemm_ms: r.t_gemm_ms, t_comm_ms: r.t_comm_ms, ideal_ms: r.ideal_ms,
    t_seq_spread: r.t_seq_spread,
  };
}

function rowOf(r, base) {
  const notes = [];
  const med = r.median_ms;
  const speedup = med ? base.t_seq_ms / med : null;
  let eff = null;
  if (r.own_baseline) {
    eff = r.overlap_efficiency;
    if (eff !== null) notes.push(`efficiency against its own sequential run (its packed GEMM ${fmt(r.ideal_ms, 2)} ms at best, then its transfers: ${fmt(r.seq_ms, 2)} ms)`);
  } else if (r.overlap_efficiency !== null && base.t_seq_ms - base.ideal_ms > 0) {
    eff = (base.t_seq_ms - med) / (base.t_seq_ms - base.ideal_ms);
  }
  if (r.mode === "sequential") notes.push("the baseline: speedup 1 by definition");
  if (speedup !== null && speedup < 0.995 && r.mode !== "sequential")
    notes.push(`slower than sequential here: its extra passes and tracking cost more than the overlap hid${state.adapter.cpu ? " (a CPU runs passes one after another, so nothing overlaps)" : ""}`);
  if (eff !== null && eff < 0) notes.push("efficiency below 0: slower than sequential, so none of the collective's time was hidden");
  if (eff !== null && eff > 1) notes.push("efficiency above 1: faster than the ideal max(GEMM, collective); the timings' spread (or a GEMM that runs faster beside the transfers) is larger than the difference");
  if (r.checks_failed.length) notes.push(`no efficiency: a timing check failed (${r.checks_failed.join("; ")}), so the figures disagree beyond their spread`);
  if (r.skipped) notes.push(r.skipped);
  return { speedup, eff, notes };
}

function showRow(r, base) {
  const tr = document.createElement("tr");
  const wrong = r.trackers_ok === false || (r.max_rel_error !== null && !(r.max_rel_error <= TOLERANCE));
  const { speedup, eff, notes } = rowOf(r, base);
  const cells = [r.mode, fmt(r.median_ms), fmt(speedup, 2), fmt(eff, 2),
    r.max_rel_error === null ? "–" : r.max_rel_error.toExponential(2),
    r.trackers_ok === null ? "–" : r.trackers_ok ? "ok" : "WRONG", notes.join("; ")];
  for (const c of cells) {
    const td = document.createElement("td");
    td.textContent = c;
    tr.appendChild(td);
  }
  tr.dataset.mode = r.mode;
  if (wrong) tr.className = "bad";
  $("results").tBodies[0].appendChild(tr);
  return { mode: r.mode, median_ms: r.median_ms, speedup, overlap_efficiency: eff, notes };
}

function showBaseline(b) {
  $("baseline").textContent = `Baseline for every row (measured once, in the ${b.from_mode} run): sequential T_seq ${fmt(b.t_seq_ms, 2)} ms; timed on their own, the GEMMs ${fmt(b.t_gemm_ms, 2)} ms and the collective ${fmt(b.t_comm_ms, 2)} ms, so a perfect overlap would take max(GEMM, collective) = ${fmt(b.ideal_ms, 2)} ms. (Each is a median of its own reps, so they need not add up; each mode's own re-measure of the baseline is kept in the JSON report.)`;
}

// ---- Timelines: every panel on one axis in ms ----

const KIND = { gemm: ["GEMM", "#0072B2"], copy: ["Copy", "#E69F00"], reduce: ["Reduce", "#009E73"], trigger: ["Trigger", "#000000"], wait: ["Host wait", "#BBBBBB"] };
const laneKey = (l) => (l.lane === "host_link" ? `link ${l.from}→${l.to}` : l.lane === "gemm" || l.lane === "step" ? `r${l.rank} ${l.lane === "gemm" ? "GEMM" : "steps"}` : l.lane === "host" ? "host" : "host wait");
const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]);

function niceStep(range) {
  const e = Math.floor(Math.log10(range));
  let best = range, err = Infinity;
  for (let k = e - 2; k <= e + 1; k++)
    for (const m of [1, 2, 5]) {
      const s = m * 10 ** k, x = Math.abs(Math.log(range / s / 6));
      if (x < err) [best, err] = [s, x];
    }
  return best;
}

// A timeline's grain in a panel's title: fused mode's progress clock said plainly (WGSL has no clock).
const grainText = (g) => g.startsWith("chunk, by a progress clock")
  ? "chunks timed by a progress clock (tiles and pieces done, on the pass's measured span)"
  : `timed at ${g.length > 70 ? g.slice(0, 70) + "…" : g}`;

function timelineSvg(panels) {
  const W = 1200, L = 110, R = 30, P = W - L - R, LANE = 18, TITLE = 26, AXIS = 34, GAP = 12, LEGEND = 30;
  const longest = Math.max(1e-3, ...panels.flatMap((p) => p.timeline.events.map((e) => e.end_us / 1000)));
  const step = niceStep(longest);
  const max = Math.max(1, Math.ceil(longest / step - 1e-9)) * step;
  const dec = Math.max(0, Math.min(6, Math.ceil(-Math.log10(step))));
  const x = (ms) => L + (ms / max) * P;
  const lanesOf = (t) => {
    const keys = [];
    for (let r = 0; r < t.ranks; r++) keys.push(`r${r} GEMM`, `r${r} steps`);
    for (const e of t.events) if (!keys.includes(laneKey(e.lane))) keys.push(laneKey(e.lane));
    return keys;
  };
  const h = LEGEND + panels.reduce((s, p) => s + TITLE + lanesOf(p.timeline).length * LANE + AXIS + GAP, 0);
  const out = [`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${h}" viewBox="0 0 ${W} ${h}" font-family="system-ui, sans-serif" font-size="13">`,
    `<rect width="${W}" height="${h}" fill="#fff"/>`];
  Object.values(KIND).forEach(([name, c], i) => out.push(`<rect x="${L + i * 105}" y="9" width="14" height="12" fill="${c}"/><text x="${L + i * 105 + 19}" y="20">${name}</text>`));
  out.push(`<text x="${W - R}" y="20" text-anchor="end" fill="#444">one time axis for every panel (ms from the start of each mode's run)</text>`);
  let top = LEGEND;
  for (const { mode, label, timeline } of panels) {
    const lanes = lanesOf(timeline);
    out.push(`<text x="4" y="${top + 18}" font-weight="bold">${esc(mode)}</text><text x="${L}" y="${top + 18}" fill="#444">span ${fmt(Math.max(0, ...timeline.events.map((e) => e.end_us)) / 1000, 2)} ms · ${esc(label)} · ${esc(grainText(timeline.grain))}<title>${esc(timeline.grain)}</title></text>`);
    const y0 = top + TITLE;
    lanes.forEach((k, i) => {
      out.push(`<rect x="${L}" y="${y0 + i * LANE}" width="${P}" height="${LANE - 3}" fill="${i % 2 ? "#f4f4f4" : "#ebebeb"}"/><text x="${L - 6}" y="${y0 + i * LANE + 12}" text-anchor="end">${esc(k)}</text>`);
    });
    for (const e of timeline.events) {
      const i = lanes.indexOf(laneKey(e.lane));
      const [name, c] = KIND[e.kind] ?? [e.kind, "#888"];
      const x0 = x(e.start_us / 1000), w = Math.max(0.8, x(e.end_us / 1000) - x0);
      out.push(`<rect x="${x0.toFixed(2)}" y="${y0 + i * LANE}" width="${w.toFixed(2)}" height="${LANE - 3}" fill="${c}"><title>${esc(`${mode} ${e.name} (${name}): ${fmt(e.start_us / 1000)}–${fmt(e.end_us / 1000)} ms`)}</title></rect>`);
    }
    const ya = y0 + lanes.length * LANE;
    out.push(`<line x1="${L}" y1="${ya}" x2="${L + P}" y2="${ya}" stroke="#666"/>`);
    for (let t = 0; t <= max + step / 2; t += step) {
      out.push(`<line x1="${x(t).toFixed(2)}" y1="${ya}" x2="${x(t).toFixed(2)}" y2="${ya + 4}" stroke="#666"/><text x="${x(t).toFixed(2)}" y="${ya + 17}" text-anchor="middle">${t.toFixed(dec)}</text>`);
    }
    out.push(`<text x="${L + P}" y="${ya + 31}" text-anchor="end" fill="#444">ms</text>`);
    top = ya + AXIS + GAP;
  }
  out.push("</svg>");
  return out.join("\n");
}

function drawTimelines() {
  const panels = state.reports.flatMap((o) => o.report.timelines.filter((t) => t.mode === o.mode).map((timeline) => ({ mode: o.mode, label: o.label, timeline })));
  $("timeline").innerHTML = panels.length ? timelineSvg(panels) : "";
}

// ---- Exports ----

function exportJson() {
  return {
    page: "t3-wgpu web page", adapter: state.adapter?.adapter, request: state.request, baseline: state.baseline,
    rows: state.rows, runs: state.reports.map(({ mode, label, scale, report }) => ({ mode, label, scale, report })),
  };
}

// The runs' traces (each the CLI's t3-trace.json for its one mode) as one: run i's processes renumbered
// after the runs before it, in run order.
function exportTrace() {
  const traceEvents = [];
  let base = 0;
  for (const o of state.reports) {
    const events = o.trace.traceEvents;
    const pids = Math.max(0, ...events.map((e) => e.pid));
    for (const e of events) {
      const moved = { ...e, pid: base + e.pid };
      if (e.name === "process_sort_index") moved.args = { sort_index: base + e.args.sort_index };
      traceEvents.push(moved);
    }
    base += pids;
  }
  return { traceEvents, displayTimeUnit: "ms" };
}

function showDownloads() {
  for (const id of ["dl-json", "dl-svg", "dl-trace"]) if ($(id).href.startsWith("blob:")) URL.revokeObjectURL($(id).href);
  $("dl-json").href = URL.createObjectURL(new Blob([JSON.stringify(exportJson(), null, 1)], { type: "application/json" }));
  $("dl-trace").href = URL.createObjectURL(new Blob([JSON.stringify(exportTrace())], { type: "application/json" }));
  const svg = document.querySelector("#timeline svg");
  $("dl-svg").hidden = !svg;
  if (svg) $("dl-svg").href = URL.createObjectURL(new Blob([new XMLSerializer().serializeToString(svg)], { type: "image/svg+xml" }));
  $("downloads").hidden = false;
}

// ---- Running ----

// Called by the wasm run at each step; answers whether to stop there.
globalThis.t3Progress = (json) => {
  state.progress = JSON.parse(json);
  showProgress();
  return state.stopRequested;
};

function showProgress() {
  if (state.status !== "running") return;
  const p = state.progress ?? {};
  const secs = ((performance.now() - state.t0) / 1000).toFixed(1);
  let what = "starting";
  if (p.phase === "building") what = "building the ranks' buffers and passes";
  else if (p.phase === "checking") what = "checking every result against the f64 reference";
  else if (p.phase === "timing") {
    const per = p.warmup + p.reps;
    const attempt = Math.floor((p.run - 1) / per), k = ((p.run - 1) % per) + 1;
    const phase = k <= p.warmup ? `warm-up round ${k} of ${p.warmup}` : `rep ${k - p.warmup} of ${p.reps}`;
    what = `timing ${phase}${attempt ? ` (measuring again: a timing check failed, attempt ${attempt + 1})` : ""}: ${p.thing.replaceAll("_", " ")}`;
  }
  const stopping = state.stopRequested ? " Stopping after this pass…" : "";
  $("status").textContent = `Running ${state.current} (mode ${state.index + 1} of ${state.modes.length}): ${what}; ${secs} s elapsed.${stopping}`;
}

function lock(running) {
  $("settings").disabled = running;
  $("run").disabled = running || state.problems.length > 0;
  $("stop").disabled = !running;
}

async function runAll() {
  const { values, problems } = fromForm();
  if (problems.length) return refresh();
  clearFailure();
  $("results").tBodies[0].replaceChildren();
  $("timeline").replaceChildren();
  $("baseline").textContent = "";
  $("text").textContent = "";
  $("downloads").hidden = true;
  $("estimate").hidden = true;
  Object.assign(state, {
    status: "running", reports: [], rows: [], baseline: null, stopRequested: false, progress: null,
    firstResultMs: null, modes: values.modes, request: request(values), t0: performance.now(),
  });
  lock(true);
  const ticker = setInterval(showProgress, 250);
  try {
    for (const [i, mode] of values.modes.entries()) {
      Object.assign(state, { index: i, current: mode, progress: null });
      showProgress();
      const out = JSON.parse(await run(JSON.stringify({ ...state.request, modes: [mode] })));
      if (out.stopped) break;
      if (state.firstResultMs === null) {
        state.firstResultMs = performance.now() - state.t0;
        // From navigation: wasm load, device, pipelines, and the first mode's run.
        state.firstResultSincePageMs = performance.now();
      }
      state.reports.push({ mode, ...out });
      if (!state.baseline) showBaseline((state.baseline = baselineOf({ mode, ...out })));
      for (const r of out.report.results.filter((r) => r.mode === mode)) state.rows.push(showRow(r, state.baseline));
      drawTimelines();
      $("text").textContent += `${mode}: ${out.label}\n${out.table}\n`;
      if (state.stopRequested) break;
    }
    const secs = ((performance.now() - state.t0) / 1000).toFixed(1);
    if (state.stopRequested) {
      state.status = "stopped";
      $("status").textContent = `Stopped after ${secs} s. ${state.reports.length ? `The rows above are the ${state.reports.length} mode(s) that finished.` : "No mode finished."}`;
    } else {
      state.status = "done";
      $("status").textContent = `Done in ${secs} s (first result after ${(state.firstResultMs / 1000).toFixed(1)} s).`;
    }
    if (state.reports.length) showDownloads();
  } catch (e) {
    $("status").textContent = "";
    fail(`The run failed: ${e.message ?? e}`);
  } finally {
    clearInterval(ticker);
    lock(false);
    refresh();
  }
}

function showDevice(info) {
  const a = info.adapter;
  const rows = [
    ["adapter", a.name || "(hidden by the browser)"], ["type", a.device_type], ["backend", a.backend],
    ["driver", [a.driver, a.driver_info].filter(Boolean).join(" ") || "–"],
    ["max storage binding", `${(a.max_storage_buffer_binding_size / 2 ** 20).toFixed(0)} MiB`],
    ["max buffer", `${(a.max_buffer_size / 2 ** 20).toFixed(0)} MiB`],
    ["workgroup storage", `${a.max_compute_workgroup_storage_size / 1024} KiB`],
    ["invocations per workgroup", a.max_compute_invocations_per_workgroup],
    ["workgroups per dimension", a.max_compute_workgroups_per_dimension],
    ["storage buffers per stage", a.max_storage_buffers_per_shader_stage],
    ["subgroup sizes", a.subgroup_sizes.join("–")],
    ["timestamp period", a.timestamp_period_ns === null ? "no timestamp queries" : `${a.timestamp_period_ns} ns`],
    ["features", a.features.join(", ") || "none"],
  ];
  const t = document.createElement("table");
  for (const [k, v] of rows) {
    const tr = t.insertRow();
    tr.insertCell().textContent = k;
    tr.insertCell().textContent = v;
  }
  $("device-body").replaceChildren(t);
  $("device").hidden = false;
}

// ---- The viewer: a results file from the CLI, its table as `t3 run` printed it and its timelines ----

async function view(file) {
  const v = readResults(await file.text(), file.name, file.size);
  state.viewed = v.error ? { error: v.error } : { name: file.name, version: v.version, notes: v.notes, table: summaryText(v.report), report: v.report };
  $("view-status").textContent = v.error ?? `${file.name}: ${v.report.adapter}, results format version ${v.version}${v.notes.length ? `; ${v.notes.join(" ")}` : ""}`;
  $("view-status").className = v.error ? "bad" : "";
  $("view-table").hidden = !!v.error;
  $("view-table").textContent = v.error ? "" : state.viewed.table;
  const panels = v.error ? [] : v.report.timelines?.map((timeline) => ({ mode: timeline.mode, label: file.name, timeline })) ?? [];
  $("view-timeline").innerHTML = panels.length ? timelineSvg(panels) : "";
}

function setupViewer() {
  $("view-file").addEventListener("change", () => $("view-file").files[0] && view($("view-file").files[0]));
  addEventListener("dragover", (e) => e.preventDefault());
  addEventListener("drop", (e) => {
    e.preventDefault();
    const f = e.dataTransfer?.files?.[0];
    if (f) view(f);
  });
}

async function main() {
  const params = new URLSearchParams(location.search);
  setupViewer();
  const why = missing();
  if (why) return fail(why);
  await init();
  $("adapter").textContent = "Opening the WebGPU device and compiling the pipelines (about 10 s on a CPU adapter)…";
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
  $("emulated").hidden = !info.cpu;
  showDevice(info);
  for (const p of info.presets) option($("preset"), p);
  for (const d of SCALES) option($("scale"), String(1 / d), d === 1 ? "1" : `1/${d}`);
  for (const c of info.collectives) option($("collective"), c);
  for (const m of info.modes) {
    const l = document.createElement("label");
    const c = Object.assign(document.createElement("input"), { type: "checkbox", value: m });
    l.append(c, ` ${m}`);
    $("modes").appendChild(l);
  }
  const defaults = {
    preset: info.presets.includes("tnlg-op-tp4") ? "tnlg-op-tp4" : info.presets[0], scale: info.default_scale, ranks: null,
    chunks: Number(DEFAULTS.chunks), collective: null, reps: Number(DEFAULTS.reps), modes: info.modes, seed: 1,
  };
  const { values, notices } = fromUrl(params, defaults);
  fromUrlDefaults = defaults;
  state.seed = values.seed;
  state.notices = notices;
  list($("notices"), notices);
  setForm(values);
  $("controls").addEventListener("input", refresh);
  $("controls").addEventListener("change", refresh);
  $("controls").addEventListener("submit", (e) => {
    e.preventDefault();
    if (state.status !== "running") runAll();
  });
  $("stop").addEventListener("click", () => {
    state.stopRequested = true;
    $("stop").disabled = true;
    showProgress();
  });
  state.status = "ready";
  refresh();
  if (params.has("autorun") && !$("run").disabled) runAll();
}

main().catch((e) => fail(`The page failed to start: ${e.message ?? e}`));
