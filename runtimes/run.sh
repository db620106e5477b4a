#!/usr/bin/env bash
# Runs the shared case list (runtimes/cases.json) on every host of the
# component and checks that each meets the expectations and that all of
# them printed the same results: the Rust host (this repository's crate),
# Node.js through jco, Python through wasmtime-py, and the wasmtime CLI
# with the capabilities composed in (when `wasmtime` and `wac` are on
# PATH; see docs/other-runtimes.md).
#
# Usage: run.sh [--require-all]
#   --require-all   fail, rather than skip, when a host's tools are missing
#                   (CI uses it).
#
# Results go to target/runtimes/HOST.jsonl. Installs go to
# target/runtimes/ (a Python venv) and runtimes/node/node_modules.
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
cargo run -q -p moonbox-tests --bin cases > "$out/rust.jsonl"
hosts+=("rust=$out/rust.jsonl")

echo "==> python (wasmtime-py)"
if [ ! -x "$out/venv/bin/python" ]; then
  python3 -m venv "$out/venv"
fi
"$out/venv/bin/pip" install --quiet --disable-pip-version-check -r runtimes/python/requirements.txt
"$out/venv/bin/python" runtimes/python/run.py > "$out/python.jsonl"
hosts+=("python=$out/python.jsonl")

echo "==> node (jco)"
(
  cd runtimes/node
  npm ci --silent --no-audit --no-fund
  npm run --silent build
  npm run --silent cases
) > "$out/node.jsonl"
hosts+=("node=$out/node.jsonl")

if command -v wasmtime >/dev/null && command -v wac >/dev/null; then
  echo "==> wasmtime CLI (composed)"
  runtimes/wasmtime-cli/run.sh "$out/wasmtime-cli.jsonl"
  hosts+=("wasmtime=$out/wasmtime-cli.jsonl")
else
  echo "==> wasmtime CLI: skipped (needs \`wasmtime\` and \`wac\` on PATH; see docs/other-runtimes.md)"
  if [ "$require_all" = 1 ]; then
    echo "run.sh: --require-all: the wasmtime CLI host cannot run" >&2
    exit 1
  fi
fi

echo
python3 runtimes/check.py runtimes/cases.json "${hosts[@]}"
