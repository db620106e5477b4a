#!/usr/bin/env bash
# The Node package as a user gets it: install its development
# dependencies, build the addon, run the package's tests and the type
# check, then pack it as a release does (scripts/pack.sh: the package and
# its platform package with the addon), install both tarballs into a fresh
# directory, offline, and run the README's first example and `npx moonbox
# run -` there. Nothing is published.
#
# MOONBOX_NODE_PROFILE (dev, the default, or release) and CARGO_TARGET_DIR
# are passed to the build.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
root=$(cd ../.. && pwd)
node --version

npm ci --silent --no-audit --no-fund
npm run --silent build

echo "==> the package's tests"
npm test --silent

echo "==> the type check"
npm run --silent typecheck

echo "==> npm pack (the package and its platform package), installed into a fresh directory"
dist=${CARGO_TARGET_DIR:-$root/target}/node
rm -rf "$dist" && mkdir -p "$dist"
mapfile -t tarballs < <(bash scripts/pack.sh "$dist")
tarball=${tarballs[1]}
fresh=$(mktemp -d)
trap 'rm -rf "$fresh"' EXIT
cd "$fresh"
npm init -y >/dev/null
# The platform package first: the package's optional dependency on it is
# then met by the tarball, with no registry.
npm install --silent --no-audit --no-fund --offline "${tarballs[@]}"
[ -f node_modules/moonbox-linux-x64-gnu/moonbox.linux-x64-gnu.node ]
[ ! -e node_modules/moonbox/moonbox.linux-x64-gnu.node ]
# The README's first js block.
node -e '
  const text = require("fs").readFileSync(process.argv[1], "utf8");
  process.stdout.write(text.match(/```js\n([\s\S]*?)```/)[1]);
' "$root/packages/node/README.md" > example.mjs
node example.mjs | tee out.txt
grep -qF '[2,{"a":2.0}]' out.txt
printf 'print("hi") return 1, {a = 2}' | npx --no-install moonbox run - | tee cli.txt
[ "$(cat cli.txt)" = $'hi\n[1,{"a":2}]' ]
echo "installed ${tarballs[*]} and ran the README example"
