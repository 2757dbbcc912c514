// The page test: builds nothing (run web/build.sh first; .ci/run does), serves web/dist, opens it in
// headless Chromium with WebGPU on SwiftShader, runs a small preset in every mode, and checks that the
// run completes, that every mode matches the f64 reference (max relative error under the tolerance,
// trackers ok), that every row is compared to one baseline, that the timeline was drawn on one axis in
// ms and the downloads parse (the JSON report, the SVG, the Perfetto trace); saves the screenshot as
// docs/web.png. Then the viewer: a results file the native CLI writes here (its table must be the one
// the CLI printed), a real H200 file (web/test/fixtures) and foreign or malformed files (a plain message
// each); hostile URL and form values (each named, defaults kept, Run disabled), Stop mid-mode, and a
// permalink that restores the controls.
import { createServer } from "node:http";
import { execFileSync } from "node:child_process";
import { readFile, mkdtemp, mkdir, writeFile } from "node:fs/promises";
import { extname, join, normalize, dirname } from "node:path";
import { tmpdir } from "node:os";
import { fileURLToPath } from "node:url";
import puppeteer from "puppeteer-core";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const dist = join(root, "web", "dist");
const shot = process.env.T3_WEB_SHOT ?? join(root, "docs", "web.png");
const TOLERANCE = 1e-4;
const TIMEOUT_MS = Number(process.env.T3_WEB_TIMEOUT_S ?? 480) * 1000;
const QUERY = process.env.T3_WEB_QUERY ?? "preset=tnlg-op-tp4&scale=0.015625&chunks=2&reps=2&autorun=1";
// The native CLI (built by web/test/run.sh), which writes the results file the viewer must show as it printed it.
const T3 = process.env.T3_BIN ?? join(root, "target", "release", "t3");

const types = { ".html": "text/html", ".js": "text/javascript", ".css": "text/css", ".wasm": "application/wasm" };
const server = createServer(async (req, res) => {
  const path = normalize(decodeURIComponent(new URL(req.url, "http://x").pathname)).replace(/^\/+/, "");
  try {
    const body = await readFile(join(dist, path || "index.html"));
    res.writeHead(200, { "content-type": types[extname(path || "index.html")] ?? "application/octet-stream" });
    res.end(body);
  } catch {
    res.writeHead(404).end();
  }
});
await new Promise((r) => server.listen(0, "127.0.0.1", r));
// T3_WEB_BASE: a server already running (e.g. the README's `python3 -m http.server -d web/dist`).
const base = process.env.T3_WEB_BASE ?? `http://127.0.0.1:${server.address().port}/`;

