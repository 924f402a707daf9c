#!/bin/sh
# Tests the tools natively, then builds {{component}} for the sandbox
# (wasm32-wasip2, release) and copies it here, where the other languages'
# builds put theirs.
set -eu
cd "$(dirname "$0")"
cargo test --quiet
cargo build --quiet --target wasm32-wasip2 --release
cp "${CARGO_TARGET_DIR:-target}/wasm32-wasip2/release/{{component}}" {{component}}
echo "built {{component}}"
