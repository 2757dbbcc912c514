#!/usr/bin/env bash
# The page test, as CI runs it on a fresh machine: installs what it needs (Debian's chromium, the wasm32
# target, wasm-bindgen-cli at the version Cargo.lock pins, puppeteer-core from the lock), lints the
# wasm build, builds the page (web/build.sh) and the native CLI (whose results file the viewer is tested
# on) and runs web/test/page.test.mjs, which saves docs/web.png. Installing needs root (apt-get).
set -euo pipefail
cd "$(dirname "$0")/../.."
if ! command -v chromium >/dev/null; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update
  apt-get install -y chromium
fi
rustup target add wasm32-unknown-unknown
# The CLI must be the exact version of the wasm-bindgen crate in Cargo.lock (its glue is versioned).
want=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/[^0-9.]/, ""); print }' Cargo.lock)
if [ "$(wasm-bindgen --version 2>/dev/null | cut -d' ' -f2)" != "$want" ]; then
  # --locked pins the CLI's own dependencies; where the registry lacks one of them, resolve afresh.
  cargo install wasm-bindgen-cli --version "$want" --locked ||
    cargo install wasm-bindgen-cli --version "$want"
fi
cargo clippy --release --target wasm32-unknown-unknown -p t3-web -- -D warnings
web/build.sh
cargo build --release --bin t3
(cd web/test && npm ci --no-audit --no-fund)
node web/test/page.test.mjs