const browser = await puppeteer.launch({
  executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
  headless: true,
  userDataDir: await mkdtemp(join(tmpdir(), "t3-web-")),
  args: [
    "--no-sandbox", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync",
    // WebGPU without a GPU: SwiftShader's Vulkan under Dawn.
    "--enable-unsafe-webgpu", "--enable-unsafe-swiftshader", "--use-webgpu-adapter=swiftshader",
    "--enable-features=Vulkan",
  ],
});
let failed = null;
const notFound = [];
// A page at `query`, its console echoed, its 404s collected; resolves once window.t3.status is one of `until`.
async function open(query, until) {
  const page = await browser.newPage();
  await page.setViewport({ width: 1200, height: 1000 });
  page.on("console", (m) => console.log(`page: ${m.text()}`));
  page.on("pageerror", (e) => console.log(`page error: ${e.message}`));
  page.on("response", (r) => r.status() === 404 && notFound.push(r.url()));
  await page.goto(`${base}index.html?${query}`);
  await page.waitForFunction((u) => u.includes(window.t3?.status), { timeout: TIMEOUT_MS, polling: 200 }, until);
  return page;
}
const check = (ok, what) => {
  if (!ok) throw new Error(what);
};
try {
  const t0 = Date.now();
  const page = await open(QUERY, ["done", "error"]);
  const t3 = await page.evaluate(() => window.t3);
  console.log(`adapter: ${JSON.stringify(t3.adapter?.adapter)}`);
  console.log(`adapter: ${t3.adapter?.describe}; status ${t3.status} after ${((Date.now() - t0) / 1000).toFixed(1)} s; first result ${(t3.firstResultMs / 1000).toFixed(1)} s after the click, ${(t3.firstResultSincePageMs / 1000).toFixed(1)} s after the page opened`);
  if (t3.status !== "done") throw new Error(`the run did not complete: ${t3.error}`);
  const modes = t3.adapter.modes;
  if (t3.reports.map((o) => o.mode).join() !== modes.join()) throw new Error(`reports for ${t3.reports.map((o) => o.mode)}, not every mode (${modes})`);
  for (const out of t3.reports) {
    console.log(out.table);
    const r = out.report.results.find((x) => x.mode === out.mode);
    if (!r) throw new Error(`the ${out.mode} report has no row for it`);
    if (r.skipped) throw new Error(`${r.mode} skipped: ${r.skipped}`);
    if (!(r.max_rel_error <= TOLERANCE)) throw new Error(`${r.mode}: max_rel_error ${r.max_rel_error} over ${TOLERANCE}`);
    if (r.trackers_ok !== true) throw new Error(`${r.mode}: trackers not ok`);
  }
  // One baseline for every row: each speedup is the baseline's T_seq over the row's median, sequential's 1.
  const b = t3.baseline;
  check(b && b.t_seq_ms === t3.reports[0].report.t_seq_ms, "no shared baseline from the first run");
  for (const row of t3.rows) {
    console.log(`row ${row.mode}: ${row.median_ms.toFixed(3)} ms, speedup ${row.speedup.toFixed(3)}, efficiency ${row.overlap_efficiency}; ${row.notes.join("; ")}`);
    check(Math.abs(row.speedup - b.t_seq_ms / row.median_ms) < 1e-9, `${row.mode}: speedup not against the shared baseline`);
    if (row.speedup < 0.995 && row.mode !== "sequential") check(row.notes.some((n) => n.includes("slower than sequential")), `${row.mode}: speedup ${row.speedup} < 1 without a note`);
    const e = row.overlap_efficiency;
    if (e !== null && (e < 0 || e > 1)) check(row.notes.some((n) => n.includes("efficiency")), `${row.mode}: efficiency ${e} unexplained`);
  }
  // Fused mode's timeline at chunk grain, told by its progress clock (src/modes/progress.rs): a GEMM
  // bar per chunk and rank and a bar per transfer, the chart saying so.
  const fusedTimeline = t3.reports.find((o) => o.mode === "fused").report.timelines[0];
  const fusedGemm = fusedTimeline.events.filter((e) => e.kind === "gemm");
  console.log(`fused timeline: ${fusedTimeline.grain}; ${fusedTimeline.events.length} events`);
  check(fusedTimeline.grain.startsWith("chunk, by a progress clock") && fusedGemm.length > fusedTimeline.ranks && fusedGemm.every((e) => e.chunk !== null)
    && fusedTimeline.events.some((e) => e.kind !== "gemm"), `fused mode's timeline is not at chunk grain: ${fusedTimeline.grain}`);
  const seqRow = t3.rows.find((r) => r.mode === "sequential");
  check(Math.abs(seqRow.speedup - 1) < 1e-9, `sequential's speedup ${seqRow.speedup}, not 1`);
  const page1 = await page.evaluate(() => ({
    baseline: document.getElementById("baseline").textContent,
    svgs: document.querySelectorAll("#timeline svg").length,
    axisMs: [...document.querySelectorAll("#timeline svg text")].some((t) => t.textContent === "ms"),
    progressClock: [...document.querySelectorAll("#timeline svg text")].some((t) => t.textContent.includes("progress clock")),
    // Events drawn in their lanes (a rank's GEMM and steps rows), not piled into one.
    eventRows: new Set([...document.querySelectorAll("#timeline svg rect > title")].map((t) => t.parentNode.getAttribute("y"))).size,
    emulated: !document.getElementById("emulated").hidden,
    device: document.getElementById("device-body").textContent,
    viewport: !!document.querySelector('meta[name="viewport"]'),
    locked: document.getElementById("settings").disabled,
  }));
  console.log(`baseline line: ${page1.baseline}`);
  check(page1.baseline.startsWith("Baseline for every row"), "no baseline line");
  check(page1.svgs === 1 && page1.axisMs, "the timelines are not one SVG on one axis in ms");
  check(page1.progressClock, "the chart does not say that fused mode's timeline is a progress clock");
  check(page1.eventRows >= 2 * modes.length, `events in only ${page1.eventRows} rows`);
  check(page1.emulated === t3.adapter.cpu, "the CPU-emulation banner does not match the adapter");
  check(page1.device.includes("max storage binding") && page1.device.includes("features"), "no device panel");
  check(page1.viewport, "no viewport meta");
  check(!page1.locked, "controls still locked after the run");
  // The downloads parse: the JSON report has every mode's run.
  const dl = await page.evaluate(async () => {
    const j = await (await fetch(document.getElementById("dl-json").href)).json();
    const svg = await (await fetch(document.getElementById("dl-svg").href)).text();
    const trace = await (await fetch(document.getElementById("dl-trace").href)).json();
    const ev = trace.traceEvents;
    return {
      runs: j.runs.length, baseline: j.baseline?.t_seq_ms, svg: new DOMParser().parseFromString(svg, "image/svg+xml").querySelector("parsererror") === null,
      processes: ev.filter((e) => e.name === "process_name").map((e) => e.pid), spans: ev.filter((e) => e.ph === "X" && e.dur >= 0 && e.ts >= 0).length,
      timed: j.runs.every((r) => r.report.timelines.length === 1),
    };
  });
  console.log(`downloads: ${JSON.stringify(dl)}`);
  check(dl.runs === modes.length && dl.baseline === b.t_seq_ms && dl.svg && dl.timed, `downloads: ${JSON.stringify(dl)}`);
  check(dl.processes.join() === modes.map((_, i) => i + 1).join() && dl.spans >= 2 * modes.length, `the trace download: ${JSON.stringify(dl)}`);
  // The timeline: pixels in its area that are neither the page background nor the SVG's.
  const box = await (await page.$("#timeline")).boundingBox();
  if (!box || box.height < 20) throw new Error("no timeline drawn");
  const counts = await page.evaluate(async () => {
    const svg = document.querySelector("#timeline svg");
    const img = new Image();
    img.src = "data:image/svg+xml;charset=utf-8," + encodeURIComponent(new XMLSerializer().serializeToString(svg));
    await img.decode();
    const c = document.createElement("canvas");
    c.width = img.width || 800;
    c.height = img.height || 300;
    const g = c.getContext("2d");
    g.drawImage(img, 0, 0);
    const d = g.getImageData(0, 0, c.width, c.height).data;
    let coloured = 0;
    for (let i = 0; i < d.length; i += 4) {
      const [r, gg, b, a] = [d[i], d[i + 1], d[i + 2], d[i + 3]];
      if (a > 0 && !(r > 240 && gg > 240 && b > 240) && Math.max(r, gg, b) - Math.min(r, gg, b) > 40) coloured++;
    }
    return { coloured, total: d.length / 4 };
  });
  console.log(`timeline: ${counts.coloured} coloured pixels of ${counts.total}`);
  if (counts.coloured < 200) throw new Error("the timeline has (almost) no coloured bars");
  await mkdir(dirname(shot), { recursive: true });
  await page.screenshot({ path: shot, fullPage: true });
  console.log(`wrote ${shot}`);

  // The viewer: a file the native CLI writes on this machine shows the table the CLI printed.
  const files = await mkdtemp(join(tmpdir(), "t3-view-"));
  const native = join(files, "t3-results.json");
  const printed = execFileSync(T3, ["run", "--shape", "64x40x24", "--ranks", "2", "--chunks", "2", "--reps", "2", "--warmup", "1", "--warmup-s", "0", "--json", native],
    { encoding: "utf8", timeout: 120000, stdio: ["ignore", "pipe", "inherit"] });
  const viewed = async (path) => {
    await page.evaluate(() => (window.t3.viewed = null));
    await (await page.$("#view-file")).uploadFile(path);
    await page.waitForFunction(() => window.t3.viewed, { timeout: 30000, polling: 100 });
    return page.evaluate(() => ({
      ...window.t3.viewed, report: undefined, status: document.getElementById("view-status").textContent,
      shown: document.getElementById("view-table").textContent, svgs: document.querySelectorAll("#view-timeline svg").length,
      progressClock: document.getElementById("view-timeline").textContent.includes("progress clock"),
    }));
  };
  let v = await viewed(native);
  const cliTable = printed.split("\n").slice(1).join("\n").trimEnd();
  console.log(`viewer, native file: ${v.status}\n${v.shown}`);
  check(v.shown.trimEnd() === cliTable, `the viewer's table is not the CLI's:\n${v.shown}\n--- the CLI printed:\n${cliTable}`);
  check(v.version === 1 && v.svgs === 1 && v.progressClock, `the native file's timelines (fused mode's at chunk grain): ${JSON.stringify({ version: v.version, svgs: v.svgs, progressClock: v.progressClock })}`);
  // A real H200 file, written before the format was versioned: its table, and no timelines said plainly.
  v = await viewed(join(root, "web", "test", "fixtures", "h200-tnlg-op-tp8.json"));
  console.log(`viewer, H200 file: ${v.status}\n${v.shown}`);
  check(v.version === 0 && v.status.includes("NVIDIA H200") && v.status.includes("table only") && v.svgs === 0, `the H200 file: ${v.status}`);
  check(/^fused +tracked +2\.270 +1\.523 +0\.639\* +1\.45e-8  ok$/m.test(v.shown) && /^sequential +none +3\.456 +1\.000 +- /m.test(v.shown), `the H200 file's table:\n${v.shown}`);
  // Foreign and malformed files: a plain message each, nothing shown.
  const good = JSON.parse(await readFile(native, "utf8"));
  const hostile = {
    "truncated.json": (await readFile(native, "utf8")).slice(0, 200),
    "newer.json": JSON.stringify({ ...good, format_version: 99 }),
    "foreign.json": JSON.stringify({ ...good, format: "something-else" }),
    "no-results.json": JSON.stringify({ ...good, results: [] }),
    "bad-row.json": JSON.stringify({ ...good, results: [{ mode: "fused", median_ms: "fast" }] }),
    "array.json": "[1, 2]",
  };
  for (const [name, text] of Object.entries(hostile)) {
    await writeFile(join(files, name), text);
    v = await viewed(join(files, name));
    console.log(`viewer, ${name}: ${v.error}`);
    check(v.error && v.error.startsWith(`"${name}"`) && !/at line|position \d|unexpected/i.test(v.error) && v.shown === "" && v.svgs === 0, `${name}: ${JSON.stringify(v)}`);
  }
  check(/newer t3/.test((await viewed(join(files, "newer.json"))).error), "a newer file is not said to be newer");

  // Hostile URL values: each named, the default kept (never the heaviest settings), nothing run.
  const bad = await open("scale=7&preset=bogus&modes=bogus&reps=100000&chunks=abc&ranks=0&colour=red", ["ready", "error"]);
  const h = await bad.evaluate(() => ({
    notices: window.t3.notices, scale: document.getElementById("scale").value, preset: document.getElementById("preset").value,
    modes: [...document.querySelectorAll("#modes input:checked")].map((c) => c.value), reps: document.getElementById("reps").value,
    chunks: document.getElementById("chunks").value, ranks: document.getElementById("ranks").value, run: document.getElementById("run").disabled,
    defaultScale: window.t3.adapter.default_scale, all: window.t3.adapter.modes,
  }));
  for (const n of h.notices) console.log(`notice: ${n}`);
  check(h.notices.length === 7, `${h.notices.length} notices for 7 bad URL values`);
  check(Number(h.scale) === h.defaultScale && h.preset === "tnlg-op-tp4" && h.modes.join() === h.all.join() && h.reps === "3" && h.chunks === "2" && h.ranks === "" && !h.run,
    `bad URL values did not keep the defaults: ${JSON.stringify(h)}`);
  // The form: the same rules, in the form's words; Run disabled while anything is wrong.
  const formCheck = async (act) => {
    await bad.evaluate(act);
    return bad.evaluate(() => ({ problems: window.t3.problems, run: document.getElementById("run").disabled }));
  };
  let f = await formCheck(() => {
    for (const c of document.querySelectorAll("#modes input")) c.checked = false;
    document.getElementById("controls").dispatchEvent(new Event("change"));
  });
  console.log(`no mode: ${JSON.stringify(f)}`);
  check(f.run && f.problems.some((p) => p.includes("check at least one mode")), `no mode checked: ${JSON.stringify(f)}`);
  f = await formCheck(() => {
    document.querySelector("#modes input[value=fused]").checked = true;
    document.getElementById("reps").value = "";
    document.getElementById("controls").dispatchEvent(new Event("input"));
  });
  console.log(`empty reps: ${JSON.stringify(f)}`);
  check(f.run && f.problems.some((p) => p.includes("Reps is empty")), `empty reps: ${JSON.stringify(f)}`);
  // The permalink follows the controls.
  const link = await bad.evaluate(() => {
    document.getElementById("reps").value = "50";
    document.getElementById("scale").value = String(1 / 32);
    document.getElementById("controls").dispatchEvent(new Event("change"));
    return location.search;
  });
  console.log(`permalink: ${link}`);
  check(link.includes("reps=50") && link.includes("modes=fused") && link.includes("scale=1%2F32"), `the URL does not follow the controls: ${link}`);
  // Stop mid-mode: the run ends within a pass, nothing half-done is shown, the page is usable after; the
  // error box from before is cleared when the run starts, the controls locked while it runs.
  await bad.evaluate(() => {
    document.getElementById("missing").hidden = false;
    document.getElementById("run").click();
  });
  await bad.waitForFunction(() => window.t3.progress?.phase === "timing", { timeout: TIMEOUT_MS, polling: 100 });
  const during = await bad.evaluate(() => ({
    locked: document.getElementById("settings").disabled, stop: !document.getElementById("stop").disabled,
    errorHidden: document.getElementById("missing").hidden, status: document.getElementById("status").textContent,
  }));
  console.log(`while running: ${JSON.stringify(during)}`);
  check(during.locked && during.stop && during.errorHidden && during.status.includes("timing"), `while running: ${JSON.stringify(during)}`);
  const tStop = Date.now();
  await bad.click("#stop");
  await bad.waitForFunction(() => window.t3.status !== "running", { timeout: 60000, polling: 100 });
  const after = await bad.evaluate(() => ({
    status: window.t3.status, reports: window.t3.reports.length, run: document.getElementById("run").disabled,
    locked: document.getElementById("settings").disabled, text: document.getElementById("status").textContent,
  }));
  console.log(`stopped after ${((Date.now() - tStop) / 1000).toFixed(1)} s: ${JSON.stringify(after)}`);
  check(after.status === "stopped" && after.reports === 0 && !after.run && !after.locked, `stop: ${JSON.stringify(after)}`);
  // The permalink restores the controls.
  const back = await open(link.slice(1), ["ready", "error"]);
  const r = await back.evaluate(() => ({
    reps: document.getElementById("reps").value, scale: Number(document.getElementById("scale").value),
    modes: [...document.querySelectorAll("#modes input:checked")].map((c) => c.value), notices: window.t3.notices,
  }));
  console.log(`permalink reopened: ${JSON.stringify(r)}`);
  check(r.reps === "50" && r.scale === 1 / 32 && r.modes.join() === "fused" && r.notices.length === 0, `the permalink did not restore the controls: ${JSON.stringify(r)}`);
  check(notFound.length === 0, `404s: ${notFound.join(", ")}`);
} catch (e) {
  failed = e;
} finally {
  await browser.close();
  server.close();
}
if (failed) {
  console.error(`page test FAILED: ${failed.message}`);
  process.exit(1);
}
console.log("page test passed");
