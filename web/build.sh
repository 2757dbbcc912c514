#!/usr/bin/env bash
# Builds the page into web/dist: the t3-web crate for wasm32, then wasm-bindgen's glue (--target web).
# Needs: rustup target add wasm32-unknown-unknown; cargo install wasm-bindgen-cli --version 0.2.130.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --target wasm32-unknown-unknown -p t3-web
rm -rf web/dist
# The name section (function names for a debugger, about a sixth of the module) left out.
wasm-bindgen --target web --remove-name-section --out-dir web/dist/pkg target/wasm32-unknown-unknown/release/t3_web.wasm
cp web/index.html web/main.js web/viewer.js web/style.css web/dist/
ls -l web/dist/pkg/t3_web_bg.wasm
