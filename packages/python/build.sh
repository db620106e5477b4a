#!/usr/bin/env bash
# Builds the wheel with maturin into target/python/dist and installs it,
# with pytest and mypy, into a fresh virtualenv at target/python/venv: what
# a user gets from `pip install moonbox`, without publishing anything.
#
# MOONBOX_PYTHON_PROFILE picks the cargo profile: `dev` (the default: the
# workspace's test build has compiled most of it already) or `release` (the
# benchmark's, and what a published wheel is).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

profile=${MOONBOX_PYTHON_PROFILE:-dev}
out=target/python
rm -rf "$out/dist" "$out/venv"
python3 -m venv "$out/venv"
pip=("$out/venv/bin/pip" --quiet --disable-pip-version-check)
# maturin at the release tools' pin (release/requirements.txt), so that the
# tests' wheel and a release's are built alike.
maturin=$(grep -E '^maturin==' release/requirements.txt)
"${pip[@]}" install "$maturin" "pytest==8.3.4" "mypy==1.18.2"
# maturin prints its progress on stderr; keep only the wheel's name.
"$out/venv/bin/maturin" build --quiet --profile "$profile" --manifest-path packages/python/Cargo.toml \
  --out "$out/dist" >&2
wheel=$(ls "$out"/dist/moonbox-*.whl)
"${pip[@]}" install "$wheel"
echo "built $wheel; installed into $out/venv"
