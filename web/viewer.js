// The viewer's reading of a results file that `t3 run --json` wrote (on any GPU): its format checked,
// a plain message for anything else, and the CLI's first screen (src/report/summary.rs) drawn from it.

// The newest layout this page reads (src/experiment.rs FORMAT_VERSION); files before 1 have no format
// field and no timelines.
export const FORMAT = "t3-results";
export const FORMAT_VERSION = 1;
const MAX_BYTES = 64 << 20;

const isNum = (x) => typeof x === "number" && Number.isFinite(x);
const isOptNum = (x) => x === null || x === undefined || typeof x === "number";

// A file's text -> { report, version, notes } or { error } in plain words (never a parser's raw text).
export function readResults(text, name, bytes) {
  const file = `"${name}"`;
  const hint = "open the t3-results.json that `t3 run --json FILE` writes.";
  if (bytes > MAX_BYTES) return { error: `${file} is ${(bytes / 2 ** 20).toFixed(0)} MiB: a results file is far smaller (at most ${MAX_BYTES >> 20} MiB); ${hint}` };
  let r;
  try {
    r = JSON.parse(text);
  } catch {
    return { error: `${file} is not a results file (it is not JSON): ${hint}` };
  }
  if (r === null || typeof r !== "object" || Array.isArray(r)) return { error: `${file} is not a results file (JSON, but not an object with a results table): ${hint}` };
  if (r.page === "t3-wgpu web page") return { error: `${file} is this page's own JSON download, not the CLI's results file; ${hint}` };
  const version = r.format === undefined ? 0 : r.format_version;
  if (r.format !== undefined && r.format !== FORMAT) return { error: `${file} is a ${JSON.stringify(String(r.format))} file, not a ${FORMAT} one; ${hint}` };
  if (r.format !== undefined && !(Number.isInteger(version) && version >= 1)) return { error: `${file} has no valid format version (${JSON.stringify(r.format_version)}; expected a whole number from 1 to ${FORMAT_VERSION}).` };
  if (version > FORMAT_VERSION) return { error: `${file} was written by a newer t3 (results format version ${version}); this page reads versions up to ${FORMAT_VERSION}: open it with the page of the same release.` };
  const bad = malformed(r);
  if (bad) return { error: `${file} is not a results file this page can read: ${bad}; ${hint}` };
  const notes = [];
  if (version === 0) notes.push("written before results files carried a format version and timelines: its table only.");
  else if (!r.timelines.length) notes.push("it holds no timeline.");
  return { report: r, version, notes };
}

// What is wrong with a parsed object as a report (the fields the table and timelines read), or null.
function malformed(r) {
  if (typeof r.adapter !== "string") return "no adapter";
  const c = r.config;
  if (!c || !c.shape || ![c.shape.m, c.shape.n, c.shape.k, c.ranks, c.chunks].every(isNum)) return "no configuration (shape, ranks, chunks)";
  for (const k of ["t_gemm_ms", "t_comm_ms", "t_seq_ms", "ideal_ms", "gemm_tflops"]) if (!isNum(r[k])) return `no ${k}`;
  if (!Array.isArray(r.results) || !r.results.length) return "no results table";
  for (const [i, m] of r.results.entries()) {
    if (!m || typeof m.mode !== "string") return `result ${i + 1} has no mode`;
    for (const k of ["median_ms", "speedup", "overlap_efficiency", "max_rel_error"]) if (!isOptNum(m[k])) return `the ${m.mode} row's ${k} is not a number`;
  }
  if (r.checks !== undefined && !Array.isArray(r.checks)) return "its checks are not a list";
  if (r.format !== undefined) {
    if (!Array.isArray(r.timelines)) return "no timelines";
    for (const t of r.timelines)
      if (!t || typeof t.mode !== "string" || !Array.isArray(t.events) || t.events.some((e) => !e || !e.lane || !isNum(e.start_us) || !isNum(e.end_us)))
        return "a timeline without its events";
  }
  return null;
}

// ---- The CLI's first screen (src/report/summary.rs, the same words and widths) ----

const f3 = (v) => (v === null || v === undefined ? "-" : Number(v).toFixed(3));
// Rust's {:.2e}: no "+" and no leading zeros in the exponent.
const sci = (v) => (v === null || v === undefined ? "-" : Number(v).toExponential(2).replace("e+", "e"));
const rate = (t) => (t >= 1 ? `${t.toFixed(1)} TFLOP/s` : `${(t * 1e3).toFixed(1)} GFLOP/s`);
const clip = (l, w) => ([...l].length <= w ? l : [...l].slice(0, w - 3).join("") + "...");
const left = (s, w) => String(s).padEnd(w);
const right = (s, w) => String(s).padStart(w);
// Older files have no trigger: the mode's (src/modes/mod.rs Trigger::of).
const trigger = (m) => m.trigger ?? ({ host: "tracked", fused: "tracked", encoded: "planned" }[m.mode] ?? "none");

