#!/usr/bin/env python3
"""Writes the cooperative-matrix GEMM variants in this folder (each a whole kernel file for `--kernel-wgsl coop=FILE`).

The kernels are unrolled by hand (naga emits loops as `while`, and the accumulators must stay named
variables), so they are generated rather than typed: `python3 scripts/coop-variants/gen.py` writes
the variants still to be timed; `--all` also writes those NVIDIA's compiler rejected in run 7 (vec,
half, half16, db1, db2, db2-swz), to reproduce that failure. tests/coop_variants.rs lowers each one to SPIR-V in every composition; the device
part `coopvar` of scripts/device-run.sh times and checks each. What each variant tests is in its
header (and in README.md here).
"""
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

# 16-byte views of the operand buffers. shaders/operands/f16.wgsl binds A and B as vec4<f16> (8 bytes);
# a second variable on the same binding is legal in naga and Vulkan, and only these are used, so wgpu
# checks only these against the layout. Rows start at multiples of 32 halves (src/gemm.rs, `Padding`),
# so every 8-half group a kernel reads is 16-byte aligned.
def base():
    """The kernel a variant is written from: $GEN_BASE, else shaders/gemm_coop.wgsl as it stands."""
    path = os.environ.get("GEN_BASE") or os.path.join(HERE, "../../shaders/gemm_coop.wgsl")
    with open(path) as f:
        return f.read()


VIEWS = """\
@group(0) @binding(2) var<storage, read> a8: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read> b8: array<vec4<u32>>;
"""

GROUPED = """\
// Grouped tile order: consecutive workgroups walk down GROUP tile rows of their job before moving one
// tile column right, so the ~132 tiles in flight share A rows and B columns in L2 (row-major order
// spans all of B's columns with a few A bands). Tiles stay inside their job, so chunks and tracker
// counts are unchanged.
const GROUP: u32 = 8u;

fn grouped(tile: Tile, w: u32) -> Tile {
    let job = tile.job;
    let local = w - job.wg_start;
    let rows = (job.row1 - job.row0 + BM - 1u) / BM;
    let span = GROUP * p.tiles_n;
    let first = (local / span) * GROUP;
    let h = min(rows - first, GROUP);
    let i = local % span;
    return Tile(job, job.row0 + (first + i % h) * BM, (i / h) * BN);
}
"""

EMIT = """\
// Writes fragment `c` (tile rows row.., cols col..) through the subgroup's scratch `half` (fragments
// alternate between two, so one barrier per fragment suffices): lane l puts row l / 2, columns
// 8 (l % 2) .. + 8 (as shaders/gemm_coop.wgsl).
fn emit(c: coop_mat16x16<f32, C>, sg: u32, half: u32, lane: u32, row: u32, col: u32, job: Job) {
    let s = (2u * sg + half) * 256u;
    coopStoreT(c, &Cs[s], 16u);
    workgroupBarrier();
    let o = s + (lane / 2u) * 16u + (lane % 2u) * 8u;
    let r = row + lane / 2u;
    let cc = col + (lane % 2u) * 8u;
    put_row4_vec(r, cc, vec4<f32>(Cs[o], Cs[o + 1u], Cs[o + 2u], Cs[o + 3u]), job);
    put_row4_vec(r, cc + 4u, vec4<f32>(Cs[o + 4u], Cs[o + 5u], Cs[o + 6u], Cs[o + 7u]), job);
}
"""


def accumulators(ind):
    return "".join(f"{ind}var c{i}{j} = coop_mat16x16<f32, C>();\n" for i in range(4) for j in range(4))


def step(ind, a_at, sa, b_at, sb, arrays=("As", "Bs")):
    """One 16-deep step of a 64x64 block: 4 A and 4 B fragments, 16 multiply-adds.
    a_at(i) / b_at(j): index expressions of fragment i's first element (vec4 units) in `arrays`
    (the workgroup stages, or the operand bindings `a` and `b`)."""
    s = f"{ind}{{\n"
    i2 = ind + "    "
    for i in range(4):
        s += f"{i2}let a{i} = coopLoadT<coop_mat16x16<f16, A>>(&{arrays[0]}[{a_at(i)}], {sa});\n"
    for j in range(4):
        s += f"{i2}let b{j} = coopLoadT<coop_mat16x16<f16, B>>(&{arrays[1]}[{b_at(j)}], {sb});\n"
    for i in range(4):
        for j in range(4):
            s += f"{i2}c{i}{j} = coopMultiplyAdd(a{i}, b{j}, c{i}{j});\n"
    return s + f"{ind}}}\n"


def emits(ind, sg, r0, cl):
    s = ""
    for n, (i, j) in enumerate((i, j) for i in range(4) for j in range(4)):
        s += f"{ind}emit(c{i}{j}, {sg}, {n % 2}u, lane, {r0} + {16 * i}u, {cl} + {16 * j}u, job);\n"
    return s


def comment(doc):
    """`doc` as WGSL line comments."""
    return "".join(f"// {l}".rstrip() + "\n" for l in doc.strip().split("\n"))


def head(doc, consts, smem, grouped):
    out = comment(doc)
    out += "enable f16;\nenable wgpu_cooperative_matrix;\n\n" + consts + "\n" + VIEWS + "\n" + smem + "\n"
    if grouped:
        out += GROUPED + "\n"
    return out + EMIT + "\n"


def entry(grouped, wg=256):
    tile = "grouped(tile_of(w, t), w)" if grouped else "tile_of(w, t)"
    return f"""@compute @workgroup_size({wg})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) t: u32) {{
    let w = wid.x + wid.y * p.dispatch_x;
    if (w >= p.total_wg) {{
        spare_wg(t);
        return;
    }}
    let tile = {tile};
    let job = tile.job;
    let row0 = tile.row0;
    let col0 = tile.col0;
    let sg = t / 32u;
    let lane = t % 32u;
"""


def vec_single(grouped):
    """128x256 tile, 8 subgroups of 64x64, 32-deep slices through one buffer with two barriers per
    slice and a register prefetch of the next slice (the committed kernel's schedule), but 16-byte
    global loads and 16-byte workgroup stores (workgroup memory typed vec4<u32>, fragments loaded from
    it with strides in vec4 units)."""
    doc = f"""Variant vec{'-swz' if grouped else ''}: the committed kernel's schedule (128x256 tiles, 8 subgroups of 64x64, 32-deep
slices, one buffer, two barriers per slice, the next slice prefetched into registers) with 16-byte
operand loads and 16-byte workgroup-memory stores: 6 loads and 6 stores per invocation per slice
instead of 12 eight-byte loads and 48 two-byte stores. Workgroup memory is typed vec4<u32> (8 halves);
fragments are loaded from it with strides in vec4 units (SPIR-V allows a cooperative load through a
pointer to another type; the stride counts that type's elements).{' Grouped tile order.' if grouped else ''}"""
    consts = """const BM: u32 = 128u;
const BN: u32 = 256u;
const BK: u32 = 32u;
// Row strides in vec4s: A rows of 32 + 8 halves, B rows of 256 + 8 (the pad against bank conflicts).
const SA: u32 = 5u;
const SB: u32 = 33u;
"""
    smem = """var<workgroup> As: array<vec4<u32>, 640>;
var<workgroup> Bs: array<vec4<u32>, 1056>;
var<workgroup> Cs: array<f32, 4096>;
"""
    s = head(doc, consts, smem, grouped) + entry(grouped)
    s += """    let ar = (sg / 4u) * 64u * SA;
    let bc = (sg % 4u) * 8u;
    // A slice 128x32 = 512 vec4s: item i -> row i / 4, halves 8 (i % 4); items t and t + 256.
    // B slice 32x256 = 1024 vec4s: item i -> k i / 32, halves 8 (i % 32); items t + 256 q.
    let ga = (job.a_off + (row0 + t / 4u - job.a_row_base) * p.lda + (t % 4u) * 8u) >> 3u;
    let ga1 = ga + 8u * p.lda;
    let gb = (job.b_off + (t / 32u) * p.ldb + col0 + (t % 32u) * 8u) >> 3u;
    let sa = (t / 4u) * SA + t % 4u;
    let sb = (t / 32u) * SB + t % 32u;
    var ra0 = a8[ga];
    var ra1 = a8[ga1];
    var rb0 = b8[gb];
    var rb1 = b8[gb + p.ldb];
    var rb2 = b8[gb + 2u * p.ldb];
    var rb3 = b8[gb + 3u * p.ldb];
"""
    s += accumulators("    ")
    s += """    var ka = 0u;
    var kb = 0u;
    for (var k0 = 0u; k0 < p.k; k0 += BK) {
        As[sa] = ra0;
        As[sa + 64u * SA] = ra1;
        Bs[sb] = rb0;
        Bs[sb + 8u * SB] = rb1;
        Bs[sb + 16u * SB] = rb2;
        Bs[sb + 24u * SB] = rb3;
        workgroupBarrier();
        ka += 4u;
        kb += 4u * p.ldb;
        if (k0 + BK < p.k) {
            ra0 = a8[ga + ka];
            ra1 = a8[ga1 + ka];
            rb0 = b8[gb + kb];
            rb1 = b8[gb + kb + p.ldb];
            rb2 = b8[gb + kb + 2u * p.ldb];
            rb3 = b8[gb + kb + 3u * p.ldb];
        }
"""
    for kk in range(2):
        s += step("        ", lambda i, kk=kk: f"ar + {16 * i}u * SA + {2 * kk}u", "SA",
                  lambda j, kk=kk: f"{16 * kk}u * SB + bc + {2 * j}u", "SB")
    s += """        workgroupBarrier();
    }
    let r0 = row0 + (sg / 4u) * 64u;
    let cl = col0 + (sg % 4u) * 64u;
"""
    s += emits("    ", "sg", "r0", "cl")
    s += "    tile_done(job.counter, t);\n}\n"
    return s


