#!/usr/bin/env bash
# Builds the portable Python host (the component on wasmtime-py) into a
# wheel and installs it into a fresh virtualenv at target/python-wasmtime/venv,
# for runtimes/run.sh to run the shared case list with. The wheel carries
# host/component/moonbox.wasm; wasmtime comes from PyPI.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

out=target/python-wasmtime
rm -rf "$out/dist" "$out/venv"
python3 -m venv "$out/venv"
pip=("$out/venv/bin/pip" --quiet --disable-pip-version-check)
"${pip[@]}" wheel --no-deps runtimes/python-wasmtime -w "$out/dist"
wheel=$(ls "$out"/dist/moonbox_portable-*.whl)
"${pip[@]}" install "$wheel"
echo "built $wheel; installed into $out/venv"
