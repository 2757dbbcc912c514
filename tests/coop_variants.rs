//! The cooperative-matrix GEMM and its experimental variants (scripts/coop-variants/*.wgsl, each a
//! drop-in `--kernel-wgsl coop=FILE`) on machines without cooperative matrices: each lowers to SPIR-V in
//! every composition the library makes, with the options wgpu uses for a trusted module on Vulkan,
//! and runs, with its cooperative-matrix operations emulated in plain WGSL, against the f64 reference.
//! `T3_SPV_DIR=DIR` also writes each kernel's store/track composition there as SPIR-V (for
//! `spirv-dis`).

mod common;

use std::path::{Path, PathBuf};

use t3_wgpu::compositions;
use t3_wgpu::gemm::{Engine, GemmParams, Job, Padding, K_SLICE};
use t3_wgpu::gpu::Gpu;
use t3_wgpu::lower::{job_table, Group};
use t3_wgpu::reference::{rel_frobenius, Rng};
use t3_wgpu::reflect::{Access, Interface};
use t3_wgpu::shaders::{self, Epilogue, Put, Variant};
use t3_wgpu::shapes::{tiles, Chunking, Dtype, Shape};

fn kernels() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut v: Vec<PathBuf> = std::fs::read_dir(root.join("scripts/coop-variants"))
        .map(|d| {
            d.map(|e| e.expect("dir entry").path())
                .filter(|p| p.extension().is_some_and(|x| x == "wgsl"))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v.insert(0, root.join("shaders").join(Engine::Coop.file()));
    v
}

/// Every composition src/compositions.rs declares for the cooperative-matrix kernel, as the
/// [`Variant`]s the library builds from (so a composition declared later is lowered here too).
fn coop_compositions() -> Vec<Variant> {
    // Every put, the packed 2-byte ones of each output type among them.
    let packed = [Dtype::F16, Dtype::Bf16].into_iter();
    // Fused mode's windowed puts into four windows too.
    let puts: Vec<Put> = Put::ALL
        .into_iter()
        .chain(Put::ALL.into_iter().filter_map(Put::four))
        .chain(packed.clone().map(Put::StorePacked))
        .chain(packed.map(Put::AddPacked))
        .collect();
    let epilogues = Epilogue::ALL;
    let v: Vec<Variant> = compositions::all()
        .into_iter()
        .filter(|c| c.kernel == Engine::Coop.file())
        .map(|c| Variant {
            kernel: c.kernel,
            gemm: c.operands.map(|o| Dtype::parse(o).expect("operand type")),
            put: puts
                .iter()
                .copied()
                .find(|p| p.name() == c.put)
                .unwrap_or_else(|| panic!("put {}", c.put)),
            // The four-window twins ("fused4") compose their epilogue's file.
            epilogue: epilogues
                .into_iter()
                .find(|e| e.name() == c.epilogue.trim_end_matches('4')),
        })
        .collect();
    assert!(
        v.contains(&store_track()) && v.iter().any(|c| c.epilogue == Some(Epilogue::Fused)),
        "{v:?}"
    );
    v
}

/// The composition the tests run: plain stores, tracked.
fn store_track() -> Variant {
    Variant {
        kernel: Engine::Coop.file(),
        gemm: Some(Dtype::F16),
        put: Put::Store,
        epilogue: Some(Epilogue::Track),
    }
}

/// SPIR-V of `src` as wgpu-hal writes it for `create_shader_module_trusted(.., unchecked())`:
/// no bounds checks, no loop bounding, no integer-division checks, overrides at their defaults.
fn lower(what: &str, src: &str) -> Vec<u32> {
    let module = naga::front::wgsl::parse_str(src)
        .unwrap_or_else(|e| panic!("{what}: {}", e.emit_to_string(src)));
    let info = naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::all(),
    )
    .validate(&module)
    .unwrap_or_else(|e| panic!("{what}: {}", e.emit_to_string(src)));
    let (module, info) = naga::back::pipeline_constants::process_overrides(
        &module,
        &info,
        None,
        &Default::default(),
    )
    .unwrap_or_else(|e| panic!("{what}: overrides: {e}"));
    let options = naga::back::spv::Options {
        lang_version: (1, 3),
        flags: naga::back::spv::WriterFlags::empty(),
        force_loop_bounding: false,
        emit_int_div_checks: false,
        ..Default::default()
    };
    naga::back::spv::write_vec(&module, &info, &options, None)
        .unwrap_or_else(|e| panic!("{what}: SPIR-V: {e}"))
}

