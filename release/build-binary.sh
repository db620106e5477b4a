#!/usr/bin/env bash
# Builds the `moonbox` binary a release ships, and prints its path:
#
#     bash release/build-binary.sh PROFILE    (dist for a release, dev in CI)
#
# It is a static-pie executable for x86_64-unknown-linux-musl: no dynamic
# loader, no shared library, the address space still randomised. Its
# relative relocations are packed (DT_RELR, which musl's start-up code
# applies), so the process relocates itself from a 17 KB table instead of
# a 1.5 MB one. BENCHMARKS.md ("Release binary") has what each of these
# takes off a process start against the glibc build; docs/releases.md says
# why the serving commands lose nothing by it.
#
# Needs the rustup target x86_64-unknown-linux-musl and a C compiler for it
# (Debian's musl-tools: musl-gcc, for ring's C and assembly).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
profile=${1:?usage: release/build-binary.sh PROFILE}
triple=x86_64-unknown-linux-musl
# The link flag goes to the binary's own link only (`cargo rustc`), so the
# dependencies' builds are shared with any other build of this target and
# a RUSTFLAGS in the environment (CI's -D warnings) does not drop it.
cargo rustc --locked -q --profile "$profile" --target "$triple" -p moonbox-cli --bin moonbox \
  -- -C link-arg=-Wl,-z,pack-relative-relocs >&2
dir=$([ "$profile" = dev ] && echo debug || echo "$profile")
echo "${CARGO_TARGET_DIR:-$PWD/target}/$triple/$dir/moonbox"