def db(distance, grouped):
    """128x256 tiles, 16-deep slices double-buffered (one barrier per slice), 16-byte traffic."""
    name = f"db{distance}{'-swz' if grouped else ''}"
    doc = f"""Variant {name}: 128x256 tiles, 8 subgroups of 64x64, 16-deep slices double-buffered in workgroup memory
(two stages, ONE barrier per slice: a slice is stored into the stage nobody reads while the other is
multiplied), 16-byte operand loads and workgroup stores (memory typed vec4<u32>), registers holding the
next {'two slices' if distance == 2 else 'slice'} (loads issued {distance} slice{'s' if distance == 2 else ''} ahead of their store{', so two slices of multiply-adds hide each load' if distance == 2 else ''}).
The loop is unrolled by two so that each half reads a fixed stage. 45 KiB of workgroup memory.{' Grouped tile order.' if grouped else ''}"""
    consts = """const BM: u32 = 128u;
const BN: u32 = 256u;
const BK: u32 = 16u;
// Row strides in vec4s: A rows of 16 + 8 halves, B rows of 256 + 8. A stage is 384 vec4s of A
// (128 rows) and 528 of B (16 rows).
const SA: u32 = 3u;
const SB: u32 = 33u;
"""
    smem = """var<workgroup> As: array<vec4<u32>, 768>;
var<workgroup> Bs: array<vec4<u32>, 1056>;
var<workgroup> Cs: array<f32, 4096>;
"""
    s = head(doc, consts, smem, grouped) + entry(grouped)
    s += """    let ar = (sg / 4u) * 64u * SA;
    let bc = (sg % 4u) * 8u;
    // A slice 128x16 = 256 vec4s: item t -> row t / 2, halves 8 (t % 2).
    // B slice 16x256 = 512 vec4s: items t, t + 256 -> k t / 32 (+ 8), halves 8 (t % 32).
    // Slice j starts 2j vec4s into A's rows and j * 2 * ldb vec4s into B.
    let ga = (job.a_off + (row0 + t / 2u - job.a_row_base) * p.lda + (t % 2u) * 8u) >> 3u;
    let gb = (job.b_off + (t / 32u) * p.ldb + col0 + (t % 32u) * 8u) >> 3u;
    let g8 = p.ldb;
    let kstep = 2u * p.ldb;
    let sa = (t / 2u) * SA + t % 2u;
    let sb = (t / 32u) * SB + t % 32u;
    let sb8 = 8u * SB;
"""
    s += accumulators("    ")

    def store(ind, regs, stage):
        r = regs
        return (f"{ind}As[sa + {stage * 384}u] = {r}a;\n"
                f"{ind}Bs[sb + {stage * 528}u] = {r}b0;\n"
                f"{ind}Bs[sb + sb8 + {stage * 528}u] = {r}b1;\n")

    def load(ind, regs, slice_expr_a, slice_expr_b):
        r = regs
        return (f"{ind}{r}a = a8[ga + {slice_expr_a}];\n"
                f"{ind}{r}b0 = b8[gb + {slice_expr_b}];\n"
                f"{ind}{r}b1 = b8[gb + {slice_expr_b} + g8];\n")

    def compute(ind, stage):
        return step(ind, lambda i: f"{stage * 384}u + ar + {16 * i}u * SA", "SA",
                    lambda j: f"{stage * 528}u + bc + {2 * j}u", "SB")

    # Slice 0 goes straight to stage 0; slice 1 is always inside the buffers (K is padded to 32).
    s += """    // Slice 0 straight into stage 0; slices 0 and 1 are always inside the buffers (K is padded to
    // whole 32-deep slices), later ones only while k < K.
    As[sa] = a8[ga];
    Bs[sb] = b8[gb];
    Bs[sb + sb8] = b8[gb + g8];
"""
    # Pair m of slices (2m, 2m + 1) runs iff 32m < K; both are inside the buffers then (K is padded
    # to 32 with zeros), so the odd half needs no test and the barriers stay in uniform control flow
    # (naga rejects cooperative operations under a branch on a loop variable).
    if distance == 1:
        s += """    var ra = a8[ga + 2u];
    var rb0 = b8[gb + kstep];
    var rb1 = b8[gb + kstep + g8];
    workgroupBarrier();
    var ka = 0u;
    var kb = 0u;
    for (var k0 = 0u; k0 < p.k; k0 += 2u * BK) {
"""
        s += compute("        ", 0)
        s += store("        ", "r", 1)
        s += "        if (k0 + 2u * BK < p.k) {\n"
        s += load("            ", "r", "ka + 4u", "kb + 2u * kstep")
        s += "        }\n        workgroupBarrier();\n"
        s += compute("        ", 1)
        s += "        if (k0 + 2u * BK < p.k) {\n"
        s += store("            ", "r", 0)
        s += load("            ", "r", "ka + 6u", "kb + 3u * kstep")
        s += "        }\n        workgroupBarrier();\n"
        s += "        ka += 4u;\n        kb += 2u * kstep;\n    }\n"
    else:
        s += """    var qa = a8[ga + 2u];
    var qb0 = b8[gb + kstep];
    var qb1 = b8[gb + kstep + g8];
    var ra = vec4<u32>();
    var rb0 = vec4<u32>();
    var rb1 = vec4<u32>();
    if (2u * BK < p.k) {
        ra = a8[ga + 4u];
        rb0 = b8[gb + 2u * kstep];
        rb1 = b8[gb + 2u * kstep + g8];
    }
    workgroupBarrier();
    // Registers q hold the odd slice after the current pair, r the even one.
    var ka = 0u;
    var kb = 0u;
    for (var k0 = 0u; k0 < p.k; k0 += 2u * BK) {
"""
        s += compute("        ", 0)
        s += store("        ", "q", 1)
        s += "        if (k0 + 2u * BK < p.k) {\n"
        s += load("            ", "q", "ka + 6u", "kb + 3u * kstep")
        s += "        }\n        workgroupBarrier();\n"
        s += compute("        ", 1)
        s += "        if (k0 + 2u * BK < p.k) {\n"
        s += store("            ", "r", 0)
        s += "            if (k0 + 4u * BK < p.k) {\n"
        s += load("                ", "r", "ka + 8u", "kb + 4u * kstep")
        s += "            }\n        }\n        workgroupBarrier();\n"
        s += "        ka += 4u;\n        kb += 2u * kstep;\n    }\n"
    s += """    let r0 = row0 + (sg / 4u) * 64u;
    let cl = col0 + (sg % 4u) * 64u;
"""
    s += emits("    ", "sg", "r0", "cl")
    s += "    tile_done(job.counter, t);\n}\n"
    return name, s


def half():
    """128 invocations, the 128x256 tile as two 128x128 halves one after the other."""
    doc = """Variant half: 128 invocations (4 subgroups of 64x64) per workgroup, computing the host's 128x256 tile
as two 128x128 halves one after the other; 32-deep slices double-buffered (one barrier per slice),
the next slice prefetched into registers, 16-byte loads and stores. 45 KiB of workgroup memory and
about the same registers per invocation as the committed kernel, but half the invocations, so two
workgroups fit on an SM: one's barriers and epilogue no longer idle the whole SM."""
    consts = """const BM: u32 = 128u;
const BN: u32 = 256u;
const BK: u32 = 32u;
// Row strides in vec4s: A rows of 32 + 8 halves, B rows of 128 + 8. A stage is 640 vec4s of A
// (128 rows) and 544 of B (32 rows).
const SA: u32 = 5u;
const SB: u32 = 17u;
"""
    smem = """var<workgroup> As: array<vec4<u32>, 1280>;
var<workgroup> Bs: array<vec4<u32>, 1088>;
var<workgroup> Cs: array<f32, 2048>;
"""
    s = head(doc, consts, smem, False) + entry(False, 128)
    s += """    let ar = (sg / 2u) * 64u * SA;
    let bc = (sg % 2u) * 8u;
    // A slice 128x32 = 512 vec4s: items t + 128 q -> row t / 4 + 32 q, halves 8 (t % 4).
    // B slice 32x128 = 512 vec4s: items t + 128 q -> k t / 16 + 8 q, halves 8 (t % 16).
    // Slice j starts 4j vec4s into A's rows and j * 4 * ldb vec4s into B.
    let ga = (job.a_off + (row0 + t / 4u - job.a_row_base) * p.lda + (t % 4u) * 8u) >> 3u;
    let g32 = 4u * p.lda;
    let kstep = 4u * p.ldb;
    let sa = (t / 4u) * SA + t % 4u;
    let sb = (t / 16u) * SB + t % 16u;
    for (var h = 0u; h < 2u; h += 1u) {
        let colh = col0 + h * 128u;
        let gb = (job.b_off + (t / 16u) * p.ldb + colh + (t % 16u) * 8u) >> 3u;
"""
    s += accumulators("        ")

    def store(ind, stage):
        o = ""
        for q in range(4):
            o += f"{ind}As[sa + {q * 32}u * SA + {stage * 640}u] = ra{q};\n"
        for q in range(4):
            o += f"{ind}Bs[sb + {q * 8}u * SB + {stage * 544}u] = rb{q};\n"
        return o

    def load(ind, ka, kb, decl=False):
        v = "var " if decl else ""
        o = ""
        for q in range(4):
            o += f"{ind}{v}ra{q} = a8[ga + {q}u * g32 + {ka}];\n"
        for q in range(4):
            o += f"{ind}{v}rb{q} = b8[gb + {q}u * p.ldb + {kb}];\n"
        return o

    def zero(ind):
        return "".join(f"{ind}r{x}{q} = vec4<u32>();\n" for x in "ab" for q in range(4))

    def compute(ind, stage):
        o = ""
        for kk in range(2):
            o += step(ind, lambda i, kk=kk: f"{stage * 640}u + ar + {16 * i}u * SA + {2 * kk}u", "SA",
                      lambda j, kk=kk: f"{stage * 544}u + {16 * kk}u * SB + bc + {2 * j}u", "SB")
        return o

    # Pair m of 32-deep slices runs iff 64m < K. K is padded to 32 only, so the odd slice of the last
    # pair may lie past the buffers: its registers are zeroed instead of loaded, and the odd half
    # multiplies zeros (no branch around cooperative operations or barriers: naga requires them in
    # uniform control flow).
    s += "        // Slice 0 into stage 0 (always inside the buffers); slice 1 only where K > 32.\n"
    s += load("        ", "0u", "0u", decl=True)
    s += store("        ", 0)
    s += "        if (BK < p.k) {\n"
    s += load("            ", "4u", "kstep")
    s += "        } else {\n" + zero("            ") + "        }\n        workgroupBarrier();\n"
    s += "        var ka = 0u;\n        var kb = 0u;\n"
    s += "        for (var k0 = 0u; k0 < p.k; k0 += 2u * BK) {\n"
    s += compute("            ", 0)
    s += store("            ", 1)
    s += "            if (k0 + 2u * BK < p.k) {\n"
    s += load("                ", "ka + 8u", "kb + 2u * kstep")
    s += "            }\n            workgroupBarrier();\n"
    s += compute("            ", 1)
    s += "            if (k0 + 2u * BK < p.k) {\n"
    s += store("                ", 0)
    s += "                if (k0 + 3u * BK < p.k) {\n"
    s += load("                    ", "ka + 12u", "kb + 3u * kstep")
    s += "                } else {\n" + zero("                    ") + "                }\n"
    s += "            }\n            workgroupBarrier();\n"
    s += "            ka += 8u;\n            kb += 2u * kstep;\n        }\n"
    s += """        let r0 = row0 + (sg / 2u) * 64u;
        let cl = colh + (sg % 2u) * 64u;
"""
    s += emits("        ", "sg", "r0", "cl")
    s += "    }\n    tile_done(job.counter, t);\n}\n"
    return s