#[test]
fn coop_kernels_lower_to_spirv() {
    let dump = std::env::var_os("T3_SPV_DIR").map(PathBuf::from);
    let kernels = kernels();
    let variants = coop_compositions();
    for path in &kernels {
        let src = std::fs::read_to_string(path).expect("read kernel");
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        // The host's tile math (thresholds, padding) is the committed kernel's: a drop-in keeps it.
        let [bm, bn, _] = store_track().interface().unwrap().tile;
        for (c, v) in [("BM", bm), ("BN", bn)] {
            let decl = format!("const {c}: u32 = {v}u;");
            assert!(src.contains(&decl), "{name}: `{decl}` (the host's tile)");
        }
        let bk: usize = src
            .split_once("const BK: u32 = ")
            .and_then(|(_, r)| r.split_once("u;"))
            .and_then(|(v, _)| v.parse().ok())
            .unwrap_or_else(|| panic!("{name}: `const BK: u32`"));
        assert_eq!(K_SLICE % bk, 0, "{name}: K padding covers whole BK slices");
        for variant in &variants {
            let what = format!(
                "{name} {:?} {:?} {:?}",
                variant.gemm, variant.put, variant.epilogue
            );
            let full = variant
                .source(Some(&src))
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            let words = lower(&what, &full);
            assert_eq!(words[0], 0x0723_0203, "{what}: SPIR-V magic");
            if let Some(dir) = dump.as_ref().filter(|_| *variant == store_track()) {
                std::fs::create_dir_all(dir).expect("create T3_SPV_DIR");
                let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
                std::fs::write(dir.join(format!("{name}.spv")), bytes).expect("write SPIR-V");
            }
        }
    }
    assert!(!kernels.is_empty());
}

