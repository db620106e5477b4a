#!/usr/bin/env bash
# Runs the shared case list (runtimes/cases.json) on every host of the
# component and checks that each meets the expectations and that all of
# them printed the same results: the Rust host (this repository's crate),
# the native Python and Node packages (packages/python, packages/node: the
# crate through pyo3 and napi-rs), the portable hosts (the component on
# wasmtime-py and on jco: runtimes/python-wasmtime, runtimes/node-jco), each
# through its public API, and the wasmtime CLI with the capabilities
# composed in (when `wasmtime` is on PATH; see docs/other-runtimes.md).
#
# Usage: run.sh [--require-all]
#   --require-all   fail, rather than skip, when a host's tools are missing
#                   (CI uses it).
#
# Results go to target/runtimes/HOST.jsonl. Installs go to target/python/
# and target/python-wasmtime/ (wheels and venvs), and the node_modules of
# packages/node and runtimes/node-jco.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

require_all=0
case "${1:-}" in
  "") ;;
  --require-all) require_all=1 ;;
  *) echo "usage: runtimes/run.sh [--require-all]" >&2; exit 2 ;;
esac

out=target/runtimes
mkdir -p "$out"
rm -f "$out"/*.jsonl
hosts=()

echo "==> the checker's own tests"
python3 runtimes/test_check.py -q

echo "==> rust (moonbox crate)"
# Built with the workspace's tests (one feature set for every step, see the
# justfile's `build`), so a tree the tests built compiles nothing here.
cargo test -q --workspace --no-run
target/debug/cases > "$out/rust.jsonl"
hosts+=("rust=$out/rust.jsonl")

echo "==> python (the moonbox wheel: the crate through pyo3)"
# packages/python/check.sh, which runs before this in CI, leaves the wheel
# installed; build it when it is missing.
[ -x target/python/venv/bin/moonbox ] || packages/python/build.sh
target/python/venv/bin/python runtimes/run_cases.py runtimes/cases.json > "$out/python.jsonl"
hosts+=("python=$out/python.jsonl")

echo "==> node (the moonbox npm package: the crate through napi-rs)"
(
  cd packages/node
  # packages/node/check.sh leaves the addon built; build it when missing.
  if ! ls ./*.node >/dev/null 2>&1; then
    npm ci --silent --no-audit --no-fund >&2
    npm run --silent build >&2
  fi
  node test/cases.mjs ../../runtimes/cases.json
) > "$out/node.jsonl"
hosts+=("node=$out/node.jsonl")

echo "==> python-wasmtime (the portable host: the component on wasmtime-py)"
runtimes/python-wasmtime/build.sh
target/python-wasmtime/venv/bin/python runtimes/run_cases.py runtimes/cases.json > "$out/python-wasmtime.jsonl"
hosts+=("python-wasmtime=$out/python-wasmtime.jsonl")

echo "==> node-jco (the portable host: the component on jco)"
(
  cd runtimes/node-jco
  # Only the result lines go to the results file.
  npm ci --silent --no-audit --no-fund >&2
  npm run --silent build >&2
  npm run --silent cases -- ../cases.json
) > "$out/node-jco.jsonl"
hosts+=("node-jco=$out/node-jco.jsonl")

if command -v wasmtime >/dev/null; then
  echo "==> wasmtime CLI (composed)"
  runtimes/wasmtime-cli/run.sh "$out/wasmtime-cli.jsonl"
  hosts+=("wasmtime=$out/wasmtime-cli.jsonl")
else
  echo "==> wasmtime CLI: skipped (needs \`wasmtime\` on PATH; see docs/other-runtimes.md)"
  if [ "$require_all" = 1 ]; then
    echo "run.sh: --require-all: the wasmtime CLI host cannot run" >&2
    exit 1
  fi
fi

echo
python3 runtimes/check.py runtimes/cases.json "${hosts[@]}"