def half16():
    """128 invocations, two 128x128 halves, 16-deep slices double-buffered, loads two slices ahead."""
    doc = """Variant half16: the occupancy of `half` with the schedule of `db2`: 128 invocations (4 subgroups of
64x64) computing the host's 128x256 tile as two 128x128 halves one after the other, 16-deep slices
double-buffered (one barrier per slice), registers holding the next two slices, 16-byte loads and
stores. 28.5 KiB of workgroup memory, so workgroup memory allows three per SM and registers two."""
    consts = """const BM: u32 = 128u;
const BN: u32 = 256u;
const BK: u32 = 16u;
// Row strides in vec4s: A rows of 16 + 8 halves, B rows of 128 + 8. A stage is 384 vec4s of A
// (128 rows) and 272 of B (16 rows).
const SA: u32 = 3u;
const SB: u32 = 17u;
"""
    smem = """var<workgroup> As: array<vec4<u32>, 768>;
var<workgroup> Bs: array<vec4<u32>, 544>;
var<workgroup> Cs: array<f32, 2048>;
"""
    s = head(doc, consts, smem, False) + entry(False, 128)
    s += """    let ar = (sg / 2u) * 64u * SA;
    let bc = (sg % 2u) * 8u;
    // A slice 128x16 = 256 vec4s: items t + 128 q -> row t / 2 + 64 q, halves 8 (t % 2).
    // B slice 16x128 = 256 vec4s: items t + 128 q -> k t / 16 + 8 q, halves 8 (t % 16).
    // Slice j starts 2j vec4s into A's rows and j * 2 * ldb vec4s into B.
    let ga = (job.a_off + (row0 + t / 2u - job.a_row_base) * p.lda + (t % 2u) * 8u) >> 3u;
    let g64 = 8u * p.lda;
    let kstep = 2u * p.ldb;
    let sa = (t / 2u) * SA + t % 2u;
    let sb = (t / 16u) * SB + t % 16u;
    for (var h = 0u; h < 2u; h += 1u) {
        let colh = col0 + h * 128u;
        let gb = (job.b_off + (t / 16u) * p.ldb + colh + (t % 16u) * 8u) >> 3u;
"""
    s += accumulators("        ")

    def store(ind, r, stage):
        return (f"{ind}As[sa + {stage * 384}u] = {r}a0;\n"
                f"{ind}As[sa + 192u + {stage * 384}u] = {r}a1;\n"
                f"{ind}Bs[sb + {stage * 272}u] = {r}b0;\n"
                f"{ind}Bs[sb + 136u + {stage * 272}u] = {r}b1;\n")

    def load(ind, r, ka, kb, decl=False):
        v = "var " if decl else ""
        return (f"{ind}{v}{r}a0 = a8[ga + {ka}];\n"
                f"{ind}{v}{r}a1 = a8[ga + g64 + {ka}];\n"
                f"{ind}{v}{r}b0 = b8[gb + {kb}];\n"
                f"{ind}{v}{r}b1 = b8[gb + p.ldb + {kb}];\n")

    def compute(ind, stage):
        return step(ind, lambda i: f"{stage * 384}u + ar + {16 * i}u * SA", "SA",
                    lambda j: f"{stage * 272}u + bc + {2 * j}u", "SB")

    # As db2: pair m of 16-deep slices runs iff 32m < K, and both lie inside the buffers then.
    s += "        // Slice 0 into stage 0; slice 1 (always inside the buffers) and slice 2 (where K > 32) ahead.\n"
    s += load("        ", "q", "0u", "0u", decl=True)
    s += store("        ", "q", 0)
    s += load("        ", "q", "2u", "kstep")
    s += "        var ra0 = vec4<u32>();\n        var ra1 = vec4<u32>();\n        var rb0 = vec4<u32>();\n        var rb1 = vec4<u32>();\n"
    s += "        if (2u * BK < p.k) {\n" + load("            ", "r", "4u", "2u * kstep") + "        }\n"
    s += "        workgroupBarrier();\n        var ka = 0u;\n        var kb = 0u;\n"
    s += "        for (var k0 = 0u; k0 < p.k; k0 += 2u * BK) {\n"
    s += compute("            ", 0)
    s += store("            ", "q", 1)
    s += "            if (k0 + 2u * BK < p.k) {\n"
    s += load("                ", "q", "ka + 6u", "kb + 3u * kstep")
    s += "            }\n            workgroupBarrier();\n"
    s += compute("            ", 1)
    s += "            if (k0 + 2u * BK < p.k) {\n"
    s += store("                ", "r", 0)
    s += "                if (k0 + 4u * BK < p.k) {\n"
    s += load("                    ", "r", "ka + 8u", "kb + 4u * kstep")
    s += "                }\n            }\n            workgroupBarrier();\n"
    s += "            ka += 4u;\n            kb += 2u * kstep;\n        }\n"
    s += """        let r0 = row0 + (sg / 2u) * 64u;
        let cl = colh + (sg % 2u) * 64u;
"""
    s += emits("        ", "sg", "r0", "cl")
    s += "    }\n    tile_done(job.counter, t);\n}\n"
    return s


# How a variant moves operands: the workgroup arrays' element, halves per element, and the load of
# element `i` (in those units) of A or B.
IO = {
    # 16 bytes through second variables on the operand bindings (the first device call: NVVM failed).
    "alias": ("vec4<u32>", 8, lambda m, i: f"{m}8[{i}]"),
    # (16 bytes from the operand bindings as they are would need bitcast<vec2<u32>>(vec4<f16>), which
    # naga 30 types as vec4<u32> and then rejects.)
    # 8 bytes, workgroup memory typed vec4<f16> (fragments loaded through vec4<f16> pointers).
    "h4": ("vec4<f16>", 4, lambda m, i: f"{m}[{i}]"),
}