/// A composition's source `src` with its cooperative-matrix operations emulated in plain WGSL, so that its index logic runs
/// on adapters without cooperative matrices (lavapipe). Lane l of a subgroup (t / 32) owns row l / 2,
/// columns 8 (l % 2).. of each accumulator, and a loaded operand is only its place in workgroup
/// memory, read when multiplied (every kernel multiplies a fragment before it writes that memory
/// again). The operand arrays `As`/`Bs` move to storage buffers (bindings `first` and `first + 1`,
/// past the kernel's own; one region per workgroup, poisoned with NaN by the caller), so that a
/// kernel over lavapipe's 32 KiB of workgroup memory still runs and a read of a stage never written
/// shows; the output scratch `Cs` stays put. A kernel that loads fragments straight from the
/// operand bindings `a` and `b` (no `As`/`Bs`: the `global` variants) gets places there.
fn emulate(src: &str, first: usize) -> String {
    // Declarations of the operand arrays: element type and length, moved to storage.
    let mut decls = Vec::new();
    let mut out = String::new();
    for line in src.lines() {
        let l = line.trim();
        let moved = ["As", "Bs"]
            .iter()
            .find(|n| l.starts_with(&format!("var<workgroup> {n}:")));
        if let Some(name) = moved {
            let ty = &l[l.find("array<").unwrap() + 6..l.rfind(',').unwrap()];
            let len: usize = l[l.rfind(',').unwrap() + 1..l.rfind('>').unwrap()]
                .trim()
                .parse()
                .unwrap();
            decls.push((name.to_string(), ty.to_string(), len));
        } else if l != "enable wgpu_cooperative_matrix;" {
            out.push_str(line);
            out.push('\n');
        }
    }
    if decls.is_empty() {
        // Fragments from the operand bindings only: one-element stand-ins keep the prelude whole.
        decls = ["As", "Bs"]
            .map(|n| (n.to_string(), "vec4<f16>".to_string(), 1))
            .to_vec();
    }
    assert_eq!(decls.len(), 2, "As and Bs declared, or neither");
    // Loads become places (in workgroup memory, or in the operand bindings); the closing `]` of
    // `&As[...]` goes with them.
    for (from, to) in [
        ("coopLoadT<coop_mat16x16<f16, A>>(&As[", "opnd_w("),
        ("coopLoadT<coop_mat16x16<f16, B>>(&Bs[", "opnd_w("),
        ("coopLoadT<coop_mat16x16<f16, A>>(&a[", "opnd_ga("),
        ("coopLoadT<coop_mat16x16<f16, B>>(&b[", "opnd_gb("),
        ("coopStoreT(", "store_frag("),
    ] {
        while let Some(i) = out.find(from) {
            let close = i + out[i..].find(']').unwrap();
            out.replace_range(close..close + 1, "");
            out.replace_range(i..i + from.len(), to);
        }
    }
    out = out
        // A fragment store names its scratch place: `&Cs[` is only ever written there.
        .replace("&Cs[", "")
        .replace("coop_mat16x16<f32, C>()", "Frag()")
        .replace("coop_mat16x16<f32, C>", "Frag")
        .replace("coopMultiplyAdd(", "mma(")
        .replace("As[", "emu_as[emu_a0 + ")
        .replace("Bs[", "emu_bs[emu_b0 + ")
        .replace("workgroupBarrier();", "workgroupBarrier();\n    storageBarrier();")
        .replace(
            "    let lane = t % 32u;\n",
            &format!(
                "    let lane = t % 32u;\n    emu_lane = lane;\n    emu_a0 = w * {}u;\n    emu_b0 = w * {}u;\n",
                decls[0].2, decls[1].2
            ),
        );
    assert!(out.contains("emu_lane = lane;"), "kernel defines `lane`");
    // Element (r, c) of an A place, and elements (r, c..c + 8) of a B place (c a multiple of 8).
    let (a_at, b_row) = match decls[0].1.as_str() {
        "f16" => (
            "return f32(emu_as[emu_a0 + o.base + r * o.stride + c]);".to_string(),
            "let i = emu_b0 + o.base + r * o.stride + c;\n    var v: array<f32, 8>;\n    for (var j = 0u; j < 8u; j += 1u) {\n        v[j] = f32(emu_bs[i + j]);\n    }\n    return v;".to_string(),
        ),
        "vec4<u32>" => (
            "let e = emu_as[emu_a0 + o.base + r * o.stride + c / 8u];\n    return unpack2x16float(e[(c % 8u) / 2u])[c % 2u];".to_string(),
            "let e = emu_bs[emu_b0 + o.base + r * o.stride + c / 8u];\n    let x = unpack2x16float(e.x);\n    let y = unpack2x16float(e.y);\n    let z = unpack2x16float(e.z);\n    let w = unpack2x16float(e.w);\n    return array<f32, 8>(x.x, x.y, y.x, y.y, z.x, z.y, w.x, w.y);".to_string(),
        ),
        "vec4<f16>" => (
            "return f32(emu_as[emu_a0 + o.base + r * o.stride + c / 4u][c % 4u]);".to_string(),
            "let i = emu_b0 + o.base + r * o.stride + c / 4u;\n    let x = emu_bs[i];\n    let y = emu_bs[i + 1u];\n    return array<f32, 8>(f32(x.x), f32(x.y), f32(x.z), f32(x.w), f32(y.x), f32(y.y), f32(y.z), f32(y.w));".to_string(),
        ),
        other => panic!("operand arrays of {other}"),
    };
    assert_eq!(decls[0].1, decls[1].1, "As and Bs of one type");
    // Places in the operand bindings only where the kernel loads from them: a kernel with second
    // variables on those bindings (`alias`) cannot also use `a` and `b`.
    let (global_fns, a_global, b_global) = if out.contains("opnd_ga(") || out.contains("opnd_gb(") {
        (
            r#"fn opnd_ga(base: u32, stride: u32) -> Opnd {
    emu_oob = emu_oob || base + 15u * stride + 3u >= arrayLength(&a);
    return Opnd(base, stride, true);
}
fn opnd_gb(base: u32, stride: u32) -> Opnd {
    emu_oob = emu_oob || base + 15u * stride + 3u >= arrayLength(&b);
    return Opnd(base, stride, true);
}"#,
            r#"if (o.global) {
        return f32(a[o.base + r * o.stride + c / 4u][c % 4u]);
    }"#,
            r#"if (o.global) {
        let x = b_word(o.base + r * o.stride + c / 4u);
        let y = b_word(o.base + r * o.stride + c / 4u + 1u);
        return array<f32, 8>(f32(x.x), f32(x.y), f32(x.z), f32(x.w), f32(y.x), f32(y.y), f32(y.z), f32(y.w));
    }"#,
        )
    } else {
        ("", "", "")
    };
    let prelude = format!(
        r#"@group(0) @binding({first}) var<storage, read_write> emu_as: array<{ta}>;
@group(0) @binding({second}) var<storage, read_write> emu_bs: array<{tb}>;
var<private> emu_lane: u32;
var<private> emu_a0: u32;
var<private> emu_b0: u32;
struct Frag {{ v: array<f32, 8> }}
struct Opnd {{ base: u32, stride: u32, global: bool }}
fn opnd_w(base: u32, stride: u32) -> Opnd {{
    return Opnd(base, stride, false);
}}
// A fragment load from an operand binding reaching past its end (16 rows of 4 vec4s), used or not,
// poisons every fragment the invocation stores afterwards (`emu_oob`): lavapipe's robust access would
// return zeros, the padding's own value, and hide it, where the device runs the kernel unchecked.
var<private> emu_oob: bool;
const POISON: f32 = 3.0e38;
{global_fns}
fn a_at(o: Opnd, r: u32, c: u32) -> f32 {{
    {a_global}
    {a_at}
}}
fn b_row(o: Opnd, r: u32, c: u32) -> array<f32, 8> {{
    {b_global}
    {b_row}
}}
fn mma(a: Opnd, b: Opnd, acc: Frag) -> Frag {{
    var out = acc;
    let r = emu_lane / 2u;
    let c0 = (emu_lane % 2u) * 8u;
    for (var k = 0u; k < 16u; k += 1u) {{
        let x = a_at(a, r, k);
        let y = b_row(b, k, c0);
        for (var j = 0u; j < 8u; j += 1u) {{
            out.v[j] += x * y[j];
        }}
    }}
    return out;
}}
fn store_frag(c: Frag, at: u32, stride: u32) {{
    let r = emu_lane / 2u;
    let c0 = (emu_lane % 2u) * 8u;
    for (var j = 0u; j < 8u; j += 1u) {{
        Cs[at + r * stride + c0 + j] = select(c.v[j], POISON, emu_oob);
    }}
}}
"#,
        second = first + 1,
        ta = decls[0].1,
        tb = decls[1].1,
    );
    // After the enables and before every declaration.
    let (enables, rest): (Vec<&str>, Vec<&str>) = out
        .lines()
        .partition(|l| l.trim_start().starts_with("enable "));
    format!("{}\n{prelude}{}\n", enables.join("\n"), rest.join("\n"))
}

