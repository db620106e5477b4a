#!/usr/bin/env bash
# Builds the wheel (pip wheel) into target/python/dist and installs it,
# with pytest, into a fresh virtualenv at target/python/venv: what a user
# gets from `pip install moonbox`, without publishing anything. The wheel
# carries host/component/moonbox.wasm; wasmtime comes from PyPI.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

out=target/python
rm -rf "$out/dist" "$out/venv"
python3 -m venv "$out/venv"
pip=("$out/venv/bin/pip" --quiet --disable-pip-version-check)
"${pip[@]}" wheel --no-deps packages/python -w "$out/dist"
wheel=$(ls "$out"/dist/moonbox-*.whl)
"${pip[@]}" install "$wheel" "pytest==8.3.4"
echo "built $wheel; installed into $out/venv"