def db2x(name, io, grouped, doc):
    """db2's schedule (16-deep slices, two stages, one barrier per slice, loads two slices ahead) with
    the operand movement `io` (a key of IO)."""
    elem, u, ld = IO[io]
    sa_, sb_ = 24 // u, 264 // u            # row strides in elements: 16 + 8 and 256 + 8 halves
    st_a, st_b = 128 * sa_, 16 * sb_        # stage sizes in elements
    na, nb = 128 * 16 // u // 256, 16 * 256 // u // 256   # elements per invocation per slice
    per_a, per_b = 16 // u, 256 // u        # elements per row of a slice
    consts = f"""const BM: u32 = 128u;
const BN: u32 = 256u;
const BK: u32 = 16u;
// Row strides in {elem}s ({u} halves): A rows of 16 + 8 halves, B rows of 256 + 8. A stage is
// {st_a} of them (128 rows of A), a B stage {st_b} (16 rows).
const SA: u32 = {sa_}u;
const SB: u32 = {sb_}u;
"""
    smem = f"""var<workgroup> As: array<{elem}, {2 * st_a}>;
var<workgroup> Bs: array<{elem}, {2 * st_b}>;
var<workgroup> Cs: array<f32, 4096>;
"""
    out = head(doc, consts, smem, grouped)
    if io != "alias":
        out = out.replace(VIEWS + "\n", "")
    out += entry(grouped)
    ra, rb = 256 // per_a, 256 // per_b     # rows one pass of the workgroup covers
    out += f"""    let ar = (sg / 4u) * 64u * SA;
    let bc = (sg % 4u) * {64 // u}u;
    // A slice 128x16: items t + 256 q -> row t / {per_a} + {ra} q, halves {u} (t % {per_a}).
    // B slice 16x256: items t + 256 q -> k t / {per_b} + {rb} q, halves {u} (t % {per_b}).
    // Slice j starts {16 // u}j elements into A's rows and j * kstep into B.
    let ga = (job.a_off + (row0 + t / {per_a}u - job.a_row_base) * p.lda + (t % {per_a}u) * {u}u) >> {u.bit_length() - 1}u;
    let gb = (job.b_off + (t / {per_b}u) * p.ldb + col0 + (t % {per_b}u) * {u}u) >> {u.bit_length() - 1}u;
    let kstep = {16 // u}u * p.ldb;
    let sa = (t / {per_a}u) * SA + t % {per_a}u;
    let sb = (t / {per_b}u) * SB + t % {per_b}u;
"""
    out += accumulators("    ")
    ga_q = lambda q: f"ga + {q * ra // u}u * p.lda" if q else "ga"   # ra rows of lda halves, in elements
    gb_q = lambda q: f"gb + {q}u * p.ldb" if q else "gb"                     # rb = u rows: u * ldb / u

    def load(ind, r, ka, kb, decl=False):
        v = "var " if decl else ""
        o = "".join(f"{ind}{v}{r}a{q} = {ld('a', ga_q(q) + ' + ' + ka)};\n" for q in range(na))
        return o + "".join(f"{ind}{v}{r}b{q} = {ld('b', gb_q(q) + ' + ' + kb)};\n" for q in range(nb))

    def store(ind, r, stage):
        o = "".join(f"{ind}As[sa + {q * ra * sa_ + stage * st_a}u] = {r}a{q};\n" for q in range(na))
        return o + "".join(f"{ind}Bs[sb + {q * rb * sb_ + stage * st_b}u] = {r}b{q};\n" for q in range(nb))

    def compute(ind, stage):
        return step(ind, lambda i: f"{stage * st_a}u + ar + {16 * i}u * SA", "SA",
                    lambda j: f"{stage * st_b}u + bc + {j * 16 // u}u", "SB")

    zero = f"{elem}()"
    out += "    // Slice 0 into stage 0; slice 1 (inside the buffers: K is padded to 32) and slice 2 (where\n"
    out += "    // K > 32) into registers. Pair m of slices runs iff 32m < K (see db2).\n"
    out += load("    ", "q", "0u", "0u", decl=True) + store("    ", "q", 0)
    out += load("    ", "q", f"{16 // u}u", "kstep")
    out += "".join(f"    var ra{q} = {zero};\n" for q in range(na))
    out += "".join(f"    var rb{q} = {zero};\n" for q in range(nb))
    out += "    if (2u * BK < p.k) {\n" + load("        ", "r", f"{32 // u}u", "2u * kstep") + "    }\n"
    out += "    workgroupBarrier();\n    var ka = 0u;\n    var kb = 0u;\n"
    out += "    for (var k0 = 0u; k0 < p.k; k0 += 2u * BK) {\n"
    out += compute("        ", 0) + store("        ", "q", 1)
    out += "        if (k0 + 2u * BK < p.k) {\n"
    out += load("            ", "q", f"ka + {48 // u}u", "kb + 3u * kstep")
    out += "        }\n        workgroupBarrier();\n"
    out += compute("        ", 1)
    out += "        if (k0 + 2u * BK < p.k) {\n" + store("            ", "r", 0)
    out += "            if (k0 + 4u * BK < p.k) {\n"
    out += load("                ", "r", f"ka + {64 // u}u", "kb + 4u * kstep")
    out += "            }\n        }\n        workgroupBarrier();\n"
    out += f"        ka += {32 // u}u;\n        kb += 2u * kstep;\n    }}\n"
    out += """    let r0 = row0 + (sg / 4u) * 64u;
    let cl = col0 + (sg % 4u) * 64u;
"""
    out += emits("    ", "sg", "r0", "cl")
    return out + "    tile_done(job.counter, t);\n}\n"


def h4():
    """The committed kernel with workgroup memory typed vec4<f16>: 8-byte stores, fragments loaded
    through vec4<f16> pointers."""
    src = base()
    doc = ("// Variant h4: shaders/gemm_coop.wgsl as committed with workgroup memory typed vec4<f16>:\n"
           "// each prefetched vec4 goes out as one 8-byte store instead of four 2-byte ones, and fragments\n"
           "// are loaded through vec4<f16> pointers with strides in vec4s (one change, to bisect the NVVM failure).\n")
    rep = [
        ("var<workgroup> As: array<f16, 5120>;", "var<workgroup> As: array<vec4<f16>, 1280>;"),
        ("var<workgroup> Bs: array<f16, 8448>;", "var<workgroup> Bs: array<vec4<f16>, 2112>;"),
        ("""    let o = (i / 8u) * SA + (i % 8u) * 4u;
    As[o] = v.x;
    As[o + 1u] = v.y;
    As[o + 2u] = v.z;
    As[o + 3u] = v.w;""", "    As[(i / 8u) * (SA / 4u) + i % 8u] = v;"),
        ("""    let o = (i / 64u) * SB + (i % 64u) * 4u;
    Bs[o] = v.x;
    Bs[o + 1u] = v.y;
    Bs[o + 2u] = v.z;
    Bs[o + 3u] = v.w;""", "    Bs[(i / 64u) * (SB / 4u) + i % 64u] = v;"),
    ]
    for a, b in rep:
        assert a in src, a
        src = src.replace(a, b)
    # Fragment places and strides in vec4s: every offset is a multiple of 4 halves.
    import re
    src = re.sub(r"coopLoadT<coop_mat16x16<f16, (A|B)>>\(&(As|Bs)\[([^\]]*)\], (SA|SB)\)",
                 lambda m: f"coopLoadT<coop_mat16x16<f16, {m[1]}>>(&{m[2]}[({m[3]}) / 4u], {m[4]} / 4u)", src)
    assert src.count("/ 4u], S") == 16
    return doc + src


def alias():
    """The committed kernel reading A and B through second variables of the same type on the same
    bindings: whether aliasing alone trips NVVM."""
    src = base()
    doc = ("// Variant alias: shaders/gemm_coop.wgsl as committed reading A and B through second\n"
           "// variables on bindings 2 and 3, of the same type (one change, to bisect the NVVM failure).\n")
    views = ("@group(0) @binding(2) var<storage, read> a_view: array<vec4<f16>>;\n"
             "@group(0) @binding(3) var<storage, read> b_view: array<vec4<f16>>;\n\n")
    src = src.replace("    return a[(job.a_off", "    return a_view[(job.a_off").replace("    return b[(job.b_off", "    return b_view[(job.b_off")
    assert "a_view[" in src and "b_view[" in src
    i = src.index("const BM")
    return doc + src[:i] + views + src[i:]


def wide():
    """The committed kernel with 16-byte operand loads: A and B read through second variables typed
    mat2x4<f16> (16 bytes, no bitcast: naga 30 rejects vec2<u32> -> vec4<f16>), each load's two
    columns stored as two 8-byte vec4<f16> stores. Half the global load instructions per slice."""
    src = base()
    doc = ("// Variant wide: shaders/gemm_coop.wgsl as committed with 16-byte operand loads: A and B read\n"
           "// through second variables on bindings 2 and 3 typed mat2x4<f16> (8 halves, 16 bytes; rows start\n"
           "// at multiples of 32 halves, src/gemm.rs `Padding`), each load's two columns stored as two\n"
           "// 8-byte vec4<f16> stores: 6 global loads per invocation and slice instead of 12.\n")
    views = ("@group(0) @binding(2) var<storage, read> a16: array<mat2x4<f16>>;\n"
             "@group(0) @binding(3) var<storage, read> b16: array<mat2x4<f16>>;\n\n")
    i = src.index("const BM")
    src = src[:i] + views + src[i:]
    helpers = """// Eight A elements (row, k..k+7) and eight B elements (k, col..col+7), unguarded as fetch_a/fetch_b.
fn fetch_a8(row: u32, k: u32, job: Job) -> mat2x4<f16> {
    return a16[(job.a_off + (row - job.a_row_base) * p.lda + k) >> 3u];
}

fn fetch_b8(k: u32, col: u32, job: Job) -> mat2x4<f16> {
    return b16[(job.b_off + k * p.ldb + col) >> 3u];
}

// A slice 128x32: load i -> row i / 4, k 8 (i % 4). B slice 32x256: load i -> k i / 32, col 8 (i % 32).
fn put_a8(i: u32, m: mat2x4<f16>) {
    let o = (i / 4u) * (SA / 4u) + (i % 4u) * 2u;
    As[o] = m[0];
    As[o + 1u] = m[1];
}

fn put_b8(i: u32, m: mat2x4<f16>) {
    let o = (i / 32u) * (SB / 4u) + (i % 32u) * 2u;
    Bs[o] = m[0];
    Bs[o + 1u] = m[1];
}

"""
    j = src.index("// Writes fragment")
    src = src[:j] + helpers + src[j:]
    def loads(kn):
        k = f"{kn} + " if kn else ""
        out = [f"ra{q} = fetch_a8(row0 + (t + {256 * q}u) / 4u, {k}((t + {256 * q}u) % 4u) * 8u, job);" for q in range(2)]
        out += [f"rb{q} = fetch_b8({k}(t + {256 * q}u) / 32u, col0 + ((t + {256 * q}u) % 32u) * 8u, job);" for q in range(4)]
        return out
    # Declarations.
    old_decl = re.search(r"    var ra0 = fetch_a.*?\n(    var rb7 = [^\n]*\n)", src, re.S)
    assert old_decl
    src = src.replace(old_decl.group(0), "".join(f"    var {l}\n" for l in loads(None)))
    # Stores at the top of the K loop.
    old_put = re.search(r"        put_a\(t \+ 0u, ra0\);.*?put_b\(t \+ 1792u, rb7\);\n", src, re.S)
    assert old_put
    new_put = "".join(f"        put_a8(t + {256 * q}u, ra{q});\n" for q in range(2))
    new_put += "".join(f"        put_b8(t + {256 * q}u, rb{q});\n" for q in range(4))
    src = src.replace(old_put.group(0), new_put)
    # The prefetch.
    old_pre = re.search(r"            ra0 = fetch_a\(row0.*?rb7 = fetch_b\([^\n]*\n", src, re.S)
    assert old_pre
    src = src.replace(old_pre.group(0), "".join(f"            {l}\n" for l in loads("kn")))
    assert "fetch_a(" not in src.split("fn compute_tile")[1] and "put_b(" not in src.split("fn compute_tile")[1]
    return doc + src