/// Bytes of one workgroup's region of an emulated operand array (`decl` as in the kernel).
fn region_bytes(src: &str, name: &str) -> u64 {
    let Some(l) = src
        .lines()
        .find(|l| l.trim().starts_with(&format!("var<workgroup> {name}:")))
    else {
        // A kernel without the stage (the `global` variants): `emulate`'s one-vec4<f16> stand-in.
        return 8;
    };
    let len: u64 = l[l.rfind(',').unwrap() + 1..l.rfind('>').unwrap()]
        .trim()
        .parse()
        .unwrap();
    len * if l.contains("vec4<u32>") {
        16
    } else if l.contains("vec4<f16>") {
        8
    } else {
        2
    }
}

/// Runs kernel `src` (emulated) on `shape` in `chunks` chunks, produced last chunk first, on a
/// workgroup per tile or (`grid` = Some(g)) a persistent grid of min(g, tiles - 1) workgroups; returns
/// the relative error against f64 and whether every tracker counter reached its threshold. With
/// `windows` (a composition of fused mode's B in two windows, bound as `b` and `b_hi`), chunk x reads
/// B through window x % 3 ([`TwoWindows`]).
#[allow(clippy::too_many_arguments)]
fn run_emulated(
    gpu: &Gpu,
    pipeline: &wgpu::ComputePipeline,
    layout: &wgpu::BindGroupLayout,
    src: &str,
    (shape, chunks, windows): (Shape, usize, bool),
    grid: Option<u32>,
    c0: f32,
    rng: &mut Rng,
) -> (f64, bool) {
    let Shape { m, n, k } = shape;
    let d = Dtype::F16;
    let mut fill =
        |len: usize| -> Vec<f32> { rng.fill(len).into_iter().map(|v| d.round(v)).collect() };
    let (a, b) = (fill(m * k), fill(k * n));
    let chunking = Chunking::new(m, 1, chunks).unwrap();
    // Reversed production order: the job table, not the chunk index, decides what a workgroup does.
    let order: Vec<usize> = (0..chunks).rev().collect();
    let tile_n = Engine::Coop.tile_n();
    let l = Padding::new(m, k, n);
    let packed_b = l.pack_b(d, &b, n);
    let two = windows.then(|| TwoWindows::new(&packed_b));
    let (jobs, total_wg) = job_table(
        order.iter().map(|&x| Job {
            row0: chunking.rows(x).start as u32,
            row1: chunking.rows(x).end as u32,
            counter: x as u32,
            b_window: if windows { (x % 3) as u32 } else { 0 },
            b_off: two.as_ref().map_or(0, |t| t.b_off[x % 3]),
            ..Default::default()
        }),
        n,
        tile_n,
    );
    let mut params = GemmParams::new(
        shape,
        &l,
        tile_n,
        0..jobs.len(),
        total_wg,
        gpu.max_workgroups_per_dim,
    );
    if let Some(t) = &two {
        params.b_split = t.split;
    }
    let launched = match grid {
        Some(g) if total_wg > 1 => {
            params.grid_wg = g.min(total_wg - 1);
            params.dispatch_x = gpu.fold(params.grid_wg).0;
            params.grid_wg
        }
        _ => total_wg,
    };
    let usage =
        wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::COPY_SRC;
    let init = |label, bytes: &[u8], u| gpu.init_buffer(label, bytes, u);
    let abuf = init("A", &l.pack_a(d, &a, k), usage);
    let (bbuf, b_hi) = match &two {
        Some(t) => (init("B lo", &t.lo, usage), Some(init("B hi", &t.hi, usage))),
        None => (init("B", &packed_b, usage), None),
    };
    let c = init(
        "C",
        bytemuck::cast_slice(&vec![c0; (m * n).next_multiple_of(4)]),
        usage,
    );
    let counters = init("tracker", &vec![0u8; chunks * 4], usage);
    let pbuf = init(
        "params",
        bytemuck::bytes_of(&params),
        wgpu::BufferUsages::UNIFORM,
    );
    let jbuf = init("jobs", bytemuck::cast_slice(&jobs), usage);
    // f16 NaN everywhere: a stage read before it is written poisons the output.
    let poison = |name| vec![0xffu8; (region_bytes(src, name) * u64::from(total_wg)) as usize];
    let emu_a = init("emulated As", &poison("As"), usage);
    let emu_b = init("emulated Bs", &poison("Bs"), usage);
    // The tracked GEMM's roles, then the emulated stages' two buffers (`emulate`).
    let roles: Vec<&str> = Group::Gemm
        .roles()
        .iter()
        .copied()
        .chain(["emu_as", "emu_bs"])
        .chain(b_hi.as_ref().map(|_| "b_hi"))
        .collect();
    let mut named = vec![
        ("dst", c.as_entire_binding()),
        ("p", pbuf.as_entire_binding()),
        ("a", abuf.as_entire_binding()),
        ("b", bbuf.as_entire_binding()),
        ("counters", counters.as_entire_binding()),
        ("jobs", jbuf.as_entire_binding()),
        ("emu_as", emu_a.as_entire_binding()),
        ("emu_bs", emu_b.as_entire_binding()),
    ];
    if let Some(hi) = &b_hi {
        named.push(("b_hi", hi.as_entire_binding()));
    }
    let bg = shaders::bind(gpu, "emulated coop gemm", layout, &roles, &named);
    let mut enc = gpu.device.create_command_encoder(&Default::default());
    {
        let mut pass = enc.begin_compute_pass(&Default::default());
        gpu.dispatch(&mut pass, pipeline, &bg, launched);
    }
    let idx = gpu
        .submit("emulated coop gemm", vec![enc.finish()])
        .unwrap();
    gpu.wait(
        Some(idx),
        "emulated coop gemm",
        gpu.timeout_for(shape.flops() * 20.0, 0.0),
    )
    .unwrap();
    let got = gpu.read_f32("C", &c, 0, m * n).unwrap();
    let tracked = gpu.read_u32("tracker", &counters, 0, chunks).unwrap();
    let want: Vec<u32> = (0..chunks)
        .map(|x| tiles(chunking.rows(x).len(), n, tile_n) as u32)
        .collect();
    (
        rel_frobenius(&got, &t3_wgpu::reference::gemm(&a, &b, m, n, k)),
        tracked == want,
    )
}

