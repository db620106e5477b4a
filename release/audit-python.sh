#!/usr/bin/env bash
# Checks every Python tree the build and the tests install against PyPI's
# vulnerability data (pip-audit, which asks PyPI's JSON API): the wheel's
# venv with its test and type-check tools (target/python/venv), the MCP
# tests' venv (target/mcp-venv) and the release tools. A tree that is
# missing is built by the step that owns it, so this fails rather than
# skip it. Exits non-zero naming each vulnerable package.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
target=${CARGO_TARGET_DIR:-$PWD/target}
tools=$(bash release/tools.sh)
status=0
for venv in "$target/python/venv" "$target/mcp-venv" "$target/release-tools"; do
  site=$(ls -d "$venv"/lib/python3*/site-packages 2>/dev/null | head -n 1)
  if [ -z "$site" ]; then
    echo "audit-python: $venv is missing (python-package, mcp-test and dist make them)" >&2
    exit 1
  fi
  echo "==> audit-python: ${venv#"$PWD"/}"
  # --strict: a package that could not be audited fails the check, so that
  # an unreachable advisory service never passes for a clean tree.
  "$tools/pip-audit" --strict --progress-spinner off --path "$site" || status=1
done
exit $status
