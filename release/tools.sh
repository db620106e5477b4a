#!/usr/bin/env bash
# Prints the bin directory of the release tools' virtualenv
# (target/release-tools), creating it from release/requirements.txt when it
# is missing or the requirements changed.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
venv=${CARGO_TARGET_DIR:-$PWD/target}/release-tools
stamp=$venv/requirements.txt
if ! cmp -s release/requirements.txt "$stamp"; then
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check -r release/requirements.txt >&2
  cp release/requirements.txt "$stamp"
fi
echo "$venv/bin"