/// The adapter, if it has SHADER_F16 (else the test is skipped, and says so), the tracked
/// composition's interface, and a layout of its bindings, then the emulated operand arrays
/// (`emulate`), then `extra`.
fn emulation(
    extra: &[Access],
) -> Option<(&'static Gpu, &'static Interface, wgpu::BindGroupLayout)> {
    let gpu = common::gpu()?;
    if !gpu.has(wgpu::Features::SHADER_F16) {
        eprintln!("SKIPPED: no SHADER_F16");
        return None;
    }
    let own = store_track().interface().unwrap();
    let bindings = [own.bindings, &[Access::ReadWrite; 2], extra].concat();
    let emulated = Interface {
        bindings: Box::leak(bindings.into_boxed_slice()),
        ..*own
    };
    Some((
        gpu,
        own,
        shaders::layout(gpu, "emulated coop gemm", &emulated),
    ))
}

/// Every cooperative-matrix kernel, emulated on whatever adapter runs the tests: edge shapes, K at
/// and around the slice and slice-pair boundaries, several column tiles, tile rows past one tile group,
/// chunks that do not divide M.
#[test]
fn coop_kernels_emulated_match_reference() {
    let Some((gpu, own, layout)) = emulation(&[]) else {
        return;
    };
    let variant = store_track();
    let shapes: &[(usize, usize, usize, usize)] = &[
        (1, 1, 1, 1),
        (17, 33, 65, 1),
        (131, 129, 17, 3),
        (130, 600, 48, 2),
        (40, 260, 97, 1),
        (64, 300, 130, 1),
        (200, 64, 40, 7),
        (1100, 300, 16, 3),
        // Whole tiles beside edge ones; then a row length that is not a multiple of four (every row
        // of C takes `put_row4`, not the 16-byte store).
        (300, 520, 40, 2),
        (260, 514, 33, 1),
    ];
    // The committed kernel always; the variants (ten seconds more on lavapipe) with
    // T3_COOP_VARIANT=all or =NAME.
    let only = std::env::var("T3_COOP_VARIANT").unwrap_or_else(|_| "gemm_coop".into());
    let mut ran = 0;
    for path in kernels() {
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        if only != "all" && only != name {
            continue;
        }
        let src = std::fs::read_to_string(&path).unwrap();
        if src.contains("--no-verify") {
            eprintln!("{name}: leaves C wrong on purpose (a timing experiment), not run");
            continue;
        }
        // Plain stores into a poisoned C (an element never written shows), then CAS adds into a
        // zeroed one: a put made of element operations, which the kernel writes a lane per column
        // (an element written twice, or never, shows against the nonzero reference).
        for put in [Put::Store, Put::Cas] {
            let variant = Variant { put, ..variant };
            // The whole composition is emulated (the put's snippets are composed in).
            let emu = emulate(&variant.source(Some(&src)).unwrap(), own.bindings.len());
            let module = shaders::module_from_source(gpu, &name, emu.clone(), false)
                .unwrap_or_else(|e| panic!("{name}: {e}\n{emu}"));
            let mut rng = Rng::new(common::seed(&format!("emulated {name} {put:?}")));
            let c0 = if put == Put::Store { f32::NAN } else { 0.0 };
            // A persistent grid (`--gemm-grid`) of 2 workgroups, each looping over tiles, on
            // the store put: a tile skipped or done twice shows in C or in the counters.
            let grids: &[Option<u32>] = match put {
                Put::Store => &[None, Some(2)],
                _ => &[None],
            };
            // Each grid's pipeline, made once: one tile per workgroup, or GRID (tiles in a loop).
            let pipelines: Vec<_> = grids
                .iter()
                .map(|g| {
                    let c = [("GRID", f64::from(u8::from(g.is_some())))];
                    shaders::pipeline(gpu, &name, &layout, &module, &c).unwrap()
                })
                .collect();
            for &(m, n, k, chunks) in shapes {
                let shape = Shape::new(m, n, k).unwrap();
                for (&grid, pipeline) in grids.iter().zip(&pipelines) {
                    let (err, tracked) = run_emulated(
                        gpu,
                        pipeline,
                        &layout,
                        &src,
                        (shape, chunks, false),
                        grid,
                        c0,
                        &mut rng,
                    );
                    assert!(
                        err <= 1e-3,
                        "{name} {put:?} {shape} chunks {chunks} grid {grid:?}: rel error {err}"
                    );
                    assert!(
                        tracked,
                        "{name} {put:?} {shape} chunks {chunks} grid {grid:?}: tracker counts"
                    );
                }
            }
        }
        eprintln!("{name}: emulated with both puts, all shapes match");
        ran += 1;
    }
    assert!(ran > 0, "T3_COOP_VARIANT={only}: no such kernel");
}