def wide2():
    """wide with workgroup memory typed mat2x4<f16> as well: each 16-byte load goes out as one 16-byte
    store (run 7's vec4<u32> workgroup memory made NVVM fail; this keeps the f16 element type), and
    fragments load through a pointer to the first column of a matrix, strides in vec4s."""
    src = wide().split("\n", 4)[4]
    doc = ("// Variant wide2: wide (16-byte operand loads through mat2x4<f16> views) with workgroup memory\n"
           "// typed mat2x4<f16> too: one 16-byte store per load, fragments loaded through a pointer to a\n"
           "// matrix's first column (every fragment starts at an even vec4), strides in vec4s.\n")
    rep = [
        ("var<workgroup> As: array<vec4<f16>, 1280>;", "var<workgroup> As: array<mat2x4<f16>, 640>;"),
        ("var<workgroup> Bs: array<vec4<f16>, 2112>;", "var<workgroup> Bs: array<mat2x4<f16>, 1056>;"),
        ("""    let o = (i / 4u) * (SA / 4u) + (i % 4u) * 2u;
    As[o] = m[0];
    As[o + 1u] = m[1];""", "    As[(i / 4u) * (SA / 8u) + i % 4u] = m;"),
        ("""    let o = (i / 32u) * (SB / 4u) + (i % 32u) * 2u;
    Bs[o] = m[0];
    Bs[o + 1u] = m[1];""", "    Bs[(i / 32u) * (SB / 8u) + i % 32u] = m;"),
    ]
    for a, b in rep:
        assert a in src, a
        src = src.replace(a, b)
    # The 8-byte stores wide no longer calls would not type-check against mat2x4 workgroup memory.
    src, k = re.subn(r"// A slice 128x32: vec4 i.*?\nfn put_b\(i: u32, v: vec4<f16>\) \{\n[^\n]*\n\}\n\n", "", src, flags=re.S)
    assert k == 1
    n = len(re.findall(r"coopLoadT<coop_mat16x16<f16, (A|B)>>\(&(As|Bs)\[\(", src))
    src = re.sub(r"coopLoadT<coop_mat16x16<f16, (A|B)>>\(&(As|Bs)\[\(([^\]]*)\) / 4u\], (SA|SB) / 4u\)",
                 lambda m: f"coopLoadT<coop_mat16x16<f16, {m[1]}>>(&{m[2]}[({m[3]}) / 8u][0], {m[4]} / 4u)", src)
    assert n == 16 and src.count("/ 8u][0], S") == 16, (n, src.count("/ 8u][0], S"))
    return doc + src


def half16x(name, io, doc):
    """half16's shape and schedule (128 invocations, two 128x128 halves, 16-deep slices double-buffered,
    loads two slices ahead) with the operand movement `io` (a key of IO)."""
    elem, u, ld = IO[io]
    sa_, sb_ = 24 // u, 136 // u            # row strides in elements: 16 + 8 and 128 + 8 halves
    st_a, st_b = 128 * sa_, 16 * sb_
    per_a, per_b = 16 // u, 128 // u        # elements per row of a slice
    na, nb = 128 * per_a // 128, 16 * per_b // 128
    ra, rb = 128 // per_a, 128 // per_b     # rows one pass of the workgroup covers
    consts = f"""const BM: u32 = 128u;
const BN: u32 = 256u;
const BK: u32 = 16u;
// Row strides in {elem}s ({u} halves): A rows of 16 + 8 halves, B rows of 128 + 8. A stage is
// {st_a} of them (128 rows of A), a B stage {st_b} (16 rows).
const SA: u32 = {sa_}u;
const SB: u32 = {sb_}u;
"""
    smem = f"""var<workgroup> As: array<{elem}, {2 * st_a}>;
var<workgroup> Bs: array<{elem}, {2 * st_b}>;
var<workgroup> Cs: array<f32, 2048>;
"""
    out = head(doc, consts, smem, True)
    if io != "alias":
        out = out.replace(VIEWS + "\n", "")
    out += entry(True, 128)
    sh = u.bit_length() - 1
    out += f"""    let ar = (sg / 2u) * 64u * SA;
    let bc = (sg % 2u) * {64 // u}u;
    // A slice 128x16: items t + 128 q -> row t / {per_a} + {ra} q, halves {u} (t % {per_a}).
    // B slice 16x128: items t + 128 q -> k t / {per_b} + {rb} q, halves {u} (t % {per_b}).
    // Slice j starts {16 // u}j elements into A's rows and j * kstep into B.
    let ga = (job.a_off + (row0 + t / {per_a}u - job.a_row_base) * p.lda + (t % {per_a}u) * {u}u) >> {sh}u;
    let kstep = {16 // u}u * p.ldb;
    let sa = (t / {per_a}u) * SA + t % {per_a}u;
    let sb = (t / {per_b}u) * SB + t % {per_b}u;
    for (var h = 0u; h < 2u; h += 1u) {{
        let colh = col0 + h * 128u;
        let gb = (job.b_off + (t / {per_b}u) * p.ldb + colh + (t % {per_b}u) * {u}u) >> {sh}u;
"""
    out += accumulators("        ")
    ga_q = lambda q: f"ga + {q * ra // u}u * p.lda" if q else "ga"
    gb_q = lambda q: f"gb + {q * rb // u}u * p.ldb" if q else "gb"

    def load(ind, r, ka, kb, decl=False):
        v = "var " if decl else ""
        o = "".join(f"{ind}{v}{r}a{q} = {ld('a', ga_q(q) + ' + ' + ka)};\n" for q in range(na))
        return o + "".join(f"{ind}{v}{r}b{q} = {ld('b', gb_q(q) + ' + ' + kb)};\n" for q in range(nb))

    def store(ind, r, stage):
        o = "".join(f"{ind}As[sa + {q * ra * sa_ + stage * st_a}u] = {r}a{q};\n" for q in range(na))
        return o + "".join(f"{ind}Bs[sb + {q * rb * sb_ + stage * st_b}u] = {r}b{q};\n" for q in range(nb))

    def compute(ind, stage):
        return step(ind, lambda i: f"{stage * st_a}u + ar + {16 * i}u * SA", "SA",
                    lambda j: f"{stage * st_b}u + bc + {j * 16 // u}u", "SB")

    zero = f"{elem}()"
    i2 = "        "
    out += f"{i2}// Slice 0 into stage 0; slices 1 and 2 (where K > 32) into registers, as in db2.\n"
    out += load(i2, "q", "0u", "0u", decl=True) + store(i2, "q", 0)
    out += load(i2, "q", f"{16 // u}u", "kstep")
    out += "".join(f"{i2}var ra{q} = {zero};\n" for q in range(na))
    out += "".join(f"{i2}var rb{q} = {zero};\n" for q in range(nb))
    out += f"{i2}if (2u * BK < p.k) {{\n" + load(i2 + "    ", "r", f"{32 // u}u", "2u * kstep") + f"{i2}}}\n"
    out += f"{i2}workgroupBarrier();\n{i2}var ka = 0u;\n{i2}var kb = 0u;\n"
    out += f"{i2}for (var k0 = 0u; k0 < p.k; k0 += 2u * BK) {{\n"
    i3, i4, i5 = i2 + "    ", i2 + "        ", i2 + "            "
    out += compute(i3, 0) + store(i3, "q", 1)
    out += f"{i3}if (k0 + 2u * BK < p.k) {{\n" + load(i4, "q", f"ka + {48 // u}u", "kb + 3u * kstep")
    out += f"{i3}}}\n{i3}workgroupBarrier();\n"
    out += compute(i3, 1)
    out += f"{i3}if (k0 + 2u * BK < p.k) {{\n" + store(i4, "r", 0)
    out += f"{i4}if (k0 + 4u * BK < p.k) {{\n" + load(i5, "r", f"ka + {64 // u}u", "kb + 4u * kstep")
    out += f"{i4}}}\n{i3}}}\n{i3}workgroupBarrier();\n"
    out += f"{i3}ka += {32 // u}u;\n{i3}kb += 2u * kstep;\n{i2}}}\n"
    out += f"""{i2}let r0 = row0 + (sg / 2u) * 64u;
{i2}let cl = colh + (sg % 2u) * 64u;
"""
    out += emits(i2, "sg", "r0", "cl")
    return out + "    }\n    tile_done(job.counter, t);\n}\n"