function modeChecks(r, failed) {
  const checks = r.checks ?? [];
  const kind = (n) => checks.find((c) => c.name === n)?.kind;
  const room = failed.some((n) => kind(n) === "room");
  const rest = failed.filter((n) => kind(n) !== "room");
  let verdict = "ok";
  if (rest.length) {
    const baseline = (n) => checks.some((c) => c.name === n && (c.subject === null || c.subject === undefined));
    const names = rest.filter((n) => !baseline(n));
    if (rest.some(baseline)) names.unshift("baselines");
    verdict = `FAILED: ${names.join(", ")}`;
  }
  return room ? `${verdict}, no room to overlap` : verdict;
}

// The table and the lines below it, as `t3 run` prints them.
export function summaryText(r) {
  const c = r.config;
  const out = [];
  const line = (l) => out.push(clip(l, 100));
  if (r.emulated) line("note: a CPU adapter emulates the GPU here: its times are not a GPU's, and overlap may not pay");
  line("mode       trigger   median ms   speedup  overlap eff  max rel err  checks");
  for (const m of r.results) {
    if (m.skipped) {
      line(`${left(m.mode, 10)} ${left(trigger(m), 8)}  skipped: ${m.skipped}`);
      continue;
    }
    const eff = m.mode === "sequential" || m.overlap_efficiency === null || m.overlap_efficiency === undefined ? "-" : `${m.overlap_efficiency.toFixed(3)}${m.own_baseline ? "*" : ""}`;
    const full = modeChecks(r, m.checks_failed ?? []);
    const room = full.endsWith("no room to overlap");
    let checks = !full.startsWith("FAILED") ? full : room ? "FAILED, no room to overlap" : "FAILED (below)";
    if (m.trackers_ok === false) checks = `trackers WRONG; ${checks}`;
    line(`${left(m.mode, 10)} ${left(trigger(m), 8)} ${right(f3(m.median_ms), 10)} ${right(f3(m.speedup), 9)} ${right(eff, 12)} ${right(sci(m.max_rel_error), 12)}  ${checks}`);
  }
  if (r.results.some((m) => m.own_baseline)) line("* efficiency against the mode's own GEMM (--verbose: its own baseline)");
  line("");
  line(`baselines  ms: T_gemm ${r.t_gemm_ms.toFixed(3)} (${rate(r.gemm_tflops)}), T_comm ${r.t_comm_ms.toFixed(3)}, T_seq ${r.t_seq_ms.toFixed(3)}, ideal ${r.ideal_ms.toFixed(3)}`);
  const devices = (r.devices ?? []).filter((d) => d.startsWith("device ")).length;
  let on = r.adapter.split(" (")[0];
  if (devices > 1) {
    const links = r.devices.filter((d) => d.startsWith("link "));
    const zero = links.filter((l) => l.includes("zero-copy")).length;
    on = `${devices} devices, ${zero === 0 ? "host-copy links" : zero === links.length ? "zero-copy links" : "zero-copy and host-copy links"}`;
  }
  line(`workload   ${c.shape.m}x${c.shape.n}x${c.shape.k} x ${c.ranks} ranks, ${c.chunks} chunks/rank, ${c.collective} (${c.via}${c.order === "chunk" ? ", GEMM in chunk order" : ""}), ${c.dtype ?? "f32"} ${r.gemm_kernel ?? "simt"}${c.out_dtype ? `, ${c.out_dtype} outputs` : ""}`);
  line(`on         ${on}`);
  // Each mode's configuration and its source (modes sharing both on one line), then each fallback:
  // report::summary's config_lines.
  const groups = [];
  for (const m of r.results.filter((m) => m.skipped == null && m.config != null)) {
    const source = m.config_source ?? "flags";
    const g = groups.find((g) => g.config === m.config && g.source === source);
    if (g) g.modes.push(m.mode);
    else groups.push({ config: m.config, source, modes: [m.mode] });
  }
  groups.forEach((g, i) => line(`${(i === 0 ? "config" : "").padEnd(10)} [${g.source}] ${g.modes.join(", ")}: ${g.config}`));
  for (const m of r.results) if (m.fallback != null) line(`fallback   ${m.mode}: ${m.fallback}`);
  const failed = (r.checks ?? []).filter((k) => !k.ok);
  const hard = failed.filter((k) => k.kind !== "room");
  if (hard.length) {
    line("checks failed (overlap efficiency left empty where they bear on it):");
    for (const k of hard) line(`  ${k.name}: ${k.detail}`);
  }
  if (failed.some((k) => k.kind === "room")) line("no room to overlap (T_seq within noise of ideal: efficiencies left empty, the times stand)");
  line("(every figure, spread and setting: --verbose or --json)");
  return out.join("\n") + "\n";
}