/// B (packed, `vec4<f16>` words) placed in two buffers as fused mode's two windows of B are bound, so
/// that a word read through the wrong window is NaN: a job reading the first window finds B whole at
/// `b_off[0]`; one reading the second finds it whole at `b_off[1]` (past the split); one across both
/// finds B's words before the split in the first buffer at 0 and the rest at the second's start.
/// Everything else is f16 NaN.
struct TwoWindows {
    lo: Vec<u8>,
    hi: Vec<u8>,
    /// The split, elements (`GemmParams::b_split`: a multiple of 64).
    split: u32,
    /// Each window's job's B offset, elements (0: the first window, 1: the second, 2: across both).
    b_off: [u32; 3],
}

impl TwoWindows {
    fn new(packed: &[u8]) -> TwoWindows {
        const WORD: usize = 8;
        let words = packed.len() / WORD;
        // The split, words: half of B on a 16-word (64-element) boundary, at least one boundary in.
        let split = (words / 2 / 16 * 16).max(16);
        // Second buffer: B's words from the split on at 0, B whole at `whole_hi`.
        let whole_hi = words.saturating_sub(split).next_multiple_of(32);
        let nan = |len: usize| vec![0xffu8; len * WORD];
        let mut hi = nan(whole_hi + words);
        if split < words {
            hi[..(words - split) * WORD].copy_from_slice(&packed[split * WORD..]);
        }
        hi[whole_hi * WORD..].copy_from_slice(packed);
        // First buffer: B's words before the split at 0, NaN where a second-window job's words lie
        // read through it by mistake, then B whole at `whole_lo`.
        let whole_lo = (split + whole_hi + words).next_multiple_of(32);
        let mut lo = nan(whole_lo + words);
        lo[..split.min(words) * WORD].copy_from_slice(&packed[..split.min(words) * WORD]);
        lo[whole_lo * WORD..].copy_from_slice(packed);
        TwoWindows {
            lo,
            hi,
            split: (split * 4) as u32,
            b_off: [(whole_lo * 4) as u32, ((split + whole_hi) * 4) as u32, 0],
        }
    }
}

