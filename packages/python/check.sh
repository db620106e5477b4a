#!/usr/bin/env bash
# The Python package as a user gets it: build the wheel with maturin,
# install it into a fresh virtualenv, run the README's first example from
# an empty directory, type-check the package and a program that uses it
# (mypy --strict, against the installed wheel), then run the package's
# tests against the installed package.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

packages/python/build.sh
venv=$PWD/target/python/venv
python=$venv/bin/python

echo "==> the README's first example, in an empty directory"
example=$(mktemp -d)
trap 'rm -rf "$example"' EXIT
# The README's first python block.
"$python" - packages/python/README.md > "$example/example.py" <<'EOF_PY'
import re, sys
text = open(sys.argv[1], encoding="utf-8").read()
print(re.search(r"```python\n(.*?)```", text, re.S).group(1))
EOF_PY
(cd "$example" && "$python" example.py) | tee "$example/out.txt"
grep -qx "\[42, 1.5\]" "$example/out.txt"
grep -qx "hello" "$example/out.txt"

echo "==> mypy --strict: the package's source, and a program against the installed wheel"
"$venv/bin/mypy" --strict --no-incremental --cache-dir=/dev/null packages/python/python/moonbox
(cd "$example" && "$venv/bin/mypy" --strict --no-incremental --cache-dir=/dev/null "$OLDPWD/packages/python/tests/test_typed_usage.py")

echo "==> the package's tests"
# The source layout keeps the Python layer off sys.path: the tests import
# the installed wheel.
"$python" -m pytest -q -p no:cacheprovider packages/python/tests
