// The page test: builds nothing (run web/build.sh first; .ci/run does), serves web/dist, opens it in
// headless Chromium with WebGPU on SwiftShader, runs a small preset in every mode, and checks that the
// run completes, that every mode matches the f64 reference (max relative error under the tolerance,
// trackers ok), and that the timeline was drawn; saves the screenshot as docs/web.png.
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
const url = `${base}index.html?${QUERY}`;

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
try {
  const page = await browser.newPage();
  await page.setViewport({ width: 1200, height: 1000 });
  page.on("console", (m) => console.log(`page: ${m.text()}`));
  page.on("pageerror", (e) => console.log(`page error: ${e.message}`));
  const t0 = Date.now();
  await page.goto(url);
  await page.waitForFunction(() => ["done", "error"].includes(window.t3?.status), { timeout: TIMEOUT_MS, polling: 500 });
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
