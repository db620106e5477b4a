#!/usr/bin/env bash
# Builds every artifact of a release into dist/, with SHA-256 checksums:
#
#   moonbox-V-x86_64-unknown-linux-musl.tar.gz  the `moonbox` binary (static), README, licences
#   moonbox-V-cp310-abi3-*.whl                  the Python package (its `moonbox` command included)
#   moonbox-V.tgz, moonbox-linux-x64-gnu-V.tgz  the npm package and its platform package
#   moonbox{,-service,-mcp,-serve,-cli}-V.crate the crates, in dependency order
#   moonbox-V-image.tar                         the container image (podman save, docker-archive:
#                                               the OCI format has no HEALTHCHECK)
#   SHA256SUMS
#
# then release/check-dist.sh installs each into a clean place and runs it.
# Nothing is published: publishing is uploading these files.
#
#     bash release/dist.sh        (just dist)
#
# MOONBOX_DIST_PROFILE picks the cargo profile of the binary, the wheel and
# the addon: `dist` (the default, what a release ships: stripped, thin LTO;
# about 7 minutes a build on 2 cores) or `dev` (CI's: the same artifacts
# and checks, unoptimised).
# The binary is static, for musl (release/build-binary.sh); the wheel and
# the addon are extensions that glibc processes load.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD

profile=${MOONBOX_DIST_PROFILE:-dist}
if [[ ! $profile =~ ^[A-Za-z0-9_-]+$ ]]; then
  echo "dist: MOONBOX_DIST_PROFILE must be a cargo profile name, got '$profile'" >&2
  exit 2
fi
target=${CARGO_TARGET_DIR:-$root/target}
python3 release/version.py --check
version=$(python3 release/version.py)
triple=x86_64-unknown-linux-musl
out=$root/dist
stage=$target/dist-stage
rm -rf "$out" "$stage"
mkdir -p "$out" "$stage"
step() { echo "==> dist: $*"; }

step "the binary ($profile profile, $triple)"
binary=$(bash release/build-binary.sh "$profile")
bin_dir=$stage/moonbox-$version-$triple
mkdir -p "$bin_dir"
cp "$binary" LICENSE LICENSE-LUA README.md CHANGELOG.md "$bin_dir/"
tar -C "$stage" -czf "$out/moonbox-$version-$triple.tar.gz" "moonbox-$version-$triple"

step "the Python wheel"
tools=$(bash release/tools.sh)
"$tools/maturin" build --quiet --profile "$profile" --manifest-path packages/python/Cargo.toml --out "$out" >&2

step "the npm packages"
(cd packages/node && npm ci --silent --no-audit --no-fund && MOONBOX_NODE_PROFILE=$profile npm run --silent build)
bash packages/node/scripts/pack.sh "$out" >/dev/null

step "the crates"
crates=(moonbox moonbox-service moonbox-mcp moonbox-serve moonbox-cli)
# Packed together, so that each one's path dependencies on the others
# resolve to the packed ones. The host crate's own build from its package
# is CI's package-check; release/check-dist.sh installs the command from
# the packed sources.
cargo package --locked -q --no-verify "${crates[@]/#/-p}"
for crate in "${crates[@]}"; do
  cp "$target/package/$crate-$version.crate" "$out/"
done

step "the container image"
bash release/image-rootfs.sh "$binary" "$stage/rootfs" >&2
podman build -q --format docker -f Containerfile -t "moonbox:$version" "$stage/rootfs" >/dev/null
podman save -q --format docker-archive -o "$out/moonbox-$version-image.tar" "moonbox:$version"

step "checksums"
(cd "$out" && sha256sum -- * > SHA256SUMS)
(cd "$out" && ls -l --block-size=K | tail -n +2 | awk '{print "    " $5 "\t" $9}')
bash release/check-dist.sh "$out"