# noepi, nobarrier, noglobal and rows4 are written from the kernel of 0289099, before the pair
# epilogue (shaders/gemm_coop.wgsl's since 229ccd1, first written here as a variant):
# `git show 0289099:shaders/gemm_coop.wgsl > base.wgsl; GEN_BASE=base.wgsl python3 gen.py NAME`.
EPILOGUE = """    let r0 = row0 + (sg / 4u) * 64u;
    let cl = col0 + bc;
"""


def committed_epilogue(doc, body):
    """The base kernel with its epilogue (the 16 `emit`s after the K loop) replaced by `body`."""
    src = base()
    i = src.index(EPILOGUE)
    j = src.index("    tile_done(job.counter, t);")
    return comment(doc) + src[:i] + EPILOGUE + body + src[j:]


def noepi():
    """The epilogue behind a condition that never holds: the tile's fixed cost without its stores."""
    body = "    if (p._pad1 == 0xfffffffeu) {\n" + emits("        ", "sg", "r0", "cl") + "    }\n"
    return committed_epilogue("""Variant noepi: shaders/gemm_coop.wgsl with its epilogue behind a condition that never holds
(`p._pad1` is 0), so C is left unwritten (time it with bench-gemm's --no-verify). Measures what the 16
fragments' scratch, barriers and stores cost a tile, against the K sweep of the committed kernel.""", body)


def nobarrier():
    """The scratch epilogue without its barriers: what the 16 barriers cost (results wrong)."""
    src = base()
    a = "    coopStoreT(c, &Cs[s], 16u);\n    workgroupBarrier();\n"
    assert a in src
    src = src.replace(a, "    coopStoreT(c, &Cs[s], 16u);\n")
    return ("// Variant nobarrier: shaders/gemm_coop.wgsl with the epilogue's barrier between a fragment's\n"
            "// scratch store and its reads removed, so lanes read scratch other lanes may not have written:\n"
            "// C is wrong (time it with bench-gemm's --no-verify). Measures what the 16 barriers cost a tile.\n" + src)


def noglobal():
    """The scratch epilogue without its global stores: what writing C costs (C unwritten)."""
    body = ""
    for n, (i, j) in enumerate((i, j) for i in range(4) for j in range(4)):
        body += f"    scratch_only(c{i}{j}, sg, {n % 2}u, lane);\n"
    src = committed_epilogue("""Variant noglobal: shaders/gemm_coop.wgsl with each fragment stored to the scratch, a barrier,
and read back as in `emit`, but its rows written to C only under a condition that never holds
(`p._pad1` is 0): C is left unwritten (time it with bench-gemm's --no-verify). Measures what writing C
costs a tile, against noepi and the committed kernel.""", body)
    fn = """// `emit` without the global stores (they happen only if `p._pad1` is 0xfffffffe, never).
fn scratch_only(c: coop_mat16x16<f32, C>, sg: u32, half: u32, lane: u32) {
    let s = (2u * sg + half) * 256u;
    coopStoreT(c, &Cs[s], 16u);
    workgroupBarrier();
    let o = s + (lane / 2u) * 16u + (lane % 2u) * 8u;
    let v = vec4<f32>(Cs[o], Cs[o + 1u], Cs[o + 2u], Cs[o + 3u]) + vec4<f32>(Cs[o + 4u], Cs[o + 5u], Cs[o + 6u], Cs[o + 7u]);
    if (p._pad1 == 0xfffffffeu) {
        put4(lane, v);
    }
}

"""
    k = src.index("// Grouped tile order")
    return src[:k] + fn + src[k:]


# `emit` as 0289099 had it (EMIT without its comment): the text rows4 replaces.
COMMITTED_EMIT = EMIT[EMIT.index("fn emit"):].rstrip("\n")


def rows4():
    """The scratch epilogue writing whole 32-byte sectors per store instruction."""
    src = base()
    assert COMMITTED_EMIT in src
    src = src.replace(COMMITTED_EMIT, """fn emit(c: coop_mat16x16<f32, C>, sg: u32, half: u32, lane: u32, row: u32, col: u32, job: Job) {
    let s = (2u * sg + half) * 320u;
    coopStoreT(c, &Cs[s], 20u);
    workgroupBarrier();
    let cc = col + (lane % 4u) * 4u;
    for (var q = 0u; q < 2u; q += 1u) {
        let r = lane / 4u + 8u * q;
        let o = s + r * 20u + (lane % 4u) * 4u;
        put_row4_vec(row + r, cc, vec4<f32>(Cs[o], Cs[o + 1u], Cs[o + 2u], Cs[o + 3u]), job);
    }
}""")
    a = "var<workgroup> Cs: array<f32, 4096>;"
    assert a in src
    src = src.replace(a, "var<workgroup> Cs: array<f32, 5120>;")
    return ("// Variant rows4: shaders/gemm_coop.wgsl with each store instruction of the epilogue writing whole\n"
            "// 32-byte sectors: lane l puts row l / 4 (+ 8), columns 4 (l % 4).. (a row's 64 bytes from four\n"
            "// adjacent lanes), where the committed kernel's lane puts half a sector per instruction (row l / 2,\n"
            "// columns 8 (l % 2).. then + 4). Scratch rows padded to 20 floats against bank conflicts.\n" + src)


# The K loop's ablations (run 34) are written from the committed kernel (the pair epilogue, 0fa26e8):
# each removes one part of a slice's work, so what a slice costs splits into its parts. All leave C
# wrong (time them with bench-gemm's --no-verify).
K_LOOP = "    for (var k0 = 0u; k0 < p.k; k0 += BK) {\n"
K_LOOP_END = "    let r0 = row0 + (sg / 4u) * 64u;\n"


def k_loop(src):
    """The base kernel's K loop, as (before, loop, after)."""
    i, j = src.index(K_LOOP), src.index(K_LOOP_END)
    return src[:i], src[i:j], src[j:]


def ablation(name, doc, loop_edit):
    before, loop, after = k_loop(base())
    edited = loop_edit(loop)
    assert edited != loop, name
    return comment(f"Variant {name} (an ablation: C is wrong, time it with bench-gemm's --no-verify): {doc}") + before + edited + after


def nofrag_loop(loop):
    """The slice's second 16-deep step multiplies the first step's fragments: half the loads from
    workgroup memory, the same multiply-adds."""
    out, n = re.subn(r"(coopMultiplyAdd\(a3, b3, c33\);)\n        \}\n        \{\n(            let [ab][0-3] = coopLoadT[^\n]*\n){8}", "\\1\n", loop)
    assert n == 1
    return out


def noglobal_loop(loop):
    """No global loads after the first slice: every slice stores the first one's registers again."""
    out, n = re.subn(r"        if \(kn < p\.k\) \{\n(            r[ab][0-7] = fetch_[ab]\([^\n]*\n){12}        \}\n",
                     "        if (kn < p.k && kn == 0xffffffffu) {\n        }\n", loop)
    assert n == 1
    return out


def nobar_loop(loop):
    """No barriers in the K loop (lanes read fragments other lanes may not have stored)."""
    assert loop.count("workgroupBarrier();") == 2
    return loop.replace("workgroupBarrier();", "// (no barrier)")


def nobar1_loop(loop):
    """No barrier between a slice's stores to workgroup memory and its fragment loads."""
    assert loop.count("workgroupBarrier();") == 2
    return loop.replace("workgroupBarrier();", "// (no barrier)", 1)


def nobar2_loop(loop):
    """No barrier at the slice's end (the next slice's stores may overwrite fragments still read)."""
    assert loop.count("workgroupBarrier();") == 2
    i = loop.rindex("workgroupBarrier();")
    return loop[:i] + "// (no barrier)" + loop[i + len("workgroupBarrier();"):]


def early_loop(loop):
    """The next slice's global loads issued before the barrier after the stores, not after it: they
    are in flight while the workgroup waits there too. Correct (the registers are stored first)."""
    i = loop.index("        workgroupBarrier();\n        let kn = k0 + BK;\n")
    j = loop.index("        {\n            let a0 = coopLoadT")
    fetch = loop[i + len("        workgroupBarrier();\n"):j]
    assert fetch.count("fetch_") == 12
    return loop[:i] + fetch + "        workgroupBarrier();\n" + loop[j:]