/// The cooperative kernel with fused mode's B in two windows (shaders/fused/operands/f16_b2.wgsl,
/// its copy of the tile's code per window), emulated: chunks whose jobs read B through the first
/// window, the second and both (`Job::b_window` 0, 1, 2), each window a buffer of its own where a word
/// read through the wrong one is NaN; equal to the f64 reference on edge shapes.
#[test]
fn coop_kernel_reads_b_through_two_windows() {
    // B's second window is binding 8, past the emulated operand arrays.
    let Some((gpu, own, layout)) = emulation(&[Access::Read]) else {
        return;
    };
    assert_eq!(own.bindings.len() + 2, 8, "b_hi is binding 8");
    let variant = store_track();
    // The tracked composition with B's two-window source in place of its one binding.
    let body = |path: &str| -> String {
        let src = t3_wgpu::reflect::source(path).unwrap();
        src.lines()
            .filter(|l| !l.trim_start().starts_with("enable "))
            .map(|l| format!("{l}\n"))
            .collect()
    };
    let (one, two) = (
        body("operands/f16_b.wgsl"),
        body("fused/operands/f16_b2.wgsl"),
    );
    let composed = variant.source(None).unwrap();
    assert!(
        composed.contains(&one),
        "the tracked composition reads B as one binding"
    );
    let src = composed.replace(&one, &two);
    let emu = emulate(&src, own.bindings.len());
    let module = shaders::module_from_source(gpu, "gemm_coop b2", emu.clone(), false)
        .unwrap_or_else(|e| panic!("{e}\n{emu}"));
    let pipeline =
        shaders::pipeline(gpu, "gemm_coop b2", &layout, &module, &[("GRID", 0.0)]).unwrap();
    let mut rng = Rng::new(common::seed("emulated gemm_coop, B in two windows"));
    for &(m, n, k, chunks) in &[(3, 1, 1, 3), (131, 129, 17, 3), (300, 520, 40, 6)] {
        let shape = Shape::new(m, n, k).unwrap();
        let (err, tracked) = run_emulated(
            gpu,
            &pipeline,
            &layout,
            &src,
            (shape, chunks, true),
            None,
            f32::NAN,
            &mut rng,
        );
        assert!(err <= 1e-3, "{shape} chunks {chunks}: rel error {err}");
        assert!(tracked, "{shape} chunks {chunks}: tracker counts");
    }
}
