#!/usr/bin/env bash
# The Python package as a user gets it: build the wheel, install it into a
# fresh virtualenv, run the README's first example from an empty
# directory, then the package's tests against the installed package.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

packages/python/build.sh
python=$PWD/target/python/venv/bin/python

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

echo "==> the package's tests"
# The src layout keeps the source off sys.path: the tests import the
# installed wheel.
"$python" -m pytest -q -p no:cacheprovider packages/python/tests
