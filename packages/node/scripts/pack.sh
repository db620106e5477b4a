#!/usr/bin/env bash
# Packs the npm package as a release publishes it, from the addon that
# scripts/build.mjs built: the platform package (npm/linux-x64-gnu with the
# addon in it) and the main package, whose packed package.json names each
# platform package as an optional dependency at its version (npm installs
# the one whose os, cpu and libc match). The checkout's package.json names
# none, so that `npm ci` here never asks the registry for a package that
# only a release publishes.
#
#     bash scripts/pack.sh OUT_DIR     (prints the two tarballs' paths)
set -euo pipefail
if [ $# -ne 1 ]; then
  echo "usage: $0 OUT_DIR" >&2
  exit 2
fi
mkdir -p "$1"
out=$(cd "$1" && pwd)
cd "$(dirname "${BASH_SOURCE[0]}")/.."
addon=moonbox.linux-x64-gnu.node
[ -f "$addon" ] || { echo "pack: $addon is missing; run \`npm run build\` first" >&2; exit 1; }
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
cp -r npm/linux-x64-gnu "$stage/platform"
cp "$addon" "$stage/platform/"
mkdir "$stage/main"
cp -r bin lib README.md "$stage/main/"
node -e '
  const fs = require("fs");
  const [src, dest, ...platforms] = process.argv.slice(1);
  const manifest = JSON.parse(fs.readFileSync(src, "utf8"));
  delete manifest.devDependencies;
  manifest.optionalDependencies = Object.fromEntries(platforms.map((p) => {
    const m = JSON.parse(fs.readFileSync(p, "utf8"));
    return [m.name, m.version];
  }));
  fs.writeFileSync(dest, JSON.stringify(manifest, null, 2) + "\n");
' package.json "$stage/main/package.json" npm/*/package.json
(cd "$stage/platform" && echo "$out/$(npm pack --silent --pack-destination "$out" | tail -n 1)")
(cd "$stage/main" && echo "$out/$(npm pack --silent --ignore-scripts --pack-destination "$out" | tail -n 1)")