def strips(name, pw, sub_rows, doc, bk=32):
    """The committed schedule on 128 invocations (4 subgroups of sub_rows x 64) that compute the
    128x256 tile as 256 / pw strips of 128 x pw in turn, each with its own K loop; fewer registers
    and less workgroup memory per workgroup than the committed kernel, so several share an SM."""
    n_cols = pw // 64
    assert (128 // sub_rows) * n_cols == 4
    src = base()
    sb, sa = pw + 8, bk + 8
    subs = [
        ("const BK: u32 = 32u;", f"const BK: u32 = {bk}u;"),
        ("const SA: u32 = 40u;", f"const SA: u32 = {sa}u;"),
        ("var<workgroup> As: array<vec4<f16>, 1280>;", f"var<workgroup> As: array<vec4<f16>, {128 * sa // 4}>;"),
        ("    As[(i / 8u) * (SA / 4u) + i % 8u] = v;", f"    As[(i / {bk // 4}u) * (SA / 4u) + i % {bk // 4}u] = v;"),
        ("const INVOCATIONS: u32 = 256u;", "const INVOCATIONS: u32 = 128u;"),
        ("const SB: u32 = 264u;", f"const SB: u32 = {sb}u;"),
        ("var<workgroup> Bs: array<vec4<f16>, 2112>;", f"var<workgroup> Bs: array<vec4<f16>, {bk * sb // 4}>;"),
        ("var<workgroup> Cs: array<f32, 4608>;", "var<workgroup> Cs: array<f32, 2304>;"),
        ("    Bs[(i / 64u) * (SB / 4u) + i % 64u] = v;", f"    Bs[(i / {pw // 4}u) * (SB / 4u) + i % {pw // 4}u] = v;"),
    ]
    for a, b in subs:
        assert src.count(a) == 1, a
        src = src.replace(a, b)
    before, _, after = k_loop(src)
    head = before[:before.index("fn compute_tile(w: u32, t: u32) {")]
    na, nb, i2 = bk // 4, bk * pw // 512, "        "
    fr = sub_rows // 16
    out = head + f"""fn compute_tile(w: u32, t: u32) {{
    let tile = grouped(tile_of(w, t), w);
    let job = tile.job;
    let row0 = tile.row0;
    let sg = t / 32u;
    let lane = t % 32u;
    let ar = (sg / {n_cols}u) * {sub_rows}u * SA;
    let bc = (sg % {n_cols}u) * 64u;
    for (var h = 0u; h < {256 // pw}u; h += 1u) {{
        let col0 = tile.col0 + h * {pw}u;
"""
    fa = lambda q, k: f"fetch_a(row0 + (t + {128 * q}u) / {bk // 4}u, {k}((t + {128 * q}u) % {bk // 4}u) * 4u, job)"
    fb = lambda q, k: f"fetch_b({k}(t + {128 * q}u) / {pw // 4}u, col0 + ((t + {128 * q}u) % {pw // 4}u) * 4u, job)"
    out += "".join(f"{i2}var ra{q} = {fa(q, '')};\n" for q in range(na))
    out += "".join(f"{i2}var rb{q} = {fb(q, '')};\n" for q in range(nb))
    out += "".join(f"{i2}var c{r}{c} = coop_mat16x16<f32, C>();\n" for r in range(fr) for c in range(4))
    out += f"{i2}for (var k0 = 0u; k0 < p.k; k0 += BK) {{\n"
    out += "".join(f"{i2}    put_a(t + {128 * q}u, ra{q});\n" for q in range(na))
    out += "".join(f"{i2}    put_b(t + {128 * q}u, rb{q});\n" for q in range(nb))
    out += f"{i2}    workgroupBarrier();\n{i2}    let kn = k0 + BK;\n{i2}    if (kn < p.k) {{\n"
    out += "".join(f"{i2}        ra{q} = {fa(q, 'kn + ')};\n" for q in range(na))
    out += "".join(f"{i2}        rb{q} = {fb(q, 'kn + ')};\n" for q in range(nb))
    out += f"{i2}    }}\n"
    for kk in range(0, bk, 16):
        out += f"{i2}    {{\n"
        out += "".join(f"{i2}        let a{r} = coopLoadT<coop_mat16x16<f16, A>>(&As[(ar + {16 * r}u * SA + {kk}u) / 4u], SA / 4u);\n" for r in range(fr))
        out += "".join(f"{i2}        let b{c} = coopLoadT<coop_mat16x16<f16, B>>(&Bs[({kk}u * SB + bc + {16 * c}u) / 4u], SB / 4u);\n" for c in range(4))
        out += "".join(f"{i2}        c{r}{c} = coopMultiplyAdd(a{r}, b{c}, c{r}{c});\n" for r in range(fr) for c in range(4))
        out += f"{i2}    }}\n"
    out += f"{i2}    workgroupBarrier();\n{i2}}}\n"
    out += f"{i2}let r0 = row0 + (sg / {n_cols}u) * {sub_rows}u;\n{i2}let cl = col0 + bc;\n"
    for r in range(fr):
        for c in (0, 2):
            out += f"{i2}emit_pair(c{r}{c}, c{r}{c + 1}, sg, lane, r0 + {16 * r}u, cl + {16 * c}u, job);\n"
    out += "    }\n    tile_done(job.counter, t);\n}\n"
    return comment(f"Variant {name}: {doc}") + out


def ahead2():
    """The committed kernel with each slice's global loads issued two slices before its stores
    instead of one: two register sets (the K loop unrolled by two, the sets alternating), so a
    load has two slices of multiply-adds to hide under (run 34: a slice's exposed global-load
    latency is 29% of the committed kernel's time). One workgroup per SM either way, so the 24
    extra registers cost occupancy nothing unless they spill."""
    before, loop, after = k_loop(base())
    i = loop.index("        if (kn < p.k) {\n")
    j = loop.index("        }\n", i) + len("        }\n")
    refetch = loop[i:j]
    assert refetch.count("fetch_") == 12
    puts = loop[len(K_LOOP):loop.index("        workgroupBarrier();\n")]
    assert puts.count("put_") == 12
    compute = loop[j:loop.rindex("        workgroupBarrier();")]
    first = before[before.index("    var ra0 = fetch_a("):before.index("    var c00 = ")]
    assert first.count("fetch_") == 12
    second = first.replace("var r", "var s")
    # The second set starts a slice later: k offsets `((t + i) % 8u) * 4u` -> `BK + ...`, and B rows
    # `(t + i) / 64u` -> `BK + ...`; only where the kernel has more than one slice (K is padded to
    # whole slices, so a load past the last one would leave B's buffer).
    second = re.sub(r", \(\(t \+ (\d+)u\) % 8u\) \* 4u, job\)", r", BK + ((t + \1u) % 8u) * 4u, job)", second)
    second = re.sub(r"fetch_b\(\(t \+ (\d+)u\) / 64u,", r"fetch_b(BK + (t + \1u) / 64u,", second)
    assert second.count("BK + ") == 12
    decl = "".join(l.replace(" = fetch", ": vec4<f16>;\n//").split("\n//")[0] + "\n" for l in second.splitlines())
    assign = "".join(l.replace("    var ", "        ") + "\n" for l in second.splitlines())
    pre = decl + "    if (BK < p.k) {\n" + assign + "    }\n"
    def half(regs, ahead, zero_else):
        body = puts.replace("ra", regs + "a").replace("rb", regs + "b")
        body += "        workgroupBarrier();\n"
        fetch = refetch.replace("kn", f"(k0 + {ahead}u * BK)").replace(" ra", " " + regs + "a").replace(" rb", " " + regs + "b")
        if zero_else:
            zeros = "".join(f"            {regs}{m}{q} = vec4<f16>();\n" for m, n in (("a", 4), ("b", 8)) for q in range(n))
            fetch = fetch[:-len("        }\n")] + "        } else {\n" + zeros + "        }\n"
        body += fetch + compute + "        workgroupBarrier();\n"
        return body
    # Cooperative operations need uniform control flow, and naga does not see the loop counter as
    # uniform, so the second slice of a pair always runs: past the last slice its registers hold
    # zeros (their fetch's else), which add nothing (one wasted slice where the count is odd).
    new_loop = "    for (var k0 = 0u; k0 < p.k; k0 += 2u * BK) {\n"
    new_loop += half("r", 2, False).replace("        let kn = k0 + BK;\n", "")
    new_loop += half("s", 3, True).replace("        let kn = k0 + BK;\n", "") + "    }\n"
    b = before.replace("    var c00 = ", pre + "    var c00 = ", 1)
    return comment("""Variant ahead2: shaders/gemm_coop.wgsl with each slice's global loads issued two slices ahead
(two register sets, the K loop unrolled by two), so each load hides under two slices of
multiply-adds instead of one.""") + b + new_loop + after



def from_global(name, pingpong, doc):
    """The committed kernel's tile, subgroups and epilogue with every operand fragment loaded by
    coopLoadT straight from the operand buffers (L1 / L2) instead of through workgroup memory: no
    stores to workgroup memory and no barrier in the K loop, so no subgroup waits for another's loads
    (run 34: the K loop's barriers expose each slice's global-load latency to all 8 subgroups at once,
    44% of the kernel's time with the global loads). A is read by the 4 subgroups of a tile row and B
    by the 2 of a tile column, from L1 where it holds them. `pingpong`: two fragment sets, the next
    16-deep step's loads issued before the current step's multiply-adds (the address clamped to the
    last step, so the loop body stays uniform). B is read from binding `b` (one window: every GEMM but
    fused mode's, whose packed B may take two), so these variants are for the tracked GEMM only
    (bench-gemm, the tests): fused mode with one of them as --kernel-wgsl coop=FILE reads past its first window
    where packed B exceeds it."""
    src = base()
    before, _, after = k_loop(src)
    head = before[:before.index("fn compute_tile(w: u32, t: u32) {")]
    # Neither workgroup operand stage nor the functions that fill it.
    for decl in ("var<workgroup> As: array<vec4<f16>, 1280>;\n", "var<workgroup> Bs: array<vec4<f16>, 2112>;\n"):
        assert head.count(decl) == 1, decl
        head = head.replace(decl, "")
    for fn in ("fetch_a", "fetch_b", "put_a", "put_b"):
        i = head.index(f"fn {fn}(")
        i = head.rindex("\n\n", 0, i) + 2
        j = head.index("\n}\n", i) + 3
        head = head[:i] + head[j:].lstrip("\n")
    assert "As[" not in head and "Bs[" not in head
    i2 = "        "
    out = head + """fn compute_tile(w: u32, t: u32) {
    let tile = grouped(tile_of(w, t), w);
    let job = tile.job;
    let row0 = tile.row0;
    let col0 = tile.col0;
    let sg = t / 32u;
    let lane = t % 32u;
    let bc = (sg % 4u) * 64u;
    // Strides in vec4s, and the vec4 index of the subgroup's first A element (row row0 + 64 (sg / 4),
    // k 0) and first B element (k 0, column col0 + bc); operand rows start at multiples of 32
    // elements (src/gemm.rs, `Padding`), so every fragment row is 16-byte aligned.
    let sa = p.lda / 4u;
    let sb = p.ldb / 4u;
    let ga = (job.a_off + (row0 + (sg / 4u) * 64u - job.a_row_base) * p.lda) >> 2u;
    let gb = (job.b_off + col0 + bc) >> 2u;
"""
    out += accumulators("    ")
    a_at = lambda i, k: f"ga + {k} / 4u + {16 * i}u * sa"
    b_at = lambda j, k: f"gb + ({k}) * sb + {4 * j}u"
    la = lambda i, k: f"coopLoadT<coop_mat16x16<f16, A>>(&a[{a_at(i, k)}], sa)"
    lb = lambda j, k: f"coopLoadT<coop_mat16x16<f16, B>>(&b[{b_at(j, k)}], sb)"
    mmas = lambda ind, x, y: "".join(f"{ind}c{i}{j} = coopMultiplyAdd({x}{i}, {y}{j}, c{i}{j});\n" for i in range(4) for j in range(4))
    if not pingpong:
        out += f"    for (var k0 = 0u; k0 < p.k; k0 += BK) {{\n"
        for s in (0, 1):
            k = f"(k0 + {16 * s}u)"
            out += step(i2, lambda i: a_at(i, k), "sa", lambda j: b_at(j, k), "sb", ("a", "b"))
        out += "    }\n"
    else:
        # K is padded to whole 32-deep slices, so the loop runs whole pairs of 16-deep steps; the last
        # pair's look-ahead reloads its own second step (clamped) and is never multiplied.
        out += "    let k_last = ((p.k + BK - 1u) / BK) * BK - 16u;\n"
        out += "".join(f"    var xa{i} = {la(i, '0u')};\n" for i in range(4))
        out += "".join(f"    var xb{j} = {lb(j, '0u')};\n" for j in range(4))
        out += f"    for (var k0 = 0u; k0 < p.k; k0 += BK) {{\n"
        out += "".join(f"{i2}let ya{i} = {la(i, '(k0 + 16u)')};\n" for i in range(4))
        out += "".join(f"{i2}let yb{j} = {lb(j, '(k0 + 16u)')};\n" for j in range(4))
        out += mmas(i2, "xa", "xb")
        out += f"{i2}let kn = min(k0 + BK, k_last);\n"
        out += "".join(f"{i2}xa{i} = {la(i, 'kn')};\n" for i in range(4))
        out += "".join(f"{i2}xb{j} = {lb(j, 'kn')};\n" for j in range(4))
        out += mmas(i2, "ya", "yb")
        out += "    }\n"
    return comment(f"Variant {name}: {doc}") + out + after


ABLATIONS = {
    "abl-nofrag": ("the second 16-deep step of each slice multiplies the first step's fragments:\nhalf the fragment loads from workgroup memory, every multiply-add.", nofrag_loop),
    "abl-noglobal": ("no global loads after the first slice: each slice stores the first\nslice's registers again (the loads' latency and bandwidth gone, every store and barrier kept).", noglobal_loop),
    "abl-nobar": ("no barriers in the K loop.", nobar_loop),
    "abl-nobar1": ("no barrier between a slice's stores to workgroup memory and its fragment loads.", nobar1_loop),
    "abl-nobar2": ("no barrier at a slice's end (before the next slice's stores).", nobar2_loop),
    "abl-inner": ("no global loads after the first slice and no barriers in the K loop:\nwhat is left is the slice's stores to and fragment loads from workgroup memory and its\nmultiply-adds.", lambda l: nobar_loop(noglobal_loop(l))),
}


ENTRY = re.compile(
    r"@compute @workgroup_size\((\d+)\)\n"
    r"fn main\(@builtin\(workgroup_id\) wid: vec3<u32>, @builtin\(local_invocation_index\) t: u32\) \{\n"
    r"    let w = wid\.x \+ wid\.y \* p\.dispatch_x;\n"
    r"    if \(w >= p\.total_wg\) \{\n        spare_wg\(t\);\n        return;\n    \}\n"
)


def tile_entry(src):
    """Kernels written before the persistent grid (run 29) have their own entry point; since then
    shaders/gemm/jobs.wgsl has it and a kernel defines INVOCATIONS and `compute_tile(w, t)`. Rewrites
    the former into the latter (a no-op on a kernel that already is)."""
    out = ENTRY.sub(lambda m: f"const INVOCATIONS: u32 = {m.group(1)}u;\n\nfn compute_tile(w: u32, t: u32) {{\n", src)
    assert "fn compute_tile(w: u32, t: u32)" in out and "fn main(" not in out, "an entry point tile_entry cannot rewrite"
    return out


def main():
    """`gen.py NAME...` writes those variants (all of the list below without names; `--all` adds the
    ones NVIDIA's compiler rejected in run 7). Each generator asserts the text it rewrites, so a
    variant written from a kernel other than its base fails loudly: set GEN_BASE to that kernel
    (`git show REV:shaders/gemm_coop.wgsl > base.wgsl`). Bases: h4 and alias 8cee94e~1; db2-h4 and
    half16-h4 stand alone; noepi, nobarrier, noglobal and rows4 0289099 (before the pair epilogue);
    the K loop's ablations (abl-*), early, halves, halves16, quarters, ahead2, wide and wide2 (by name only)
    the committed kernel."""
    gens = {
        "noepi": noepi,
        "nobarrier": nobarrier,
        "noglobal": noglobal,
        "rows4": rows4,
        "h4": h4,
        "alias": alias,
        "half16-h4": lambda: half16x("half16-h4", "h4", """Variant half16-h4: half16 (128 invocations, the tile as two 128x128 halves, 16-deep slices
double-buffered, loads two slices ahead; two workgroups per SM) with workgroup memory typed
vec4<f16>: 8-byte loads and stores, no vec4<u32>, no second variables on the operand bindings.
Grouped tile order, as committed."""),
        "db2-h4": lambda: db2x("db2-h4", "h4", True, """Variant db2-h4: db2's schedule (16-deep slices double-buffered, one barrier per slice, loads two
slices ahead) with workgroup memory typed vec4<f16>: 8-byte loads and stores, fragments loaded
through vec4<f16> pointers. No second variables on the operand bindings, no vec4<u32>. Grouped
tile order, as committed."""),
    }
    gens["halves"] = lambda: strips("halves", 128, 64, """shaders/gemm_coop.wgsl's schedule (32-deep slices through one buffer, two
barriers per slice, the next slice prefetched into registers, 64x64 per subgroup) on 128
invocations that compute the 128x256 tile as two 128x128 halves in turn: half the workgroup memory
and registers of a workgroup, so two share an SM and each one's barriers and load waits can be the
other's multiply-adds.""")
    gens["ahead2"] = ahead2
    gens["wide"] = wide
    gens["wide2"] = wide2
    gens["global"] = lambda: from_global("global", False, """shaders/gemm_coop.wgsl's tile, subgroups and epilogue with every operand
fragment loaded straight from the operand buffers (no workgroup stage, no barrier in the K loop),
two 16-deep steps per iteration.""")
    gens["global-pp"] = lambda: from_global("global-pp", True, """global with two fragment sets in turn: each 16-deep step's fragments
are loaded while the previous step's multiply-adds run.""")
    gens["halves16"] = lambda: strips("halves16", 128, 64, """shaders/gemm_coop.wgsl's schedule on 128 invocations (4 subgroups of
64x64, as committed) computing the 128x256 tile as two 128x128 halves in turn, through 16-deep slices
(half the prefetch registers of halves, 19.3 KiB of workgroup memory), so that two workgroups fit on an
SM where halves (245 registers, 28 KiB) got one: each one's barriers and load waits the other's
multiply-adds.""", bk=16)
    gens["quarters"] = lambda: strips("quarters", 64, 32, """shaders/gemm_coop.wgsl's schedule on 128 invocations (4 subgroups of
32x64) computing the 128x256 tile as four 128x64 strips in turn, each with its own K loop (A's slice
loaded again per strip, from L2): about half the committed kernel's registers per invocation and a
quarter of its workgroup memory's B stage, so three or four workgroups can share an SM and one's
barriers and load waits be the others' multiply-adds.""")
    gens["early"] = lambda: comment("""Variant early: shaders/gemm_coop.wgsl with the next slice's global loads issued right after
the slice's stores to workgroup memory, before the barrier that follows them (the committed kernel
issues them after it): the loads are in flight while the workgroup waits at the barrier too.""") + "".join(
        (lambda b, l, a: (b, early_loop(l), a))(*k_loop(base())))
    for name, (doc, edit) in ABLATIONS.items():
        gens[name] = lambda name=name, doc=doc, edit=edit: ablation(name, doc, edit)
    on_demand = set(ABLATIONS) | {"early", "halves", "halves16", "quarters", "ahead2", "global", "global-pp", "wide", "wide2"}
    names = [a for a in sys.argv[1:] if not a.startswith("--")] or [n for n in gens if n not in on_demand]
    unknown = [n for n in names if n not in gens]
    if unknown:
        sys.exit(f"unknown variant(s) {unknown}; known: {sorted(gens)}")
    files = {n: gens[n]() for n in names}
    if "--all" in sys.argv[1:]:
        files.update({"vec": vec_single(False), "half": half(), "half16": half16()})
        for d in (1, 2):
            name, s = db(d, False)
            files[name] = s
        name, s = db(2, True)
        files[name] = s
    for name, s in files.items():
        with open(os.path.join(HERE, f"{name}.wgsl"), "w") as f:
            f.write(tile_entry(s))
    print(" ".join(sorted(files)))


if __name__ == "__main__":
    main()
